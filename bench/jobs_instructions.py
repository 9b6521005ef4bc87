"""``replay --jobs 2``'s critical path in instructions (``--only jobs_instructions``).

On this VM the same CPU-bound loop alone takes 0.8 to 1.4 s from one minute to the next, and two
processes at once do 1.2x to 2.0x the work of one (``bench.replay``'s ceiling row), so the timed
``--jobs`` ratios move by more than the margin to their goal. Instructions do not: each worker's
two parts — its split of the reading (``replay.split.split``) and its share of the deciding
(``replay.share.replay_share`` from the spill) — are counted under callgrind
(``PYTHONHASHSEED=0``), each in its own process, minus a process that only imports what the
fork server imports before it forks a worker (``replay.parallel.PRELOADED``) and, as a worker
does when it starts, freezes it (``gc.freeze``: no collection scans it, nor does the exit), and
so is ``--jobs 1`` over the same recording (minus the imports alone: the command does not
freeze). The critical path is the slower split plus the slower share (the shares start when
every split is written); ``--jobs 1`` over it is what two independent idle cores would give,
start-up left out. Two shapes of the same spans: one per request as JSON lines (the split's
worst case), and batches of up to 512 in protobuf (what services export and a Collector writes;
every share reads such a file itself, so its split only marks it). The traces each worker
keeps are shown: ids are random, and the worker that keeps more decides more (its share is the
slower one). The smoke run executes every part once without valgrind.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import Section, fmt_ratio
from bench.span_instructions import count_instructions, counted_env, counting, uncounted

__all__ = ["run"]

_RUN = """
import gc, importlib, pickle, sys, tempfile
from pathlib import Path
from groundplane_otel.otel.replay import parallel, share, split
for preloaded in parallel.PRELOADED:  # as the fork server imports them before forking a worker
    importlib.import_module(preloaded)
recording, policy, spill, part = sys.argv[1:5]
if part != "jobs1" and part != "imports":  # a worker's parts: it freezes what it inherited
    gc.freeze()
job = share.ReplayJob((recording,), policy)
if part == "jobs1":
    share.replay_share(job, 0, 1)
elif part.startswith("split"):
    with tempfile.TemporaryDirectory() as folder:
        split.split(job, int(part[-1]), 2, Path(folder))
elif part.startswith("share"):  # the policy as a worker gets it: read by the command, sent
    config = pickle.loads(Path(spill + ".config").read_bytes())
    share.replay_share(job, int(part[-1]), 2, config=config, spilled=Path(spill))
"""

_PARTS = ("imports", "imports_frozen", "jobs1", "split0", "split1", "share0", "share1")
_SHAPES = (
    ("OTLP/JSON lines, one span per request", 1, ".jsonl"),
    ("OTLP protobuf, batches of 512 spans", 512, ".pb"),
)


def _prepare(folder: Path, recorded: int, batch: int, suffix: str) -> tuple[str, str, str]:
    """A recording of ``recorded`` x 2 traces in ``suffix``'s format, the policy, and the
    spill both workers' splits write, with the policy as the command sends it to a worker
    (pickled; made here, outside valgrind)."""
    from bench.replay import POLICY, _copies, _record
    from groundplane_otel.otel.replay import share, split

    lines, proto = folder / f"jobs-{batch}.jsonl", folder / f"jobs-{batch}.pb"
    _record(recorded, lines, batch)
    _copies(lines, proto, recorded, 2)
    policy = folder / "policy.yaml"
    policy.write_text(POLICY)
    recording = lines if suffix == ".jsonl" else proto
    spill = folder / f"spill-{batch}"
    spill.mkdir()
    job = share.ReplayJob((str(recording),), str(policy))
    for index in range(2):
        split.split(job, index, 2, spill)
    config = pickle.dumps(share.load_config(str(policy)), protocol=pickle.HIGHEST_PROTOCOL)
    Path(f"{spill}.config").write_bytes(config)  # what the command sends every worker
    return str(recording), str(policy), str(spill)


def _kept(recording: str, count: int) -> list[int]:
    """How many of the recording's traces each of ``count`` workers keeps (``split.owner``)."""
    from groundplane_otel.otel.otlp_files import located_requests
    from groundplane_otel.otel.replay import split
    from groundplane_otel.otel.replay.records import proto_spans

    traces = set()
    for _, batch in located_requests([recording], []):
        spans = batch if isinstance(batch, list) else proto_spans(batch)
        traces.update(span.trace_id for span in spans)
    kept = [0] * count
    for trace_id in traces:
        kept[split.owner(trace_id, count)] += 1
    return kept


def _counts(script: Path, args: tuple[str, str, str], counted: bool) -> dict[str, int]:
    """Each part's instructions beyond importing (``counted`` False: run once, uncounted)."""
    if not counted:
        for part in _PARTS:
            subprocess.run(
                [sys.executable, str(script), *args, part],
                check=True,
                capture_output=True,
                env=counted_env(),
            )
        return {}
    total = {part: count_instructions(script, *args, part) for part in _PARTS}
    return {
        part: count - total["imports" if part == "jobs1" else "imports_frozen"]
        for part, count in total.items()
        if not part.startswith("imports")
    }


def run(smoke: bool) -> list[Section]:
    section = Section(
        key="jobs_instructions",
        title="replay --jobs 2 vs --jobs 1 in instructions (callgrind): the critical path",
        headers=(
            "recording",
            "--jobs 1",
            "--jobs 2 workers: split + share (each)",
            "critical path",
            "--jobs 1 / critical path",
            "traces kept by each worker",
        ),
    )
    counted = counting(smoke)
    recorded = 2 if smoke else 600
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "run.py"
        script.write_text(_RUN)
        for label, batch, suffix in _SHAPES:
            args = _prepare(Path(folder), recorded, batch, suffix)
            counts = _counts(script, args, counted)
            name = f"{2 * recorded} traces, {label}"
            kept = " / ".join(map(str, _kept(args[0], 2)))
            if not counts:
                why = uncounted(smoke)
                section.rows.append((name, "—", "—", "—", why, kept))
                continue
            path = max(counts["split0"], counts["split1"]) + max(counts["share0"], counts["share1"])
            parts = ", ".join(
                f"{counts[f'split{i}'] / 1e6:,.0f} M + {counts[f'share{i}'] / 1e6:,.0f} M"
                for i in range(2)
            )
            section.rows.append(
                (
                    name,
                    f"{counts['jobs1'] / 1e6:,.0f} M",
                    parts,
                    f"{path / 1e6:,.0f} M",
                    fmt_ratio(counts["jobs1"] / path),
                    kept,
                )
            )
    section.notes.append(
        "Each part in its own process under callgrind (PYTHONHASHSEED=0), minus a process that "
        "only imports what the fork server imports before forking a worker (and, for a "
        "worker's parts, freezes it with gc.freeze, as a worker does); the spill the "
        "shares read was written beforehand. Goal (issue 21): "
        "--jobs 2 >= 1.7x --jobs 1 on 2 cores; start-up (the fork server, ~0.2 s) left out."
    )
    return [section]
