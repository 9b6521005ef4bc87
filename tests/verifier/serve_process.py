"""``groundplane-otel serve`` as a real process for the tests: started with a clean OTLP
environment, its start-up lines read, its threads listed, a signal sent to one of them."""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import socket
import subprocess
import sys
from pathlib import Path

__all__ = [
    "POLICY",
    "Started",
    "free_port",
    "run_serve",
    "start_serve",
    "tgkill",
    "unblocked_threads",
]

POLICY = str(Path(__file__).with_name("sales_policy.yaml"))
_TGKILL = {"x86_64": 234, "aarch64": 131}  # the syscall's number where libc has no tgkill()


class Started:
    """A running ``serve``: the process, its OTLP port, and the start-up lines it printed."""

    def __init__(self, process: subprocess.Popen[str], port: int, lines: list[str]) -> None:
        self.process, self.port, self.lines = process, port, lines

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def rest(self, timeout: float) -> tuple[int, str]:
        """Its exit code and the stderr it wrote after the start-up lines."""
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err


def _command(*options: str) -> list[str]:
    command = [sys.executable, "-m", "groundplane_otel.cli", "serve", "--policy", POLICY]
    return command + list(options)


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    """This process's environment without any ``OTEL_*`` variable, plus ``env``."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    return {**clean, **(env or {})}


def run_serve(*options: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``serve`` with ``options`` run to its end (one that refuses to start), no
    ``OTEL_*`` variable unless ``env`` sets one."""
    return subprocess.run(
        _command(*options),
        env=_environment(env),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def start_serve(*options: str, env: dict[str, str] | None = None, lines: int = 3) -> Started:
    """``serve`` on an ephemeral loopback port (health too) with no ``OTEL_EXPORTER_OTLP_*``
    variable unless ``env`` sets one; its first ``lines`` stderr lines read."""
    command = _command("--listen", "127.0.0.1:0", "--health", "127.0.0.1:0", *options)
    process = subprocess.Popen(command, env=_environment(env), stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    read = [process.stderr.readline() for _ in range(lines)]
    first = read[0]
    assert first.startswith("groundplane-otel: verifier listening on 127.0.0.1:"), read
    port = int(first.split("127.0.0.1:")[1].split()[0])
    return Started(process, port, [line.rstrip("\n") for line in read])


def free_port() -> int:
    """A loopback port nothing listens on (bound and released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def unblocked_threads(pid: int) -> list[int]:
    """The ids of ``pid``'s threads other than its main one that do not block SIGTERM: the
    threads the kernel may deliver a SIGTERM sent to the process to."""
    found = []
    for task in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda path: int(path.name)):
        tid = int(task.name)
        if tid == pid:
            continue
        status = (task / "status").read_text()
        blocked = int(status.split("SigBlk:")[1].split()[0], 16)
        if not blocked & (1 << (signal.SIGTERM - 1)):
            found.append(tid)
    return found


def tgkill(pid: int, tid: int, signum: int) -> None:
    """Send ``signum`` to thread ``tid`` of process ``pid`` (``signal.pthread_kill`` reaches
    only this process's threads)."""
    libc = ctypes.CDLL(None, use_errno=True)
    send = getattr(libc, "tgkill", None)
    if send is not None:
        result = send(pid, tid, signum)
    else:
        result = libc.syscall(_TGKILL[platform.machine()], pid, tid, signum)
    if result != 0:
        raise OSError(ctypes.get_errno(), f"tgkill({pid}, {tid}, {signum}) failed")
