"""``groundplane-otel``: validate a policy file in CI, print the version.

groundplane-otel check-policy policy.yaml    # exit 0 and a summary, or exit 1 and the error
groundplane-otel version
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _check_policy(path: str) -> int:
    from groundplane_otel.otel.policy import PolicyError, load_policy

    try:
        config = load_policy(path)
    except PolicyError as exc:
        print(f"groundplane-otel: invalid policy: {exc}", file=sys.stderr)
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


def _version() -> int:
    from groundplane_otel import __version__

    print(f"groundplane-otel {__version__}")
    return 0


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
    commands.add_parser("version", help="print the installed version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the console script)."""
    args = _parser().parse_args(argv)
    if args.command == "check-policy":
        return _check_policy(args.file)
    return _version()


if __name__ == "__main__":
    sys.exit(main())
