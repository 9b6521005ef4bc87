"""``python -m bench [--smoke] [--only NAME ...]``: run the benchmarks, print markdown tables."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time

from bench import Section, render

MODULES = (
    "core",
    "scaling",
    "pydantic_baseline",
    "memory",
    "accounting",
    "guard",
    "instructions",
    "replay",
    "replay_instructions",
    "jobs_instructions",
    "suggest",
    "plugin_import",
    "error_rates",
    "leaks",
    "prose_cost",
    "stream",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, few repeats: proves it runs, in seconds"
    )
    parser.add_argument("--only", nargs="+", choices=MODULES, help="run only these benchmarks")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    sections: list[Section] = []
    for name in args.only or MODULES:
        module = importlib.import_module(f"bench.{name}")
        sections.extend(module.run(args.smoke))
        print(f"[bench] {name} done", file=sys.stderr, flush=True)
    mode = "smoke run (tiny sizes, timings meaningless)" if args.smoke else "full run"
    print(f"## groundplane_otel benchmarks — {mode}")
    print()
    print(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{platform.system()}; `python -m bench{' --smoke' if args.smoke else ''}` "
        f"took {time.perf_counter() - started:.1f} s; 1-minute load average "
        f"{load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end on "
        f"{os.cpu_count()} CPUs (ratios measured side by side are robust to load; absolute "
        "times and ratios against quoted figures are not)."
    )
    print()
    print(render(sections))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
