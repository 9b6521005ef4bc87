"""The Collector's file exporter as ``groundplane-otel replay`` reads it: the tier of
test_collector_tier.py records every trace three ways at once (OTLP/JSON lines; zstd, the
exporter's own length-prefixed compressed messages; JSON lines rotated at 1 MB), and replay,
run as the CI gate it is, reaches the live replicas' verdicts from each recording."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from processes import POLICY
from tier import Tier, deciders, start_tier, verdicts, wait_decided

# Unguarded traffic, 8 KiB a span, in exports 0.3 s apart (past the batch processor's 200 ms):
# the rotated recording passes 1 MB, while no batch comes near it (a batch larger than
# max_megabytes is refused whole by the rotating exporter: "write length ... exceeds maximum
# file size").
FILLER_EXPORTS, FILLER_SPANS = 8, 20


def _filler(tier: Tier) -> None:
    """Other services' spans (no boundary): what a Collector records besides the agents."""
    provider = TracerProvider(resource=Resource.create({"service.name": "checkout-service"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=tier.grpc_endpoint, insecure=True))
    )
    tracer = provider.get_tracer("checkout")
    for export in range(FILLER_EXPORTS):
        for index in range(FILLER_SPANS):
            with tracer.start_as_current_span(f"POST /cart/{export}/{index}") as span:
                span.set_attribute("http.request.body", "x" * 8192)
        provider.force_flush()
        time.sleep(0.3)
    provider.shutdown()


def replay(files: list[Path]) -> tuple[int, dict[str, Any], str]:
    """The gate with every threshold explicit: an unsupported-claim rate above 50%, any error
    output or any unreadable input fails it (exit 1)."""
    command = [sys.executable, "-m", "groundplane_otel.cli", "replay", "--policy", str(POLICY)]
    command += ["--json", "--quiet", "--max-unsupported-rate", "0.5", "--max-errors", "0"]
    command += ["--max-unreadable", "0", "--jobs", "1", *map(str, files)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    return result.returncode, json.loads(result.stdout), result.stderr


def test_file_exporter_recordings_replay_to_the_live_verdicts(
    tmp_path: Path, teardown: ExitStack
) -> None:
    record = tmp_path / "recorded"
    exporters = {
        "file/plain": {"path": str(record / "plain" / "traces.jsonl"), "create_directory": True},
        "file/zstd": {
            "path": str(record / "zstd" / "traces.zst"),
            "compression": "zstd",
            "create_directory": True,
        },
        "file/rotated": {
            "path": str(record / "rotated" / "traces.jsonl"),
            "rotation": {"max_megabytes": 1, "max_backups": 100},
            "create_directory": True,
        },
    }
    tier = start_tier(tmp_path, teardown, root_wait=0.5, exporters=exporters)
    sent = tier.send(12)
    _filler(tier)
    sent.update(tier.send(12))
    wait_decided(tier, sent, timeout=30)
    assert tier.collector.stop() == 0  # flushes and closes the files
    live = {t: v for sink in tier.sinks for t, v in verdicts(sink).items()}
    assert sorted(deciders(tier)) == sorted(sent)
    flagged = sorted(t for t, v in live.items() if v == ["unsupported"])
    assert len(flagged) == 8

    rotated = sorted((record / "rotated").iterdir())
    assert len(rotated) >= 2, [p.name for p in rotated]  # traces.jsonl + traces-<time>.jsonl
    zstd = record / "zstd" / "traces.zst"
    assert zstd.read_bytes()[4:8] == b"\x28\xb5\x2f\xfd"  # a length, then a zstd frame
    for files in ([record / "plain" / "traces.jsonl"], [zstd], rotated):
        code, report, stderr = replay(files)
        assert (code, report["gate"]) == (0, {"passed": True, "failures": []}), stderr
        # The same 8 unsupported answers; replay applies the policy's mode (enforce: they
        # would have been blocked), the live verifier is observe-only (flagged).
        assert report["boundaries"]["answer"]["outcomes"] == {"passed": 16, "blocked": 8}
        assert report["boundaries"]["answer"]["claims"] == {"supported": 16, "unsupported": 8}
        assert sorted(f["trace_id"] for f in report["findings"]) == flagged, files
        assert report["input"]["unreadable"] == 0, report["input"]
        assert report["input"]["traces"] == len(sent) + FILLER_EXPORTS * FILLER_SPANS
