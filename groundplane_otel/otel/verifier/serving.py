"""``groundplane-otel serve``: the fleet verifier run as a command (``cli`` parses, ``run`` runs).

- **Exports, safe by default.** Metrics and findings (``gen_ai.guardrail.result`` log records)
  go over OTLP/gRPC to the endpoints the standard variables name
  (``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` / ``…_LOGS_ENDPOINT``, else
  ``OTEL_EXPORTER_OTLP_ENDPOINT``). A signal with no endpoint is not exported — never to the
  SDK's default ``localhost:4317``, the verifier's own port — and then each finding is written
  on stderr instead. An endpoint that reaches the verifier's own listening address is refused
  (exit 2): it would send the verifier its findings, which it cannot read.
- **Said on stderr**: at start, where it listens, where ``/healthz`` answers and where it
  exports (or that it does not); at shutdown, a summary (traces by outcome, outputs, findings
  exported or not, metric exports, spans and requests received, dropped, refused).
- **Bad configuration refused at start** (exit 2): a malformed ``HOST:PORT`` (``cli``), an
  address that cannot be bound (the real cause: ``addresses.bind_problem``), a malformed
  endpoint, an endpoint that is the verifier's own address.
- **SIGTERM / SIGINT on any thread.** The kernel delivers a process's signal to any thread
  that does not block it, and Python runs handlers on the main thread only: the handler sets an
  event that the main thread polls every ``_POLL_S`` (a wait without a timeout never saw a
  signal delivered to a worker thread). Then the drain (every buffered trace decided), the
  telemetry flushed within ``FLUSH_S`` (what is not exported by then is counted in the
  summary), exit 0.
- gRPC core's own log lines stay off stderr (``GRPC_VERBOSITY`` defaults to ``NONE``): every
  failure it would log is reported by the verifier in its own words.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData

__all__ = ["FLUSH_S", "STOP_GRACE_S", "endpoints", "run"]

FLUSH_S = 3.0  # the telemetry flush at shutdown, at most (metrics and logs at once)
STOP_GRACE_S = 2.0  # exports in flight at SIGTERM get this long to finish
_POLL_S = 0.2  # the main thread looks for a signal this often (whichever thread took it)
_SIGNALS = {
    "metrics": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "logs": "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
}


def _named_by(name: str, environ: Mapping[str, str]) -> str:
    """The variable that names signal ``name``'s endpoint."""
    specific = _SIGNALS[name]
    return specific if environ.get(specific, "").strip() else "OTEL_EXPORTER_OTLP_ENDPOINT"


def endpoints(environ: Mapping[str, str]) -> dict[str, str | None]:
    """Each signal's (``metrics``, ``logs``) OTLP endpoint as the exporters read it, or None
    when no variable names one (then it is not exported)."""
    common = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return {
        name: environ.get(variable, "").strip() or common or None
        for name, variable in _SIGNALS.items()
    }


def _say(text: str) -> None:
    print(f"groundplane-otel: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """The ``serve`` command: 0 after SIGTERM/SIGINT (drained, flushed, summarized), 2 on an
    invalid policy, an address that cannot be bound, a malformed export endpoint or one that
    is the verifier itself."""
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # before gRPC core starts (the server)
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel._echo import capped
    from groundplane_otel.otel.policy import PolicyError, load_policy
    from groundplane_otel.otel.verifier import Verifier, VerifierServer
    from groundplane_otel.otel.verifier.addresses import (
        endpoint_problem,
        is_own_address,
        parse_address,
    )

    try:
        config = load_policy(args.policy)
    except PolicyError as exc:
        _say(f"invalid policy: {exc}")
        return 2
    stop = threading.Event()
    previous = _on_signals(stop)
    try:
        targets = endpoints(os.environ)
        for name, endpoint in targets.items():
            problem = None if endpoint is None else endpoint_problem(endpoint)
            if endpoint is not None and problem is not None:
                variable = _named_by(name, os.environ)
                _say(f"{variable} {capped(endpoint, 80)!r}: {problem}")
                return 2
        exports = _Exports(targets)
        verifier = Verifier(
            config,
            meter_provider=exports.meters or MeterProvider(shutdown_on_exit=False),
            logger_provider=exports.logs,
            root_wait_s=args.root_wait,
            idle_timeout_s=args.decision_wait,
            max_traces=args.max_traces,
            max_spans_per_trace=args.max_spans_per_trace,
            max_receive_message_bytes=args.max_receive_message_bytes,
        )
        try:
            server = VerifierServer(verifier, listen=args.listen, health=args.health)
        except (ValueError, OSError) as exc:
            exports.close()
            _say(str(exc))
            return 2
        host = parse_address(args.listen)[0]
        own = [
            (name, endpoint)
            for name, endpoint in targets.items()
            if endpoint is not None and is_own_address(endpoint, host, server.port)
        ]
        if own:
            server.stop(0)
            exports.close()
            names = " and ".join(name for name, endpoint in own if endpoint == own[0][1])
            _say(
                f"refusing to export {names} to {own[0][1]}: that is the verifier's own "
                f"address ({args.listen}), which cannot read them; set "
                "OTEL_EXPORTER_OTLP_ENDPOINT to your Collector or backend, or unset it "
                "(findings are then written on stderr)"
            )
            return 2
        server.start()
        _started(args, server, targets)
        while not stop.wait(_POLL_S):
            pass
        _say("stopping: deciding every buffered trace, then flushing")
        server.stop(STOP_GRACE_S)
        flushed = exports.flush(FLUSH_S)
        _say(_summary(verifier, exports, flushed))
        return 0
    finally:
        _restore(previous)


def _started(args: argparse.Namespace, server: Any, targets: Mapping[str, str | None]) -> None:
    host = args.listen.rpartition(":")[0]
    _say(f"verifier listening on {host}:{server.port} for OTLP/gRPC traces")
    if server.health_port is not None:
        host = args.health.rpartition(":")[0]
        _say(f"health on http://{host}:{server.health_port}/healthz")
    exported = {name: endpoint for name, endpoint in targets.items() if endpoint is not None}
    if not exported:
        _say(
            "not exporting (no OTEL_EXPORTER_OTLP_ENDPOINT): findings are written here, "
            "counts summarized at shutdown"
        )
    for name, endpoint in exported.items():
        _say(f"exporting {name} over OTLP/gRPC to {endpoint}")
    if exported and targets["metrics"] is None:
        _say("not exporting metrics (no endpoint set for them)")
    if exported and targets["logs"] is None:
        _say("not exporting logs (no endpoint set for them): findings are written here")


def _on_signals(stop: threading.Event) -> dict[int, Any]:
    """SIGTERM and SIGINT set ``stop`` (whichever thread the kernel gave them to: Python runs
    the handler on the main thread, which polls ``stop``); the handlers they replaced."""
    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, lambda *_: stop.set())
    return previous


def _restore(previous: Mapping[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


class _Exports:
    """The meter and logger providers the verifier exports through: OTLP/gRPC for each signal
    with an endpoint; findings on stderr when logs have none. Counts the findings sent."""

    def __init__(self, targets: Mapping[str, str | None]) -> None:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import (
            BatchLogRecordProcessor,
            SimpleLogRecordProcessor,
        )
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource

        resource = Resource.create({"service.name": "groundplane-verifier"})
        self.exporters: list[Any] = []
        self.meters: Any = None
        self.metrics: _Metrics | None = None
        if targets["metrics"] is not None:
            metrics = OTLPMetricExporter(endpoint=targets["metrics"])
            self.exporters.append(metrics)
            self.metrics = _Metrics(metrics)
            self.meters = MeterProvider(  # never shut down: a refused start exports nothing
                resource=resource,
                metric_readers=[PeriodicExportingMetricReader(self.metrics)],
                shutdown_on_exit=False,
            )
        self.logs = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self.findings = _Findings(
            OTLPLogExporter(endpoint=targets["logs"]) if targets["logs"] else None
        )
        if self.findings.exporter is not None:
            self.exporters.append(self.findings.exporter)
            self.logs.add_log_record_processor(BatchLogRecordProcessor(self.findings))
        else:
            self.logs.add_log_record_processor(SimpleLogRecordProcessor(self.findings))

    def flush(self, within_s: float) -> bool:
        """Flush metrics and logs at once, for at most ``within_s`` seconds; then the exporters
        stop (a retry still waiting gives up). Whether both flushes ended in time."""
        flushes = [
            threading.Thread(target=provider.force_flush, name="verifier-flush", daemon=True)
            for provider in (self.meters, self.logs)
            if provider is not None
        ]
        deadline = time.monotonic() + within_s
        for flush in flushes:
            flush.start()
        for flush in flushes:
            flush.join(max(0.0, deadline - time.monotonic()))
        done = not any(flush.is_alive() for flush in flushes)
        self.close()
        return done

    def close(self) -> None:
        """Stop the exporters (a retry waiting gives up at once; nothing more is sent)."""
        quiet = logging.getLogger("opentelemetry.exporter.otlp.proto.grpc.exporter")
        quiet.setLevel(logging.ERROR)  # "shutdown in progress, aborting retry": said below
        for exporter in self.exporters:
            try:
                exporter.shutdown()
            except Exception as exc:  # an exporter failing to close must not lose the summary
                _say(f"closing an exporter failed: {type(exc).__name__}: {exc}")


class _Findings(LogRecordExporter):
    """The verifier's log records on their way out: to ``exporter`` (counting the findings it
    sent), or with no exporter one line each on stderr."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter
        self.exported = 0  # findings the exporter took (SUCCESS)
        self.written = 0  # findings written on stderr
        self.lock = threading.Lock()

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        findings = [item for item in batch if _is_finding(item)]
        if self.exporter is None:
            for item in findings:
                _say(_finding_line(item.log_record))
            with self.lock:
                self.written += len(findings)
            return LogRecordExportResult.SUCCESS
        result: LogRecordExportResult = self.exporter.export(batch)
        if result is LogRecordExportResult.SUCCESS:
            with self.lock:
                self.exported += len(findings)
        return result

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self) -> None:
        """The exporter is stopped by ``_Exports.close``."""


class _Metrics(MetricExporter):
    """The OTLP metric exporter, its exports counted (succeeded, failed)."""

    def __init__(self, exporter: Any) -> None:
        super().__init__(
            preferred_temporality=exporter._preferred_temporality,
            preferred_aggregation=exporter._preferred_aggregation,
        )
        self.exporter = exporter
        self.exported = 0
        self.failed = 0

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        result: MetricExportResult = self.exporter.export(
            metrics_data, timeout_millis=timeout_millis, **kwargs
        )
        if result is MetricExportResult.SUCCESS:
            self.exported += 1
        else:
            self.failed += 1
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        """The exporter is stopped by ``_Exports.close``."""


def _is_finding(item: Any) -> bool:
    from groundplane_otel.otel import semconv as sc

    return getattr(item.log_record, "event_name", None) == sc.GUARDRAIL_EVENT


def _finding_line(record: Any) -> str:
    """One finding on stderr: where (trace, span), which boundary and check, what."""
    from groundplane_otel.otel import semconv as sc

    attributes: Mapping[str, Any] = record.attributes or {}
    trace_id = f"{record.trace_id:032x}" if record.trace_id else "-"
    span_id = f"{record.span_id:016x}" if record.span_id else "-"
    check = attributes.get(sc.GUARDRAIL_POLICY_RULE_ID) or attributes.get(sc.CHECK) or "-"
    field = attributes.get(sc.FIELD)
    message = attributes.get(sc.MESSAGE)
    boundary = attributes.get(sc.GUARDRAIL_POLICY_ID)
    result = attributes.get(sc.GUARDRAIL_RESULT_VALUE)
    reason = attributes.get(sc.GUARDRAIL_RESULT_REASON)
    text = (
        f"finding: trace {trace_id} span {span_id} boundary {boundary} check {check}: "
        f"{result} ({reason})"
    )
    if field is not None:
        text += f" field {field}"
    if message is not None:
        text += f": {message}"
    return text


def _summary(verifier: Any, exports: _Exports, flushed: bool) -> str:
    """What the verifier did, for its last lines on stderr."""
    stats, replay = verifier.stats, verifier.replayer.stats
    decided = stats.root_ended + stats.idle + stats.incomplete + stats.failed
    lines = [
        f"verifier stopped: {decided} traces decided (root_ended {stats.root_ended}, idle "
        f"{stats.idle}, incomplete {stats.incomplete}, failed {stats.failed})"
    ]
    outputs = ", ".join(
        f"{boundary} {outcome} {count}"
        for (boundary, outcome), count in sorted(replay.outputs.items())
    )
    lines.append(f"  outputs: {outputs or 'none'}")
    findings = replay.findings_dropped + len(replay.findings)
    sent = exports.findings
    if sent.exporter is None:
        lines.append(f"  findings: {findings} (written above, not exported)")
    else:
        left = findings - sent.exported
        lines.append(f"  findings: {findings} ({sent.exported} exported, {left} not exported)")
    metrics = exports.metrics
    if metrics is not None:
        lines.append(f"  metric exports: {metrics.exported} succeeded, {metrics.failed} failed")
    if not flushed:
        lines.append(f"  the flush did not end within {FLUSH_S:g} s: what it held is not exported")
    uncounted = (
        f", {stats.oversize_uncounted} of them with spans not counted"
        if stats.oversize_uncounted
        else ""
    )
    lines.append(
        f"  spans: {replay.spans} received ({replay.dropped_spans} dropped, "
        f"{replay.bad_spans} unreadable), {stats.oversize_spans} in oversize requests; "
        f"requests: {replay.requests} received, {stats.oversize_requests} oversize"
        f"{uncounted}, {stats.unreadable_requests} unreadable"
    )
    return "\n".join(lines[:1] + [f"groundplane-otel: {line}" for line in lines[1:]])
