"""Network addresses of the fleet verifier: ``HOST:PORT`` checked before anything starts, why
one cannot be bound said as it is, and whether an OTLP endpoint is the verifier's own address.

gRPC core answers a port it cannot bind with "Failed to bind" and a log line of its own; the
verifier binds a plain socket first (``bind_problem``) so its message names the real cause: the
address in use, no such address on this machine, a privileged port, an unknown host.
"""

from __future__ import annotations

import errno
import re
import socket
from urllib.parse import urlsplit

from groundplane_otel._echo import capped

__all__ = [
    "bind_problem",
    "endpoint_problem",
    "is_own_address",
    "parse_address",
    "split_endpoint",
]

_PORT = re.compile(r"[0-9]{1,5}")
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_WHY = {
    errno.EADDRINUSE: "the address is in use (another process listens on it)",
    errno.EADDRNOTAVAIL: "no such address on this machine",
    errno.EACCES: "permission denied (a port below 1024 needs privileges)",
}


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets: ``[::]:4317``) as host and port, or a
    ValueError saying what is wrong with it."""
    host, colon, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
    if not colon or not host or (":" in host and not bracketed):
        problem = "must be HOST:PORT (an IPv6 host in brackets: [::1]:4317)"
    elif not _PORT.fullmatch(port) or int(port) > 65535:
        problem = "the port must be a whole number from 0 to 65535"
    else:
        return host, int(port)
    raise ValueError(f"{problem}, got {capped(text, 80)!r}")


def bind_problem(host: str, port: int) -> str | None:
    """Why no socket can listen on ``host:port`` (as a server binds it, ``SO_REUSEADDR`` on),
    or None when one can (the probe is closed again at once)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        return f"unknown host {capped(host, 80)!r} ({getattr(exc, 'strerror', None) or exc})"
    problem = None
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as exc:
                problem = problem or _WHY.get(exc.errno or 0, exc.strerror or str(exc))
                continue
        return None  # one address that binds is enough (gRPC binds what it can)
    return problem or "no address to bind"


def split_endpoint(endpoint: str) -> tuple[str, int | None]:
    """An OTLP/gRPC endpoint (``http://host:port``, ``https://…`` or ``host:port``) as host
    and port (None when it names none)."""
    parsed = urlsplit(endpoint if "//" in endpoint else f"//{endpoint}")
    try:
        port = parsed.port
    except ValueError:
        port = None
    return parsed.hostname or "", port


def endpoint_problem(endpoint: str) -> str | None:
    """What is wrong with an OTLP/gRPC endpoint (``http://HOST:PORT``, ``https://…`` or
    ``HOST:PORT``), or None."""
    try:
        parsed = urlsplit(endpoint if "//" in endpoint else f"//{endpoint}")
    except ValueError as exc:
        return f"not a URL ({exc})"
    try:
        port = parsed.port
    except ValueError:
        return "the port must be a whole number from 0 to 65535"
    if parsed.scheme not in ("", "http", "https"):
        return f"the scheme must be http or https, got {capped(parsed.scheme, 20)!r}"
    host = parsed.hostname or ""
    if not host or any(character.isspace() for character in host):
        return "no host (http://HOST:PORT)"
    if port is None and parsed.netloc.endswith(":"):
        return "the port must be a whole number from 0 to 65535"
    return None


def is_own_address(endpoint: str, listen_host: str, listen_port: int) -> bool:
    """Whether ``endpoint`` reaches the verifier listening on ``listen_host:listen_port``: the
    same port on one of the listening host's addresses (any address of this machine when it
    listens on all of them)."""
    host, port = split_endpoint(endpoint)
    if port != listen_port:
        return False
    wildcard = listen_host in _WILDCARDS
    own = set() if wildcard else _addresses(listen_host)
    for address in _addresses(host):
        if address in _WILDCARDS or address in own or (wildcard and _is_local(address)):
            return True
    return False


def _addresses(host: str) -> set[str]:
    """The IP addresses ``host`` resolves to (none when it does not)."""
    try:
        found = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return set()
    return {str(where[0]) for *_, where in found}


def _is_local(address: str) -> bool:
    """Whether ``address`` is one of this machine's (a socket can bind to it)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True
