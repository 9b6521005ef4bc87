"""Without valgrind the instruction tables say so in every row, never a silent blank: asked
for ``--only replay_instructions`` on a machine without it, the rows name the fix."""

from __future__ import annotations

import shutil

import pytest

from bench import replay_instructions, span_instructions

NO_VALGRIND = "n/a (no valgrind: `make bench` installs it)"


def test_without_valgrind_nothing_is_counted_and_the_rows_say_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    assert span_instructions.counting(smoke=False) is False
    assert span_instructions.uncounted(smoke=False) == NO_VALGRIND
    assert span_instructions.uncounted(smoke=True) == "n/a (smoke)"
    (section,) = replay_instructions.run(smoke=False)
    assert section.rows == [
        ("replay (OTLP/JSON lines)", "—", "—", NO_VALGRIND),
        ("verifier intake (OTLP protobuf)", "—", "—", NO_VALGRIND),
    ]
