"""``groundplane-otel``: validate a policy file in CI, print the version.

groundplane-otel check-policy policy.yaml    # exit 0 and a summary, or exit 1 and the error
groundplane-otel replay --policy policy.yaml traces.jsonl …   # backtest / CI gate (see
                                                              # REPLAY_EXIT_CODES)
groundplane-otel serve --policy policy.yaml --listen 0.0.0.0:4317   # the fleet verifier
groundplane-otel suggest -o policy.yaml traces.jsonl …   # infer a policy from recorded traces
                                                         # (see SUGGEST_EXIT_CODES)
groundplane-otel version
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from groundplane_otel.otel.config import GuardConfig

__all__ = ["REPLAY_EXIT_CODES", "SUGGEST_EXIT_CODES", "main"]

REPLAY_EXIT_CODES = """\
the gate fails closed: it fails on any output that could not be checked (error) unless
--max-errors or --max-error-rate allows it; on a fact whose tool never appeared in the input
(or never with its result: content capture off) and on a boundary that matched no output, each
named with the names that were seen, unless --allow-unmatched; on input with no span (never
allowed) or no guarded output (unless --allow-empty); on unreadable input (unless
--max-unreadable); and on the thresholds given (--max-unsupported-rate: the share of answers
refused; --max-unsupported-claim-rate: the share of claims).

exit codes:
  0  the gate passed
  1  the gate failed (the report ends with why)
  2  bad usage: an invalid option value, policy file or missing input file, or a --junit-xml /
     --markdown file that cannot be written (none is written then)
  3  internal failure: a --jobs worker process failed or was killed (named on stderr); no
     report is printed and no --junit-xml / --markdown file is written

A reader that stops early (| head) drops the rest of the report quietly; the exit code is the
gate's all the same. --junit-xml and --markdown are written whether the gate passed or failed
(stderr says where)."""


SUGGEST_EXIT_CODES = """\
exit codes:
  0  a policy was written (every check held in at least --min-support of its runs)
  1  nothing could be inferred (no spans, no tool spans, no agent answers, content not
     captured, no candidate check, no check held often enough), or inputs were unreadable
     (more than --max-unreadable)
  2  bad usage: an invalid option value, a missing input file, or a -o file that exists
     (without --force) or cannot be written (checked before any input is read)"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with each option's default shown (unless its help already says it, or it has
    none worth saying: None, False); a description or epilog written on several lines kept as
    written, one written as one line wrapped."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return action.help
        return f"{text} (default: %(default)s)"

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose sub-commands share its formatter (``_Formatter``), and whose
    usage errors suggest the closest command, choice or option (did you mean …?)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["formatter_class"] = _Formatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.format_usage()}{self.prog}: error: {_did_you_mean(self, message)}\n")


_INVALID_CHOICE = re.compile(r"invalid choice: '(.*)' \(choose from (.*)\)$")
_UNRECOGNIZED = re.compile(r"^unrecognized arguments: (.*)$")


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """``message`` with the closest command, choice or option appended when one is close."""
    import difflib

    choice = _INVALID_CHOICE.search(message)
    if choice:
        choices = [item.strip().strip("'") for item in choice.group(2).split(",")]
        close = difflib.get_close_matches(choice.group(1), choices, n=1)
        return f"{message}; did you mean {close[0]!r}?" if close else message
    unknown = _UNRECOGNIZED.match(message)
    if not unknown:
        return message
    options = [option for action in parser._actions for option in action.option_strings]
    hints = []
    for word in unknown.group(1).split():
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], options, n=1)
            if close:
                hints.append(f"{word!r}: did you mean {close[0]!r}?")
    return f"{message} ({'; '.join(hints)})" if hints else message


def _number(kind: type, low: float, high: float = math.inf) -> argparse._ActionType:
    """An argparse type: a finite ``kind`` within [low, high], or a usage error naming the
    value (argparse adds the option's name)."""
    what = "a whole number" if kind is int else "a number"
    bounds = f">= {low:g}" if high == math.inf else f"between {low:g} and {high:g}"

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what} {bounds}, got {text!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"must be {what} {bounds}, got {text!r}")
        return value  # type: ignore[no-any-return]

    return parse


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _policy(path: str) -> GuardConfig | None:
    """The policy file's configuration, or None after saying on stderr what is wrong."""
    from groundplane_otel.otel.policy import PolicyError, load_policy

    try:
        return load_policy(path)
    except PolicyError as exc:
        for error in exc.errors:
            print(f"groundplane-otel: invalid policy: {error}", file=sys.stderr)
        if len(exc.errors) > 1:
            print(f"groundplane-otel: {len(exc.errors)} errors in {path}", file=sys.stderr)
        return None


def _check_policy(path: str) -> int:
    config = _policy(path)
    if config is None:
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


def _ci_files(args: argparse.Namespace) -> list[tuple[str, str]]:
    return [
        (option, path)
        for option, path in (("--junit-xml", args.junit_xml), ("--markdown", args.markdown))
        if path is not None
    ]


def _outputs_unwritable(args: argparse.Namespace) -> str | None:
    """Why a ``--junit-xml`` / ``--markdown`` file could not be written, checked before the
    replay (which may take hours): one path for both, a directory, a missing or read-only
    directory, a read-only file."""
    import os

    files = _ci_files(args)
    if len(files) == 2 and os.path.abspath(files[0][1]) == os.path.abspath(files[1][1]):
        return f"--junit-xml and --markdown are the same file {files[0][1]!r}"
    for option, path in files:
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            return f"{option} {path!r}: cannot be written (a directory, or no writable directory)"
        if os.path.exists(path) and not os.access(path, os.W_OK):
            return f"{option} {path!r}: cannot be written (read-only)"
    return None


def _write_outputs(args: argparse.Namespace, report: dict[str, object]) -> str | None:
    """Write the ``--junit-xml`` and ``--markdown`` files, both or (on an error) neither; why
    one failed, or None."""
    import os

    from groundplane_otel.otel.replay.junit import render_junit
    from groundplane_otel.otel.replay.markdown import render_markdown

    content = {
        "--junit-xml": lambda: render_junit(report),
        "--markdown": lambda: render_markdown(report).encode("utf-8"),
    }
    written: list[str] = []
    try:
        for option, path in _ci_files(args):
            data = content[option]()
            with open(path, "wb") as out:
                written.append(path)
                out.write(data)
    except OSError as exc:
        for path in written:
            with contextlib.suppress(OSError):
                os.remove(path)
        return f"cannot write the CI reports (none written): {exc}"
    for option, path in _ci_files(args):
        what = "JUnit XML" if option == "--junit-xml" else "Markdown summary"
        print(f"groundplane-otel: wrote the {what} to {path}", file=sys.stderr)
    return None


def _replay(args: argparse.Namespace) -> int:
    from groundplane_otel.otel.replay import parallel
    from groundplane_otel.otel.replay import report as replay_report

    config = _policy(args.policy)
    if config is None:
        return 2
    unwritable = _outputs_unwritable(args)
    if unwritable is not None:
        print(f"groundplane-otel: {unwritable}", file=sys.stderr)
        return 2
    job = parallel.ReplayJob(
        tuple(args.files),
        args.policy,
        capture_content=args.capture_content,
        format=args.format,
        decision_wait=args.decision_wait,
        max_traces=args.max_traces,
        max_spans_per_trace=args.max_spans_per_trace,
        max_findings=args.max_findings,
        max_unreadable_shown=args.max_unreadable_shown,
        rematch=args.rematch,
        max_line_bytes=args.max_line_bytes,
    )
    progress = _Progress(enabled=sys.stderr.isatty() and not args.quiet)
    jobs = args.jobs if args.jobs is not None else parallel.default_jobs(args.files)
    try:
        stats, bad = parallel.replay(job, jobs, progress=progress.show, config=config)
    except ValueError as exc:
        print(f"groundplane-otel: {exc}", file=sys.stderr)
        return 2
    except parallel.WorkerFailed as exc:
        print(f"groundplane-otel: {exc}", file=sys.stderr)
        return 3
    except (KeyboardInterrupt, parallel.Interrupted) as exc:
        signum = exc.signum if isinstance(exc, parallel.Interrupted) else 2
        print("groundplane-otel: interrupted: no report", file=sys.stderr)
        return 128 + signum
    finally:
        progress.done()
    gate = replay_report.Gate(
        args.max_unsupported_rate,
        args.max_errors,
        max_unreadable=args.max_unreadable,
        allow_empty=args.allow_empty,
        max_error_rate=args.max_error_rate,
        max_unsupported_claim_rate=args.max_unsupported_claim_rate,
        allow_unmatched=args.allow_unmatched,
    )
    capture = config.capture_content or args.capture_content
    report = replay_report.build_report(stats, bad, gate, capture_content=capture, config=config)
    text = replay_report.render_json(report) if args.json else replay_report.render_text(report)
    _emit(text)  # a reader that stopped early (| head) does not stop the CI files
    failed = _write_outputs(args, report)
    if failed is not None:
        print(f"groundplane-otel: {failed}", file=sys.stderr)
        return 2
    return 0 if report["gate"]["passed"] else 1


class _Progress:
    """A progress bar on stderr (only on a terminal), redrawn at most twice a second."""

    WIDTH = 30

    def __init__(self, *, enabled: bool, verb: str = "replaying") -> None:
        self.enabled = enabled
        self.verb = verb
        self._last = 0.0

    def show(self, fraction: float, spans: int, traces: int, *, final: bool = False) -> None:
        """Redraw (at most twice a second; ``final``: now, the last word)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if final or now - self._last >= 0.5:
            self._last = now
            filled = int(fraction * self.WIDTH)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            sys.stderr.write(
                f"\r{self.verb} [{bar}] {fraction:4.0%} · {spans:,} spans · {traces:,} traces "
                "decided"
            )
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self._last:
            sys.stderr.write("\n")


def _serve(args: argparse.Namespace) -> int:
    """Run the verifier until SIGTERM/SIGINT (``otel.serving``: exports, signals, summary)."""
    from groundplane_otel.otel.verifier.serving import run

    return run(args)


def _address(text: str) -> str:
    """An argparse type: ``HOST:PORT``, or a usage error saying what is wrong with it."""
    from groundplane_otel.otel.verifier.addresses import parse_address

    try:
        parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _writable(output: str, force: bool) -> str | None:
    """Why the policy cannot be written to ``output`` (None: it can), checked before reading
    anything: an existing file is never replaced without ``--force``."""
    import os
    from pathlib import Path

    path = Path(output)
    if path.is_dir():
        return f"cannot write the policy to {output}: it is a directory"
    if path.exists():
        if not force:
            return (
                f"{output} exists: suggest does not replace a policy file (pass --force to "
                "replace it, or -o another file)"
            )
        if not os.access(path, os.W_OK):
            return f"cannot write the policy to {output}: permission denied"
        return None
    folder = path.parent
    if not folder.is_dir():
        return f"cannot write the policy to {output}: folder {str(folder)!r} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write the policy to {output}: folder {str(folder)!r} is not writable"
    return None


def _suggest(args: argparse.Namespace) -> int:
    from pathlib import Path

    from groundplane_otel.otel.otlp_files import ReadProgress, Unreadable, located_requests
    from groundplane_otel.otel.replay.pacing import Pacer
    from groundplane_otel.otel.suggest import NothingToInfer, Suggester
    from groundplane_otel.otel.suggest.render import render, summary

    if args.output != "-":
        problem = _writable(args.output, args.force)
        if problem is not None:
            print(f"groundplane-otel: {problem}", file=sys.stderr)
            return 2
    bad = Unreadable(keep=args.max_unreadable_shown)
    suggester = Suggester(
        min_support=args.min_support,
        max_runs_kept=args.max_runs_kept,
        max_listed=args.max_listed,
        decision_wait=args.decision_wait,
        max_traces=args.max_traces,
        max_spans_per_trace=args.max_spans_per_trace,
        unreadable=bad,
    )
    progress = _Progress(enabled=sys.stderr.isatty() and not args.quiet, verb="reading")
    counts, pacer = suggester.reader.counts, Pacer()
    try:
        read = ReadProgress(args.files)
        requests = located_requests(
            args.files, bad, format=args.format, progress=read, max_line_bytes=args.max_line_bytes
        )
        for where, request in requests:
            suggester.feed(request, where)
            if pacer.due():
                progress.show(read.fraction, counts.spans, counts.traces)
        suggestion = suggester.finish()
    except ValueError as exc:
        progress.show(1.0, counts.spans, counts.traces, final=True)
        progress.done()
        if not isinstance(exc, NothingToInfer):
            print(f"groundplane-otel: {exc}", file=sys.stderr)
            return 2
        print(f"groundplane-otel: nothing to suggest: {exc}", file=sys.stderr)
        suggestion = None
    else:
        progress.show(1.0, counts.spans, counts.traces, final=True)
        progress.done()
    for item in bad.kept:
        print(f"groundplane-otel: unreadable: {item}", file=sys.stderr)
    if bad.left_out:
        print(f"groundplane-otel: unreadable: {bad.left_out} more not shown", file=sys.stderr)
    if suggestion is None:
        return 1
    if bad.count > args.max_unreadable:
        print(
            f"groundplane-otel: {bad.count} unreadable inputs > {args.max_unreadable} "
            "(--max-unreadable): no policy written",
            file=sys.stderr,
        )
        return 1
    for note in suggestion.notes:
        print(f"groundplane-otel: note: {note}", file=sys.stderr)
    text = render(suggestion)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text)
    except OSError as exc:
        print(
            f"groundplane-otel: cannot write the policy to {args.output}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    print(f"{args.output}: {summary(suggestion)}")
    return 0


_PIPE_CLOSED = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away


def _pipe_closed() -> int:
    """stdout's reader went away: the rest of the output goes nowhere (no second error when
    Python flushes it at exit)."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return _PIPE_CLOSED


def _emit(text: str) -> None:
    """Print ``text``; if stdout's reader went away, the rest goes nowhere (see main)."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _pipe_closed()


def _version() -> int:
    from groundplane_otel import __version__

    print(f"groundplane-otel {__version__}")
    return 0


def _buffer_arguments(
    parser: argparse.ArgumentParser, kind: type, wait: float, unit: str, what: str
) -> None:
    """The trace buffer's bounds, shared by replay (waits in spans) and serve (in seconds)."""
    parser.add_argument(
        "--decision-wait",
        type=_number(kind, 0),
        default=wait,
        metavar=unit,
        help=f"{what} after a trace's last span before it is decided",
    )
    parser.add_argument(
        "--max-traces",
        type=_number(int, 1),
        default=10_000,
        metavar="N",
        help="traces buffered at once (when full, the oldest is decided early, incomplete)",
    )
    parser.add_argument(
        "--max-spans-per-trace",
        type=_number(int, 1),
        default=10_000,
        metavar="N",
        help="spans kept per trace; a trace over it is decided on the first N and counted "
        "incomplete (the rest counted as dropped)",
    )


def _unreadable_arguments(parser: argparse.ArgumentParser, located: str) -> None:
    """How much unreadable input fails the command, how much of it is located, and how big a
    line or message may be; shared by replay and suggest."""
    parser.add_argument(
        "--max-unreadable",
        type=_number(int, 0),
        default=0,
        metavar="N",
        help="exit 1 when more than N lines, messages, files or spans could not be read "
        "(default 0: any unreadable input fails)",
    )
    parser.add_argument(
        "--max-unreadable-shown",
        type=_number(int, 0),
        default=100,
        metavar="N",
        help=f"unreadable inputs located {located} (the rest are counted)",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=_number(int, 1),
        default=64 * 1024 * 1024,
        metavar="N",
        help="a JSON line or protobuf message (decompressed) over N bytes is unreadable, "
        "skipped unread (default 64 MiB)",
    )


def _parser() -> _Parser:
    from groundplane_otel import __version__

    parser = _Parser(
        prog="groundplane-otel",
        description="Deterministic grounding guard for LLM agents, native to OpenTelemetry.",
        epilog="Run 'groundplane-otel COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"groundplane-otel {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check-policy", help="validate a policy file (exit 1 with the error when invalid)"
    )
    check.add_argument("file", help="path of the YAML policy file")
    replay = commands.add_parser(
        "replay",
        help="run a policy over recorded traces (Collector file exporter, json or proto)",
        description="Run a policy over recorded traces (the Collector's file exporter: json or "
        "proto, plain, gzip or zstd) and gate on the result.",
        epilog=REPLAY_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="recorded trace files")
    replay.add_argument("--policy", required=True, help="path of the YAML policy file")
    replay.add_argument(
        "--format",
        choices=("auto", "json", "proto"),
        default="auto",
        help="the files' format: OTLP/JSON lines, length-prefixed protobuf, or auto (by the "
        "first byte; gzip and zstd are recognised either way)",
    )
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.add_argument(
        "--junit-xml",
        metavar="FILE",
        help="also write the report as JUnit XML (a test case per listed output, the gate's "
        "verdict as its own test case) for GitLab, GitHub or Jenkins",
    )
    replay.add_argument(
        "--markdown",
        metavar="FILE",
        help="also write a Markdown summary (a PR comment, $GITHUB_STEP_SUMMARY)",
    )
    replay.add_argument(
        "--rematch",
        action="store_true",
        help="ignore every recorded groundplane.boundary, the app's too: each span's boundary "
        "is matched again by the policy (a boundary the guard matched is always matched again)",
    )
    replay.add_argument(
        "--capture-content", action="store_true", help="include claimed/supported values"
    )
    replay.add_argument(
        "--max-unsupported-rate",
        type=_number(float, 0, 1),
        default=None,
        metavar="R",
        help="exit 1 when the share of checked answers refused (blocked or flagged) is above R "
        "(0: any wrong answer fails; default: not gated)",
    )
    replay.add_argument(
        "--max-unsupported-claim-rate",
        type=_number(float, 0, 1),
        default=None,
        metavar="R",
        help="exit 1 when the share of claims found unsupported is above R (default: not gated)",
    )
    replay.add_argument(
        "--max-errors",
        type=_number(int, 0),
        default=0,
        metavar="N",
        help="outputs that could not be checked (error) allowed: exit 1 when more than N, "
        "unless --max-error-rate allows them (default: %(default)s, any error fails)",
    )
    replay.add_argument(
        "--max-error-rate",
        type=_number(float, 0, 1),
        default=0.0,
        metavar="R",
        help="or allow error outputs up to this share of all outputs (default: %(default)s)",
    )
    replay.add_argument(
        "--allow-unmatched",
        action="store_true",
        help="pass although a fact's tool never appeared in the input (or never with its "
        "result) or a boundary matched no output (by default each fails the gate, named)",
    )
    _unreadable_arguments(replay, "in the report")
    replay.add_argument(
        "--allow-empty",
        action="store_true",
        help="pass when the input holds spans but no guarded output (by default that fails "
        "the gate; an input with no span never passes)",
    )
    replay.add_argument(
        "--max-findings",
        type=_number(int, 0),
        default=10_000,
        metavar="N",
        help="findings listed in the report (the rest are counted)",
    )
    _buffer_arguments(replay, int, 10_000, "SPANS", "spans read")
    replay.add_argument(
        "--jobs",
        type=_number(int, 1),
        default=None,
        metavar="N",
        help="worker processes, each deciding the traces whose id hashes to it (default: the "
        "cores this process may use when the files hold 32 MiB or more, else 1; 1: in this "
        "process); the report is the same for any N",
    )
    replay.add_argument("--quiet", action="store_true", help="no progress line")
    serve = commands.add_parser(
        "serve",
        help="run the fleet verifier (an OTLP/gRPC receiver)",
        description="A trace is decided --root-wait seconds (default 5) after its root span "
        "arrived, or --decision-wait seconds (default 300) after its last span when no root "
        "arrives. Metrics and findings are exported over OTLP/gRPC to OTEL_EXPORTER_OTLP_"
        "ENDPOINT (or the METRICS_ / LOGS_ variants); with none set nothing is exported and "
        "each finding is written on stderr. Exit 0 after SIGTERM/SIGINT (every buffered trace "
        "decided, telemetry flushed within 3 s, a summary on stderr); exit 2 on a usage error, "
        "an invalid policy, an address that cannot be bound, or an export endpoint that is "
        "malformed or the verifier's own address.",
    )
    serve.add_argument("--policy", required=True, help="path of the YAML policy file")
    serve.add_argument(
        "--listen",
        type=_address,
        default="0.0.0.0:4317",
        metavar="HOST:PORT",
        help="OTLP/gRPC address to listen on (default: %(default)s)",
    )
    serve.add_argument(
        "--health",
        type=_address,
        default="0.0.0.0:13133",
        metavar="HOST:PORT",
        help="address of GET /healthz (default: %(default)s)",
    )
    _buffer_arguments(serve, float, 300.0, "SECONDS", "idle timeout (no root span): seconds")
    serve.add_argument(
        "--root-wait",
        type=_number(float, 0),
        default=5.0,
        metavar="SECONDS",
        help="seconds after a trace's root span arrived before it is decided (other services' "
        "batches land meanwhile)",
    )
    serve.add_argument(
        "--max-receive-message-bytes",
        type=_number(int, 1),
        default=4 * 1024 * 1024,
        metavar="BYTES",
        help="larger export requests are refused (INVALID_ARGUMENT, not retried) and counted "
        "(default 4 MiB)",
    )
    suggest = commands.add_parser(
        "suggest",
        help="infer a policy from recorded traces (facts, boundaries, checks)",
        description="Infer the policy recorded traces support: facts from tool results, one "
        "boundary per agent, and the checks its answers pass in at least --min-support of the "
        "runs they apply to. Written in observe mode, with each check's support and the trace "
        "ids of the runs that broke it as comments.",
        epilog=SUGGEST_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    suggest.add_argument("files", nargs="+", metavar="FILE", help="recorded trace files")
    suggest.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="FILE",
        help="the policy file (default: stdout); an existing file is not replaced without --force",
    )
    suggest.add_argument("--force", action="store_true", help="replace the -o file when it exists")
    suggest.add_argument("--quiet", action="store_true", help="no progress line")
    suggest.add_argument(
        "--min-support",
        type=_number(float, 0.01, 1),
        default=0.8,
        metavar="S",
        help="keep a check that held in at least this share of the runs it applies to",
    )
    suggest.add_argument("--format", choices=("auto", "json", "proto"), default="auto")
    suggest.add_argument(
        "--max-runs-kept",
        type=_number(int, 1),
        default=1_000,
        metavar="N",
        help="runs kept in memory to infer from (every run is tallied)",
    )
    suggest.add_argument(
        "--max-listed",
        type=_number(int, 0),
        default=10,
        metavar="N",
        help="trace ids listed per check for the runs that broke it (the rest are counted)",
    )
    _unreadable_arguments(suggest, "on stderr")
    _buffer_arguments(suggest, int, 10_000, "SPANS", "spans read")
    commands.add_parser("version", help="print the installed version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the console script). A
    reader that closes stdout early (``| head``) ends it quietly with 141 (128 + SIGPIPE), as
    a shell reports such a command; replay's exit code stays the gate's (``_emit``)."""
    try:
        code = _run(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        return _pipe_closed()
    return code


def _run(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if unknown:  # told by the command's parser, which knows its options
        command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        command.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "check-policy":
        return _check_policy(args.file)
    if args.command == "replay":
        return _replay(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "suggest":
        return _suggest(args)
    return _version()


if __name__ == "__main__":
    sys.exit(main())
