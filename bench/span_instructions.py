"""Instructions per unmatched trace, guard vs plain SDK, counted by valgrind (callgrind):
``python -m bench.span_instructions [traces]``.

Timings on a shared 2-core machine move with load; instruction counts do not (the same binary,
inputs and environment give the same count). Each variant runs the plain request trace of
``bench.guard`` (a root and three children, no GenAI attributes) ``traces`` and ``traces/6``
times under callgrind; the difference is the marginal cost of ``5/6 traces`` traces, so
interpreter start-up and imports cancel out. Prints; asserts nothing. Needs ``valgrind``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = """
import sys
from bench.guard import _config, _sdk, _unmatched_trace
provider_of, _, _ = _sdk()
guarded = sys.argv[1] == "guard"
provider = provider_of(guarded, _config() if guarded else None)
run = _unmatched_trace(provider.get_tracer("bench"))
for _ in range(int(sys.argv[2])):
    run()
"""


def _instructions(variant: str, traces: int, script: Path) -> int:
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={folder}/out",
                sys.executable,
                str(script),
                variant,
                str(traces),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError("callgrind printed no instruction count")
    return int(found.group(1))


def main(argv: list[str]) -> int:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)")
        return 1
    traces = int(argv[0]) if argv else 1200
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "run.py"
        script.write_text(_RUN)
        marginal = {}
        for variant in ("plain", "guard"):
            many = _instructions(variant, traces, script)
            few = _instructions(variant, traces // 6, script)
            marginal[variant] = (many - few) / (traces - traces // 6)
    print("| variant | instructions per unmatched trace (root + 3 children) |")
    print("|---|---|")
    print(f"| plain SDK | {marginal['plain']:,.0f} |")
    print(f"| with the guard | {marginal['guard']:,.0f} |")
    print(f"\nratio: {marginal['guard'] / marginal['plain']:.3f}x (goal <= 1.03)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
