"""The scale-out tier end to end: two services export every span on its own to the built
Collector running collector_config/verifier.yaml, whose ``load_balancing`` exporter routes by
trace id to two ``groundplane-otel serve`` replicas. What each replica decided is read from the
log records and metrics it exported to its own sink."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

from processes import wait_for
from tier import (
    OUTCOME,
    deciders,
    outputs,
    received_spans,
    start_tier,
    verdicts,
    wait_decided,
)

SPANS_PER_TRACE = 4  # invoke_agent, GET /sales, execute_tool, chat: four exports


def test_every_trace_is_decided_whole_by_exactly_one_replica(
    tmp_path: Path, teardown: ExitStack
) -> None:
    """30 traces, spans in separate exports from two services: each trace is decided by one
    replica only, with the verdict of the whole trace (a split trace would lack its fact and
    be counted ``error``); both replicas get traces; the outputs add up to what was sent; the
    trace backend gets every span too."""
    tier = start_tier(tmp_path, teardown, root_wait=0.5)
    sent = tier.send(30)
    wait_decided(tier, sent, timeout=30)
    decided = deciders(tier)
    assert {trace_id: len(decided[trace_id]) for trace_id in sent} == dict.fromkeys(sent, 1)
    assert set(decided) == set(sent)
    for index, sink in enumerate(tier.sinks):
        mine = verdicts(sink)
        assert mine, f"replica {index} decided no trace: the tier did not spread the load"
        assert mine == {t: [sent[t]] for t in mine}
    want = {OUTCOME[v]: list(sent.values()).count(v) for v in set(sent.values())}
    assert want == {"flagged": 10, "passed": 20}
    wait_for(lambda: outputs(tier) == want, 10, f"the replicas' outputs to add up to {want}")
    assert tier.backend.spans == {bytes.fromhex(t): SPANS_PER_TRACE for t in sent}


def test_replica_down_at_start_then_killed_and_restarted(
    tmp_path: Path, teardown: ExitStack
) -> None:
    """What the pair guarantees, measured.

    1. Replicas down when the first traces arrive: the Collector's per-replica OTLP exporter
       queues and retries them (its default queue and retry_on_failure), every one is decided
       once, whole, when the replicas come up.
    2. One replica SIGKILLed with traces it received (acknowledged) but had not decided yet
       (``--root-wait 3``): those traces are lost — the Collector had their acknowledgement —
       never re-routed to the other replica, never decided twice.
    3. Traces sent while it is down: its share is queued and retried by the Collector and
       decided once, whole, by the restarted replica; the other replica decides its own share.
    4. SIGTERM: both replicas drain and exit 0.
    """
    tier = start_tier(tmp_path, teardown, root_wait=3.0, start_replicas=False)
    down_at_start = tier.send(10)
    time.sleep(1.0)
    for replica in tier.replicas:
        replica.start()
    wait_decided(tier, down_at_start, timeout=120)  # retries back off 5, 10, 20 s…

    in_flight = tier.send(10)
    total = SPANS_PER_TRACE * (len(down_at_start) + len(in_flight))
    wait_for(
        lambda: sum(received_spans(sink) for sink in tier.sinks) == total,
        15,
        "every span to reach a replica",
    )
    killed, survivor = tier.replicas
    killed.kill()
    while_down = tier.send(10)
    time.sleep(1.0)
    killed.start()
    wait_decided(tier, while_down, timeout=120)
    assert survivor.stop() == 0  # SIGTERM: drains, deciding its share of every batch
    assert killed.stop() == 0

    decided = deciders(tier)
    everything = {**down_at_start, **in_flight, **while_down}
    assert all(len(decided.get(t, [])) <= 1 for t in everything), "a trace decided twice"
    for sink in tier.sinks:
        for trace_id, found in verdicts(sink).items():
            assert found == [everything[trace_id]], f"trace {trace_id} not decided whole"
    assert all(t in decided for t in down_at_start)
    assert all(t in decided for t in while_down)
    lost = [t for t in in_flight if t not in decided]
    assert lost, "the killed replica held none of the in-flight traces (the test proves nothing)"
    killed_before = {t for t in in_flight if decided.get(t) == [0]}  # decided before the kill
    assert len(lost) + len(killed_before) + sum(decided.get(t) == [1] for t in in_flight) == 10
    print(
        f"\nkill -9 of one replica: {len(lost)} of {len(in_flight)} in-flight traces lost "
        f"(its buffered share; {len(killed_before)} it decided before the kill), "
        f"{len(while_down)} sent while it was down all decided once"
    )
