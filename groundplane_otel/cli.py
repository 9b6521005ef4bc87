"""``groundplane-otel``: validate a policy file in CI, print the version.

groundplane-otel check-policy policy.yaml    # exit 0 and a summary, or exit 1 and the error
groundplane-otel replay --policy policy.yaml traces.jsonl …   # backtest / CI gate (see
                                                              # REPLAY_EXIT_CODES)
groundplane-otel serve --policy policy.yaml --listen 0.0.0.0:4317   # the fleet verifier
groundplane-otel version
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundplane_otel.otel.config import GuardConfig

__all__ = ["REPLAY_EXIT_CODES", "main"]

REPLAY_EXIT_CODES = """\
exit codes:
  0  the gate passed: every input was read (or --max-unreadable allows what was not), at
     least one guarded output was decided (or --allow-empty), and no threshold was exceeded
  1  the gate failed: a threshold was exceeded, more inputs were unreadable than
     --max-unreadable allows, or no guarded output was in the input (without --allow-empty)
  2  bad usage: an invalid option value, policy file or missing input file
  3  internal failure: a --jobs worker process failed or was killed (named on stderr); no
     report is printed"""


def _number(kind: type, low: float, high: float = math.inf) -> argparse._ActionType:
    """An argparse type: a finite ``kind`` within [low, high], or a usage error naming the
    value (argparse adds the option's name)."""
    what = "a whole number" if kind is int else "a number"
    bounds = f">= {low:g}" if high == math.inf else f"between {low:g} and {high:g}"

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what} {bounds}, got {text!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"must be {what} {bounds}, got {text!r}")
        return value  # type: ignore[no-any-return]

    return parse


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _policy(path: str) -> GuardConfig | None:
    """The policy file's configuration, or None after saying on stderr what is wrong."""
    from groundplane_otel.otel.policy import PolicyError, load_policy

    try:
        return load_policy(path)
    except PolicyError as exc:
        print(f"groundplane-otel: invalid policy: {exc}", file=sys.stderr)
        return None


def _check_policy(path: str) -> int:
    config = _policy(path)
    if config is None:
        return 1
    checks = sum(len(boundary.checks) for boundary in config.boundaries)
    print(
        f"{path}: ok (mode {config.mode}; {_count(len(config.facts), 'fact', 'facts')}, "
        f"{_count(len(config.boundaries), 'boundary', 'boundaries')}, "
        f"{_count(checks, 'check', 'checks')})"
    )
    for boundary in config.boundaries:
        mode = boundary.mode or config.mode
        print(f"  {boundary.name} [{mode}] facts: {', '.join(boundary.facts)}")
        for check in boundary.checks:
            print(f"    {check.name}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from groundplane_otel.otel.replay import parallel
    from groundplane_otel.otel.replay import report as replay_report

    config = _policy(args.policy)
    if config is None:
        return 2
    job = parallel.ReplayJob(
        tuple(args.files),
        args.policy,
        capture_content=args.capture_content,
        format=args.format,
        decision_wait=args.decision_wait,
        max_traces=args.max_traces,
        max_spans_per_trace=args.max_spans_per_trace,
        max_findings=args.max_findings,
        max_unreadable_shown=args.max_unreadable_shown,
    )
    progress = _Progress(enabled=sys.stderr.isatty() and not args.quiet)
    jobs = args.jobs if args.jobs is not None else parallel.default_jobs()
    try:
        stats, bad = parallel.replay(job, jobs, progress=progress.show, config=config)
    except ValueError as exc:
        print(f"groundplane-otel: {exc}", file=sys.stderr)
        return 2
    except parallel.WorkerFailed as exc:
        print(f"groundplane-otel: {exc}", file=sys.stderr)
        return 3
    except (KeyboardInterrupt, parallel.Interrupted) as exc:
        signum = exc.signum if isinstance(exc, parallel.Interrupted) else 2
        print("groundplane-otel: interrupted: no report", file=sys.stderr)
        return 128 + signum
    finally:
        progress.done()
    gate = replay_report.Gate(
        args.max_unsupported_rate,
        args.max_errors,
        max_unreadable=args.max_unreadable,
        allow_empty=args.allow_empty,
    )
    capture = config.capture_content or args.capture_content
    report = replay_report.build_report(stats, bad, gate, capture_content=capture)
    if args.json:
        print(replay_report.render_json(report))
    else:
        print(replay_report.render_text(report))
    return 0 if report["gate"]["passed"] else 1


class _Progress:
    """A progress bar on stderr (only on a terminal), redrawn at most twice a second."""

    WIDTH = 30

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._last = 0.0

    def show(self, fraction: float, spans: int, traces: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= 0.5:
            self._last = now
            filled = int(fraction * self.WIDTH)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            sys.stderr.write(
                f"\rreplaying [{bar}] {fraction:4.0%} · {spans:,} spans · {traces:,} traces decided"
            )
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self._last:
            sys.stderr.write("\n")


def _serve(args: argparse.Namespace) -> int:
    """Run the verifier until SIGTERM/SIGINT; metrics and log records go over OTLP to the
    endpoint the standard ``OTEL_EXPORTER_OTLP_*`` variables name."""
    import signal
    import threading

    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    from groundplane_otel.otel.verifier import Verifier, VerifierServer

    config = _policy(args.policy)
    if config is None:
        return 2
    resource = Resource.create({"service.name": "groundplane-verifier"})
    meters = MeterProvider(  # shut down below, so a refused start exports nothing at exit
        resource=resource,
        metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())],
        shutdown_on_exit=False,
    )
    logs = LoggerProvider(resource=resource, shutdown_on_exit=False)
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    verifier = Verifier(
        config,
        meter_provider=meters,
        logger_provider=logs,
        root_wait_s=args.root_wait,
        idle_timeout_s=args.decision_wait,
        max_traces=args.max_traces,
        max_spans_per_trace=args.max_spans_per_trace,
        max_receive_message_bytes=args.max_receive_message_bytes,
    )
    try:
        server = VerifierServer(verifier, listen=args.listen, health=args.health).start()
    except (ValueError, OSError, RuntimeError) as exc:
        print(f"groundplane-otel: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(
        f"groundplane-otel: verifier listening on {args.listen} (port {server.port}), "
        f"health on {args.health}",
        file=sys.stderr,
    )
    stop.wait()
    server.stop()
    meters.force_flush()
    logs.force_flush()
    meters.shutdown()
    logs.shutdown()
    return 0


def _version() -> int:
    from groundplane_otel import __version__

    print(f"groundplane-otel {__version__}")
    return 0


def _buffer_arguments(
    parser: argparse.ArgumentParser, kind: type, wait: float, unit: str, what: str
) -> None:
    """The trace buffer's bounds, shared by replay (waits in spans) and serve (in seconds)."""
    parser.add_argument(
        "--decision-wait",
        type=_number(kind, 0),
        default=wait,
        metavar=unit,
        help=f"{what} after a trace's last span before it is decided",
    )
    parser.add_argument(
        "--max-traces", type=_number(int, 1), default=10_000, help="traces buffered at once"
    )
    parser.add_argument("--max-spans-per-trace", type=_number(int, 1), default=10_000)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundplane-otel",
        description="Deterministic grounding guard for LLM agents, native to OpenTelemetry.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check-policy", help="validate a policy file (exit 1 with the error when invalid)"
    )
    check.add_argument("file", help="path of the YAML policy file")
    replay = commands.add_parser(
        "replay",
        help="run a policy over recorded traces (Collector file exporter, json or proto)",
        description="Run a policy over recorded traces (the Collector's file exporter: json or "
        "proto, plain, gzip or zstd) and gate on the result.",
        epilog=REPLAY_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="recorded trace files")
    replay.add_argument("--policy", required=True, help="path of the YAML policy file")
    replay.add_argument("--format", choices=("auto", "json", "proto"), default="auto")
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.add_argument(
        "--capture-content", action="store_true", help="include claimed/supported values"
    )
    replay.add_argument(
        "--max-unsupported-rate",
        type=_number(float, 0, 1),
        default=None,
        metavar="R",
        help="exit 1 when the unsupported-claim rate is above R (0 gates every claim)",
    )
    replay.add_argument(
        "--max-errors",
        type=_number(int, 0),
        default=None,
        metavar="N",
        help="exit 1 when more than N outputs could not be checked",
    )
    replay.add_argument(
        "--max-unreadable",
        type=_number(int, 0),
        default=0,
        metavar="N",
        help="exit 1 when more than N lines, messages, files or spans could not be read "
        "(default 0: any unreadable input fails the gate)",
    )
    replay.add_argument(
        "--allow-empty",
        action="store_true",
        help="pass when no guarded output is in the input (by default that fails the gate)",
    )
    replay.add_argument(
        "--max-findings",
        type=_number(int, 0),
        default=10_000,
        metavar="N",
        help="findings listed in the report (the rest are counted)",
    )
    replay.add_argument(
        "--max-unreadable-shown",
        type=_number(int, 0),
        default=100,
        metavar="N",
        help="unreadable inputs located in the report (the rest are counted)",
    )
    _buffer_arguments(replay, int, 10_000, "SPANS", "spans read")
    replay.add_argument(
        "--jobs",
        type=_number(int, 1),
        default=None,
        metavar="N",
        help="worker processes, each deciding the traces whose id hashes to it (default: the "
        "cores this process may use; 1: in this process); the report is the same for any N",
    )
    replay.add_argument("--quiet", action="store_true", help="no progress line")
    serve = commands.add_parser(
        "serve",
        help="run the fleet verifier (an OTLP/gRPC receiver)",
        description="A trace is decided --root-wait seconds (default 5) after its root span "
        "arrived, or --decision-wait seconds (default 300) after its last span when no root "
        "arrives. Exit 0 after SIGTERM/SIGINT (every buffered trace decided, telemetry "
        "flushed); exit 2 on a usage error, an invalid policy or an address already in use.",
    )
    serve.add_argument("--policy", required=True, help="path of the YAML policy file")
    serve.add_argument("--listen", default="0.0.0.0:4317", help="OTLP/gRPC address to listen on")
    serve.add_argument("--health", default="0.0.0.0:13133", help="address of GET /healthz")
    _buffer_arguments(serve, float, 300.0, "SECONDS", "idle timeout (no root span): seconds")
    serve.add_argument(
        "--root-wait",
        type=_number(float, 0),
        default=5.0,
        metavar="SECONDS",
        help="seconds after a trace's root span arrived before it is decided (other services' "
        "batches land meanwhile)",
    )
    serve.add_argument(
        "--max-receive-message-bytes",
        type=_number(int, 1),
        default=4 * 1024 * 1024,
        metavar="BYTES",
        help="larger export requests are refused (INVALID_ARGUMENT, not retried) and counted "
        "(default 4 MiB)",
    )
    commands.add_parser("version", help="print the installed version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the console script)."""
    args = _parser().parse_args(argv)
    if args.command == "check-policy":
        return _check_policy(args.file)
    if args.command == "replay":
        return _replay(args)
    if args.command == "serve":
        return _serve(args)
    return _version()


if __name__ == "__main__":
    sys.exit(main())
