"""The policy file: a valid file loads into the exact GuardConfig; every mistake fails at load with
a message naming the file, line, key path and fix; no YAML tag ever constructs an object."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel.config import FactSpec, Limits, MatchSpec
from groundplane_otel.otel.policy import PolicyError, load_policy, policy_from_mapping

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "policy.yaml"

BASE = """\
version: 1
facts:
  campaign_ctr: {tool: warehouse.query, kind: ranking}
  regions: {tool: regions.list, kind: domain}
boundaries:
  report:
    facts: [campaign_ctr]
    checks:
      - superlative: {winner_field: winner}
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def described(checks: tuple[NamedCheck, ...]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """Name, family, facts and the repr of the validated arguments of each check."""
    return [(check.name, check.family, check.facts, repr(check.fn)) for check in checks]


def test_example_policy_loads_into_the_exact_config() -> None:
    """examples/policy.yaml becomes the fact, boundary, checks, match and limits it spells out."""
    config = load_policy(EXAMPLE)
    assert config.facts == (
        FactSpec(
            "campaign_ctr",
            "warehouse.query",
            "table",
            key="campaign",
            path="rows",
            arguments={"table": "campaign_daily"},
        ),
    )
    (boundary,) = config.boundaries
    assert (boundary.name, boundary.facts, boundary.mode, boundary.report_mode) == (
        "campaign_report",
        ("campaign_ctr",),
        None,
        "first",
    )
    assert boundary.match == MatchSpec(agent_name="campaign-analyst")
    assert described(boundary.checks) == described(
        (
            superlative("campaign_ctr", "winner", score_field="ctr", column="ctr"),
            ranking_prefix("campaign_ctr", "top3", k=3, column="ctr"),
            aggregate_reconciles("campaign_ctr", "total_clicks", "clicks", "sum"),
        )
    )
    assert (config.mode, config.capture_content, config.limits) == ("enforce", False, Limits())


def test_mapping_and_file_give_the_same_config(tmp_path: Path) -> None:
    """policy_from_mapping on the parsed YAML equals load_policy on the file, except the
    policy version: the file's hashes its text, the mapping's its canonical JSON."""
    text = BASE + "mode: observe\ncapture_content: true\n"
    data = yaml.safe_load(text)
    from_file = load_policy(write(tmp_path, text))
    from_mapping = policy_from_mapping(data)
    assert dataclasses.replace(from_mapping, policy_version=None) == dataclasses.replace(
        from_file, policy_version=None
    )
    assert (from_file.mode, from_file.capture_content) == ("observe", True)
    file_digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    canonical = json.dumps(data, sort_keys=True, default=repr).encode()
    mapping_digest = hashlib.sha256(canonical).hexdigest()[:12]
    assert (from_file.policy_version, from_mapping.policy_version) == (
        f"1+sha256:{file_digest}",
        f"1+sha256:{mapping_digest}",
    )


def test_boundary_mode_match_and_report_mode_are_read() -> None:
    """Every boundary key reaches the BoundarySpec; explicit `fact` is honoured."""
    data = yaml.safe_load(
        BASE.replace("{winner_field: winner}", "{fact: campaign_ctr, winner_field: best}")
        + "    mode: observe\n    report_mode: first\n"
        + "    match: {agent_name: a, operation_name: chat, span_name: s, attributes: {t: 1}}\n"
    )
    (boundary,) = policy_from_mapping(data).boundaries
    assert boundary.mode == "observe"
    assert boundary.report_mode == "first"
    assert boundary.match == MatchSpec("a", "chat", "s", {"t": 1})
    assert boundary.checks == (superlative("campaign_ctr", "best"),)


ERRORS = {
    "unknown top-level key": (
        BASE + "boundary: {}\n",
        "10: boundary: unknown key 'boundary'. Fix: rename it to 'boundaries'",
    ),
    "missing version": (
        BASE.replace("version: 1\n", ""),
        "1: <top level>: missing required key 'version'. Fix: add `version: 1` as the first line",
    ),
    "future version": (
        BASE.replace("version: 1", "version: 2"),
        "1: version: unsupported policy version 2. Fix: this groundplane_otel reads `version: 1`",
    ),
    "mode typo": (
        BASE + "mode: enforse\n",
        "10: mode: expected one of enforce, observe, got 'enforse'. Fix: did you mean 'enforce'?",
    ),
    "quoted boolean": (
        BASE + "capture_content: 'yes'\n",
        "10: capture_content: expected true or false, got 'yes'. Fix: write true or false",
    ),
    "zero limit": (
        BASE + "limits: {max_traces: 0}\n",
        "10: limits.max_traces: expected an integer >= 1, got 0. "
        "Fix: set `max_traces:` to an integer >= 1",
    ),
    "negative ttl": (
        BASE + "limits: {ttl_seconds: -1}\n",
        "10: limits.ttl_seconds: expected a number of seconds > 0, got -1. "
        "Fix: set `ttl_seconds:` to a number of seconds > 0",
    ),
    "limit typo": (
        BASE + "limits: {max_trace: 5}\n",
        "10: limits.max_trace: unknown key 'max_trace'. Fix: rename it to 'max_traces'",
    ),
    "fact without tool": (
        BASE.replace("{tool: regions.list, kind: domain}", "{kind: domain}"),
        "4: facts.regions: missing required key 'tool'. Fix: add `tool:` here",
    ),
    "fact kind typo": (
        BASE.replace("kind: domain", "kind: domian"),
        "4: facts.regions.kind: expected one of ranking, table, domain, value, documents, "
        "got 'domian'. "
        "Fix: did you mean 'domain'?",
    ),
    "table without key": (
        BASE.replace("kind: domain", "kind: table"),
        "4: facts.regions: a table fact needs `key` (the column that identifies a row). "
        "Fix: add `key: <column>`",
    ),
    "ranking with key but no score": (
        BASE.replace("kind: ranking}", "kind: ranking, key: campaign}"),
        "3: facts.campaign_ctr: a ranking read from rows needs both `key` and `score`. "
        "Fix: add the missing one, or drop both for a {name: score} result",
    ),
    "unquoted yes as a name": (
        BASE.replace("  regions:", "  yes:"),
        "2: facts.True: fact names must be non-empty strings, got true. "
        "Fix: quote the name (YAML reads yes/no/on/off as booleans and digits as numbers)",
    ),
    "boundary fact misspelt": (
        BASE.replace("facts: [campaign_ctr]", "facts: [campaign_crt]"),
        "7: boundaries.report.facts[0]: fact 'campaign_crt' is not declared under facts. "
        "Fix: did you mean 'campaign_ctr'?",
    ),
    "boundary fact undeclared": (
        BASE.replace("facts: [campaign_ctr]", "facts: [revenue]"),
        "7: boundaries.report.facts[0]: fact 'revenue' is not declared under facts. "
        "Fix: declare it under `facts:` (in code: a FactSpec) with the tool whose result it is",
    ),
    "unknown check family": (
        BASE.replace("- superlative:", "- superlativ:"),
        "9: boundaries.report.checks[0].superlativ: unknown check family 'superlativ'. "
        "Fix: did you mean 'superlative'?",
    ),
    "check argument typo": (
        BASE.replace("winner_field: winner", "winer_field: winner"),
        "9: boundaries.report.checks[0].superlative.winer_field: unknown key 'winer_field'. "
        "Fix: rename it to 'winner_field'",
    ),
    "builder ValueError": (
        BASE + "      - ranking_prefix: {field: top, k: 0}\n",
        "10: boundaries.report.checks[1].ranking_prefix.k: k must be None or an int >= 1, "
        "got 0. Fix: give `k` a value ranking_prefix() accepts",
    ),
    "builder TypeError": (
        BASE.replace("winner_field: winner", "winner_field: 3"),
        "9: boundaries.report.checks[0].superlative.winner_field: winner_field must be a "
        "non-empty string, got 3. Fix: give `winner_field` a value superlative() accepts",
    ),
    "check reads a fact the boundary does not list": (
        BASE.replace("{winner_field: winner}", "{fact: regions, winner_field: winner}"),
        "9: boundaries.report.checks[0].superlative.fact: the check reads fact 'regions', "
        "which this boundary does not list in its facts. "
        "Fix: add 'regions' to this boundary's facts, or read one of: campaign_ctr",
    ),
    "fact omitted with two facts": (
        BASE.replace("facts: [campaign_ctr]", "facts: [campaign_ctr, regions]"),
        "9: boundaries.report.checks[0].superlative: no `fact` given and the boundary lists 2 "
        "facts (campaign_ctr, regions). "
        "Fix: add `fact: <one of campaign_ctr, regions>` to this superlative check",
    ),
    "two families in one item": (
        BASE + "        ranking_prefix: {k: 3}\n",
        "9: boundaries.report.checks[0]: expected a mapping with exactly one key (the check "
        "family), got a mapping with 2 keys. "
        "Fix: write each check as its own list item, e.g. `- superlative: {winner_field: winner}`",
    ),
    "missing builder argument": (
        BASE + "      - aggregate_reconciles: {column: clicks}\n",
        "10: boundaries.report.checks[1].aggregate_reconciles: missing required argument "
        "'field'. Fix: add `field: ...`",
    ),
    "no checks": (
        BASE.replace(
            "    checks:\n      - superlative: {winner_field: winner}\n", "    checks: []\n"
        ),
        "8: boundaries.report.checks: expected a non-empty list of checks, got an empty list. "
        "Fix: write `checks: [{superlative: {winner_field: winner}}]`",
    ),
    "boundary mode": (
        BASE + "    mode: shadow\n",
        "10: boundaries.report.mode: expected one of enforce, observe, got 'shadow'. "
        "Fix: use one of: enforce, observe",
    ),
    "list as match value": (
        BASE + "    match: {attributes: {tier: [gold]}}\n",
        "10: boundaries.report.match.attributes.tier: expected a string, integer or boolean, "
        "got a list. Fix: match on a single attribute value",
    ),
    "duplicate boundary": (
        BASE + "  report:\n    facts: [regions]\n    checks: [{superlative: {}}]\n",
        "10: boundaries.report: duplicate key 'report' (first at line 6). "
        "Fix: keep one of them: YAML would silently drop the first",
    ),
    "no boundaries": (
        "version: 1\nboundaries: {}\n",
        "2: boundaries: the policy declares no boundaries, so it checks nothing. "
        "Fix: add `boundaries: {<name>: {facts: [...], checks: [...]}}`",
    ),
    "float version": (
        BASE.replace("version: 1", "version: 1.0"),
        "1: version: unsupported policy version 1.0. Fix: this groundplane_otel reads `version: 1`",
    ),
    "alias into itself": (
        BASE + "    match: &m {attributes: {self: *m}}\n",
        "10: boundaries.report.match.attributes.self: an alias refers to a node that contains "
        "it. Fix: remove the alias",
    ),
    "YAML syntax": (
        BASE + "  bad: [unclosed\n",
        "11: <top level>: not valid YAML: expected ',' or ']', but got '<stream end>'. "
        "Fix: fix the YAML syntax at this line (indentation, a missing colon or quote)",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_each_mistake_names_file_line_key_path_and_fix(tmp_path: Path, case: str) -> None:
    """The whole message is pinned: `file:line: key.path: problem. Fix: fix`."""
    text, expected = ERRORS[case]
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}:{expected}"
    assert isinstance(caught.value, ValueError)


def test_empty_file_has_no_line_and_says_what_to_write(tmp_path: Path) -> None:
    """An empty document is null: the message says a mapping starting `version: 1` is needed."""
    path = write(tmp_path, "")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f"{path}: <top level>: expected a mapping, got null (an empty value). "
        "Fix: write a mapping here starting `version: 1`"
    )


def test_missing_file_names_the_path_and_the_variable(tmp_path: Path) -> None:
    """A policy path that does not exist fails at load, pointing at GROUNDPLANE_POLICY."""
    path = str(tmp_path / "nope.yaml")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f"{path}: <top level>: cannot read the policy file (No such file or directory). "
        "Fix: check the path (GROUNDPLANE_POLICY, if set from the environment)"
    )


def test_mapping_errors_name_the_source_without_a_line() -> None:
    """policy_from_mapping has no lines to give: the source and key path still locate it."""
    data = yaml.safe_load(BASE.replace("kind: domain", "kind: domian"))
    with pytest.raises(PolicyError) as caught:
        policy_from_mapping(data, source="settings.groundplane")
    assert str(caught.value) == (
        "settings.groundplane: facts.regions.kind: expected one of ranking, table, domain, "
        "value, documents, got 'domian'. Fix: did you mean 'domain'?"
    )
    assert (caught.value.path, caught.value.line) == ("facts.regions.kind", None)


@pytest.mark.parametrize(
    "tag",
    ["!!python/object/apply:builtins.open", "!!python/object/new:builtins.open"],
)
def test_python_tags_are_refused_and_the_canary_never_runs(tmp_path: Path, tag: str) -> None:
    """A `!!python` tag that would create a file is refused at load and the file never appears."""
    canary = tmp_path / "canary"
    text = f'version: 1\nboundaries: {tag} ["{canary}", "w"]\n'
    with pytest.raises(PolicyError) as caught:
        load_policy(write(tmp_path, text))
    assert not canary.exists()
    assert "refused YAML: could not determine a constructor for the tag" in str(caught.value)
    assert str(caught.value).endswith(
        "Fix: a policy holds plain data (mappings, lists, strings, numbers, booleans): remove "
        "the tag; no code or object is ever constructed from a policy"
    )
    # The canary is live: an unsafe loader really would have created the file.
    yaml.unsafe_load(text)
    assert canary.exists()


def test_aliases_may_share_a_block_between_boundaries(tmp_path: Path) -> None:
    """An anchor reused by two boundaries is plain YAML reuse and loads into equal specs."""
    text = BASE.replace(
        "    facts: [campaign_ctr]\n",
        "    facts: [campaign_ctr]\n    match: &m {agent_name: a}\n",
        1,
    )
    text += "  second:\n    facts: [campaign_ctr]\n    match: *m\n    checks: [{superlative: {}}]\n"
    first, second = load_policy(write(tmp_path, text)).boundaries
    assert first.match == second.match == MatchSpec(agent_name="a")


def test_non_utf8_file_names_the_byte_and_the_fix(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 fail at load as a PolicyError, not a UnicodeDecodeError."""
    path = tmp_path / "policy.yaml"
    path.write_bytes(b"version: 1\nmode: \xff\n")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f"{path}: <top level>: the file is not UTF-8 text (invalid start byte at byte 17). "
        "Fix: save the policy as UTF-8"
    )


def bomb(levels: int, fanout: int = 9) -> str:
    """A YAML alias bomb as the ``k`` argument of a check: each level lists the previous one
    ``fanout`` times, so a few lines stand for ``fanout ** levels`` values."""
    value = "&a0 [x, x, x, x, x, x, x, x, x]"
    for level in range(1, levels):
        value = f"&a{level} [{value}" + f", *a{level - 1}" * (fanout - 1) + "]"
    return BASE.replace(
        "superlative: {winner_field: winner}", f"ranking_prefix: {{field: top, k: {value}}}"
    )


def test_an_alias_bomb_is_refused_at_load_with_a_short_located_error(tmp_path: Path) -> None:
    """Ten levels (~3.5 billion values once expanded; it used to take minutes and gigabytes)
    fail at load in milliseconds: a short PolicyError at the alias that crosses the bound."""
    path = write(tmp_path, bomb(10))
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f"{path}:9: boundaries.report.checks[0].ranking_prefix.k[0][0][0][0][0][1]: aliases "
        "expand the policy past 10,000 values (an alias bomb?). Fix: write the values out, or "
        "reuse fewer and smaller anchors"
    )


def test_check_policy_refuses_an_alias_bomb_in_one_short_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``groundplane-otel check-policy`` on the bomb exits 1 with one line under 400 characters."""
    from groundplane_otel.cli import main

    assert main(["check-policy", write(tmp_path, bomb(10))]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert len(err) < 400
    assert "alias bomb" in err


def test_aliases_under_the_bound_load_and_echo_a_capped_value(tmp_path: Path) -> None:
    """Four levels (6,561 values) are within the bound: the builder refuses the list as ``k``,
    and the message echoes at most 200 characters of it, then an ellipsis."""
    with pytest.raises(PolicyError) as caught:
        load_policy(write(tmp_path, bomb(4)))
    problem = caught.value.problem
    assert problem.startswith("k must be None or an int >= 1, got [[[['x', 'x'")
    assert len(problem) == 201
    assert problem.endswith("…")


@pytest.mark.parametrize(
    ("text", "where", "echoed"),
    [
        (BASE.replace("version: 1", "version: 1\nmode: " + "z" * 5_000), "mode", "z"),
        (BASE.replace("  report:\n", "  report:\n    " + "k" * 1_000 + ": 1\n"), "key", "k"),
        (
            BASE.replace("facts: [campaign_ctr]", "facts: [" + "f" * 5_000 + "]"),
            "fact",
            "f",
        ),
        (BASE.replace("superlative: {", "s" * 1_000 + ": {"), "family", "s"),
    ],
)
def test_every_echoed_value_is_capped_at_200_characters(
    tmp_path: Path, text: str, where: str, echoed: str
) -> None:
    """A 5,000-character value (a mode, a fact name) or a 1,000-character key (YAML's longest
    plain key; a key, a check family): the error echoes its first 200 characters (quoted) and
    an ellipsis, never the whole value."""
    with pytest.raises(PolicyError) as caught:
        load_policy(write(tmp_path, text))
    message = str(caught.value)
    assert echoed * 199 + "…" in message, (where, message[:300])
    assert echoed * 201 not in message
    assert len(message) < 1_200
