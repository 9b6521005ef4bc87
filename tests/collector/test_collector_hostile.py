"""The tier under faults: the Collector restarted while the app keeps exporting, and malformed
exports from a third party into the verifier through the Collector."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import pytest
from otlp_services import AGENT
from processes import wait_for
from tier import deciders, received_spans, start_tier, verdicts, wait_decided


def test_collector_restarted_while_the_app_exports(
    tmp_path: Path, teardown: ExitStack, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM to the Collector mid-run, then the same Collector again on the same ports: what
    it had accepted is flushed to the replicas before it exits; the app's exports refused
    meanwhile (UNAVAILABLE) are retried by the SDK's OTLP exporter (backoff 1, 2, 4 s... within
    its 10 s export timeout). Nothing is lost, split or decided twice."""
    tier = start_tier(tmp_path, teardown, root_wait=0.5)
    sent: dict[str, str] = {}
    done = threading.Event()

    def app() -> None:
        for _ in range(15):
            sent.update(tier.send(3))
            time.sleep(0.1)
        done.set()

    thread = threading.Thread(target=app, daemon=True)
    thread.start()
    time.sleep(1.5)
    stopping = time.monotonic()
    assert tier.collector.stop() == 0  # graceful: the batch and the queues are flushed
    time.sleep(1.0)  # down for a second at least: the app's exports are refused meanwhile
    tier.collector.start()
    downtime = time.monotonic() - stopping
    thread.join(60)
    assert done.is_set()
    assert len(sent) == 45
    retried = [r for r in caplog.records if "Transient error" in r.getMessage()]
    assert retried, "no export hit the restart: the test proved nothing"
    wait_decided(tier, sent, timeout=30)
    decided = deciders(tier)
    assert all(len(decided[t]) == 1 for t in sent)
    for sink in tier.sinks:
        for trace_id, found in verdicts(sink).items():
            assert found == [sent[trace_id]], trace_id  # whole: no span lost on the way
    print(
        f"\ncollector down {downtime:.1f} s while exporting: {len(retried)} exports retried "
        "by the SDK, 45 of 45 traces decided whole"
    )


def _post(url: str, body: bytes, content_type: str) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def _span(
    trace_id: str, span_id: str, name: str, attributes: dict[str, str], **extra: str
) -> dict[str, object]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        **extra,
    }


def _request(spans: list[dict[str, object]]) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "third-party"}}]}
    document = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}
    return json.dumps(document).encode()


MALFORMED = [
    (b"\xff\x00garbage", "application/x-protobuf", "proto: "),
    (b'{"resourceSpans": [', "application/json", "ReadObject: expect { or , or } or n"),
    (
        _request([_span("nothex", "0102030405060708", "x", {})]),
        "application/json",
        "ID.UnmarshalJSONIter: length mismatch",
    ),
]


def test_malformed_exports_are_refused_by_the_collector(
    tmp_path: Path, teardown: ExitStack
) -> None:
    """Bytes that are no OTLP request (not protobuf, cut JSON, a trace id that is not hex) are
    refused by the Collector's receiver: HTTP 400 with the reason (a client does not retry a
    400); no replica sees them; the next trace is decided as usual."""
    tier = start_tier(tmp_path, teardown, root_wait=0.3)
    for body, content_type, message in MALFORMED:
        status, answer = _post(f"http://{tier.http_endpoint}/v1/traces", body, content_type)
        assert (status, message in answer) == (400, True), answer
    sent = tier.send(1, every=1)
    wait_decided(tier, sent, timeout=20)

    def received() -> int:
        return sum(received_spans(sink) for sink in tier.sinks)

    wait_for(lambda: received() >= 4, 10, "the replicas' intake counters")
    assert received() == 4  # only the good trace's spans: nothing malformed got through


def test_a_well_formed_export_with_a_broken_fact_is_decided_error(
    tmp_path: Path, teardown: ExitStack
) -> None:
    """A third party's valid OTLP export whose tool result is not JSON passes the Collector
    (it is well-formed OTLP) and reaches the replica owning its trace, which decides it once:
    the answer could not be checked, counted ``error``, never ``supported``."""
    tier = start_tier(tmp_path, teardown, root_wait=0.3)
    trace_id = "5b8efff798038103d269b633813fc60c"
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "top_sales",
        "gen_ai.tool.call.result": "{not json",
    }
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": json.dumps({"winner": "US"})}],
                }
            ]
        ),
    }
    spans = [
        _span(trace_id, "0000000000000001", "invoke_agent analyst", AGENT),
        _span(
            trace_id,
            "0000000000000002",
            "execute_tool top_sales",
            tool,
            parentSpanId="0000000000000001",
        ),
        _span(trace_id, "0000000000000003", "chat m", chat, parentSpanId="0000000000000001"),
    ]
    status, answer = _post(
        f"http://{tier.http_endpoint}/v1/traces", _request(spans), "application/json"
    )
    assert status == 200, answer
    wait_decided(tier, {trace_id: "error"}, timeout=20)
    assert deciders(tier)[trace_id] in ([0], [1])
    assert {t: v for sink in tier.sinks for t, v in verdicts(sink).items()} == {trace_id: ["error"]}
