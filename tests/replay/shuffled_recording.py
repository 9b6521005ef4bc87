"""The shared recording (``replay_recording.py``) cloned under fresh trace ids, its spans
shuffled into multi-span lines over several files, with hostile input mixed in: what a parallel
replay must decide exactly as one process does."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

GARBAGE = ("not json at all", '{"resourceSpans": [')  # two unreadable lines
BAD_SPANS = ({"spanId": ""}, {"traceId": "cd"}, {"traceId": ""})  # three unreadable spans


def _fresh(trace_id: str, clone: int) -> str:
    return hashlib.sha256(f"{trace_id}/{clone}".encode()).hexdigest()[:32]


def shuffled(
    lines: list[str], folder: Path, *, clones: int, seed: int, files: int = 3
) -> list[Path]:
    """``lines`` (one span each) cloned ``clones`` times, shuffled into lines of 1-4 spans
    (spans of one trace in different lines and files), written to ``files`` files; mixed in:
    the two ``GARBAGE`` lines, the three ``BAD_SPANS``, an identical copy of one span, and a
    wrong answer under the span id of clone 0's first right answer (``lines[1]``): that trace
    is conflicting."""
    rng = random.Random(seed)
    trees = [json.loads(line) for line in lines]
    envelope = trees[0]["resourceSpans"][0]
    spans: list[dict[str, Any]] = []
    for clone in range(clones):
        for tree in trees:
            span = dict(tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
            span["traceId"] = _fresh(span["traceId"], clone)
            spans.append(span)
    right = spans[1]
    wrong = json.loads(json.dumps(right).replace('\\\\\\"EU\\\\\\"', '\\\\\\"US\\\\\\"'))
    assert wrong != right
    spans += [wrong, dict(rng.choice(spans))]
    spans += [{**spans[0], **fields} for fields in BAD_SPANS]
    rng.shuffle(spans)
    out: list[str] = []
    while spans:
        size = rng.randint(1, 4)
        group, spans = spans[:size], spans[size:]
        request = {
            "resourceSpans": [
                {
                    "resource": envelope["resource"],
                    "scopeSpans": [{"scope": envelope["scopeSpans"][0]["scope"], "spans": group}],
                }
            ]
        }
        out.append(json.dumps(request))
    paths = [folder / f"part-{index}.jsonl" for index in range(files)]
    parts: list[list[str]] = [[out.pop(0)] for _ in paths]  # each file starts as JSON does
    for line in out:
        parts[rng.randrange(files)].append(line)
    for index, garbage in enumerate(GARBAGE):
        part = parts[index % files]
        part.insert(rng.randrange(1, len(part) + 1), garbage)
    for path, part in zip(paths, parts, strict=True):
        path.write_text("\n".join(part) + "\n")
    return paths
