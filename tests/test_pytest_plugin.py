"""The pytest plugin, run for real with ``pytester``: the ``groundplane`` fixture and marker in
a user's test suite, the failure report, teardown, and that nothing changes for suites that do
not use it (loaded through the ``pytest11`` entry point, in a fresh interpreter)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import grounded_agent
import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ("-p", "groundplane_otel.pytest_plugin")
HEX = {"trace": "[0-9a-f]{32}", "span": "[0-9a-f]{16}"}


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A user's suite: the scripted agent module and a policy file in ``agents/``; the plugin
    is loaded explicitly (``-p``), entry-point autoloading off, so the inner run sees exactly
    this plugin whether or not groundplane-otel's entry point is installed."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(grounded_agent=Path(grounded_agent.__file__).read_text("utf-8"))
    pytester.mkdir("agents")
    (pytester.path / "agents" / "policy.yaml").write_text(grounded_agent.POLICY_YAML, "utf-8")
    pytester.syspathinsert()
    return pytester


def write_test(suite: pytest.Pytester, body: str, name: str = "test_agent.py") -> Path:
    path = suite.path / "agents" / name
    path.write_text(
        "import pytest\nfrom grounded_agent import run_agent\n\n" + body, encoding="utf-8"
    )
    return path


def test_a_grounded_agent_test_passes(suite: pytest.Pytester) -> None:
    """Marker with a policy file relative to the test file (run from another directory), the
    agent traced with the fixture's tracer provider: the test passes."""
    write_test(
        suite,
        """
@pytest.mark.groundplane(policy="policy.yaml")
def test_report(groundplane):
    run_agent(groundplane.tracer_provider.get_tracer("app"), "EU")
    assert groundplane.outcomes() == {"answer": {"passed": 1}}
    groundplane.assert_grounded()
""",
    )
    result = suite.runpytest(*PLUGIN, "--strict-markers")
    result.assert_outcomes(passed=1)


def test_an_ungrounded_answer_fails_the_test_with_the_findings(suite: pytest.Pytester) -> None:
    """The report shows the test line that asserted and the failure text, line by line."""
    write_test(
        suite,
        """
@pytest.mark.groundplane("policy.yaml", mode="observe", capture_content=True)
def test_report(groundplane):
    run_agent(groundplane.tracer, "US")
    groundplane.assert_grounded()
""",
    )
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines(
        [
            r">       groundplane.assert_grounded\(\)$",
            r"E       Failed: groundplane: 1 of 1 checked output\(s\) not grounded$",
            r"E       outputs: boundary 'answer': 1 flagged$",
            r"E       finding 1 of 1: unsupported \(wrong_winner\) at boundary 'answer'$",
            r"E         check superlative\(fact='sales', field='winner'\), field 'winner', "
            r"fact 'sales'$",
            rf"E         on span 'chat gpt-test' \(trace {HEX['trace']}, span {HEX['span']}\)$",
            r'E         claimed "US", supported "EU"$',
            r"E         unsupported claim in field 'winner': model said 'US', ",
            r"agents/test_agent.py:\d+: Failed$",
        ],
        consecutive=False,
    )
    # Nothing of the plugin's own frames: the traceback stops at the user's test.
    assert "testing.py" not in result.stdout.str()


def test_a_test_that_saw_no_output_fails(suite: pytest.Pytester) -> None:
    """An agent traced elsewhere (the global provider) is never seen: the test fails and says
    what to check; at_least=0 lets a test accept that on purpose."""
    write_test(
        suite,
        """
from opentelemetry import trace

@pytest.mark.groundplane("policy.yaml")
def test_elsewhere(groundplane):
    run_agent(trace.get_tracer("app"), "EU")
    groundplane.assert_grounded()

@pytest.mark.groundplane("policy.yaml")
def test_on_purpose(groundplane):
    groundplane.assert_grounded(at_least=0)
""",
    )
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "E       Failed: groundplane: expected at least 1 checked output(s), saw 0",
            "E       outputs: none counted — is the agent traced with "
            "groundplane.tracer_provider, and does a boundary of the policy match its spans?",
        ]
    )


def test_guard_config_forms_marker_levels_and_the_factory(suite: pytest.Pytester) -> None:
    """A GuardConfig in the marker (positional), a class marker overridden by the test's own,
    and the factory method for a test without a marker all work."""
    write_test(
        suite,
        """
from groundplane_otel.otel.policy import load_policy
from pathlib import Path

CONFIG = load_policy(Path(__file__).parent / "policy.yaml")

@pytest.mark.groundplane(CONFIG, mode="observe")
class TestAgent:
    def test_class_marker(self, groundplane):
        run_agent(groundplane.tracer, "US")
        assert groundplane.outcomes() == {"answer": {"flagged": 1}}

    @pytest.mark.groundplane(CONFIG)
    def test_own_marker_wins(self, groundplane):
        assert groundplane.guard.config.mode == "enforce"

def test_factory(groundplane):
    guard = groundplane.install(CONFIG)
    assert guard.check_output({"winner": "EU"}, boundary="answer").outcome == "error"
    assert groundplane.outcomes() == {"answer": {"error": 1}}
""",
    )
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(passed=3)


def test_teardown_uninstalls_the_guard_even_after_a_failure(suite: pytest.Pytester) -> None:
    """The guard of a failed test is uninstalled and its providers shut down before the next
    test runs; the next test gets a fresh guard."""
    write_test(
        suite,
        """
from groundplane_otel.otel.install import active_guards

SEEN = []

@pytest.mark.groundplane("policy.yaml")
def test_fails(groundplane):
    SEEN.append(groundplane)
    assert groundplane.guard in active_guards()
    run_agent(groundplane.tracer, "US")

@pytest.mark.groundplane("policy.yaml")
def test_next(groundplane):
    (previous,) = SEEN
    assert previous.closed and not previous.guard.active
    assert active_guards() == (groundplane.guard,)
    ended = len(previous.spans())
    run_agent(previous.tracer, "EU")  # shut down: nothing more reaches its exporter
    assert len(previous.spans()) == ended == 3
""",
    )
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*ClaimsUnsupported*"])


def test_misused_markers_are_setup_errors(suite: pytest.Pytester) -> None:
    """A marker without the fixture, with an unknown argument, without a policy, naming a
    missing file or a bad mode: each test errors at setup with one line naming the problem."""
    write_test(
        suite,
        """
@pytest.mark.groundplane("policy.yaml")
def test_no_fixture():
    pass

@pytest.mark.groundplane(polcy="policy.yaml")
def test_typo(groundplane):
    pass

@pytest.mark.groundplane()
def test_no_policy(groundplane):
    pass

@pytest.mark.groundplane("nowhere.yaml")
def test_missing_file(groundplane):
    pass

@pytest.mark.groundplane("policy.yaml", mode="loud")
def test_bad_mode(groundplane):
    pass
""",
    )
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(errors=5)
    result.stdout.fnmatch_lines(
        [
            "agents/test_agent.py::test_no_fixture: @pytest.mark.groundplane needs the "
            "groundplane fixture (add a `groundplane` argument and call "
            "groundplane.assert_grounded())",
            "@pytest.mark.groundplane: unknown argument(s) ['polcy'] (allowed: policy, mode, "
            "capture_content)",
            "@pytest.mark.groundplane: needs a policy: "
            "@pytest.mark.groundplane(policy='policy.yaml')",
            f"@pytest.mark.groundplane: {suite.path}/agents/nowhere.yaml: <top level>: cannot "
            "read the policy file (No such file or directory). Fix: check the path *",
            "@pytest.mark.groundplane: mode must be one of ('enforce', 'observe') or None, "
            "got 'loud'",
        ],
        consecutive=False,
    )


def test_the_marker_is_registered(suite: pytest.Pytester) -> None:
    """``pytest --markers`` documents the marker (and --strict-markers accepts it)."""
    result = suite.runpytest(*PLUGIN, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.groundplane(policy, *, mode=None, *"])


def test_the_example_suite_passes_once_and_fails_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``examples/test_demo_agent.py`` (the example of docs/pytest-plugin.md) runs as documented:
    the right answer passes, the regression fails with the demo's wrong-winner finding."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest(*PLUGIN, str(ROOT / "examples" / "test_demo_agent.py"))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       Failed: groundplane: 1 of 1 checked output(s) not grounded",
            "E       outputs: boundary 'campaign_report': 1 flagged",
            "E       finding 1 of 1: unsupported (wrong_winner) at boundary 'campaign_report'",
            'E         claimed "north", supported "harbour"',
        ]
    )


def _fake_install(pytester: pytest.Pytester) -> None:
    """Make the ``pytest11`` entry point declared in pyproject.toml visible to a fresh
    interpreter (a ``.dist-info`` on its path, as pip would write it), so the subprocess loads
    the plugin the way a user's pytest does."""
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    section = re.search(
        r"^\[project\.entry-points\.pytest11\]\n((?:[^\[\n].*\n)+)", pyproject, re.M
    )
    assert section is not None, "pyproject.toml declares no pytest11 entry point"
    ((name, target),) = re.findall(r'^(\w+) = "([\w.]+)"$', section.group(1), re.M)
    assert (name, target) == ("groundplane", "groundplane_otel.pytest_plugin")
    dist = pytester.path / "site" / "groundplane_otel_probe-0.0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: groundplane-otel-probe\nVersion: 0.0.0\n", "utf-8"
    )
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{name} = {target}\n", "utf-8")


def test_an_unrelated_suite_is_unaffected_by_the_installed_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Autoloaded through its entry point, the plugin adds to a test that does not use it
    exactly two modules, its own and the package namespace (no core module, no OpenTelemetry,
    no guard layer, no YAML: issue 19), and no global provider — compared with the same run
    under ``-p no:groundplane``, which also removes the fixture from a test that asks for it."""
    _fake_install(pytester)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("PYTHONPATH", f"{pytester.path / 'site'}:{ROOT}:{pytester.path}")
    pytester.makepyfile(
        test_a_plain="""
import json, os, sys

def test_plain():
    modules = sorted(sys.modules)
    from opentelemetry import metrics, trace
    providers = [type(trace.get_tracer_provider()).__name__,
                 type(metrics.get_meter_provider()).__name__]
    with open(os.environ["GROUNDPLANE_PROBE_DUMP"], "w") as dump:
        json.dump({"modules": modules, "providers": providers}, dump)
""",
        test_b_fixture="""
def test_uses_the_fixture(groundplane):
    assert groundplane.tracer_provider.get_tracer("app") is not None
""",
    )
    seen = {}
    for run, options in (("with", ()), ("without", ("-p", "no:groundplane"))):
        monkeypatch.setenv("GROUNDPLANE_PROBE_DUMP", str(pytester.path / f"{run}.json"))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *options)
        seen[run] = json.loads((pytester.path / f"{run}.json").read_text("utf-8"))
        if run == "with":
            result.assert_outcomes(passed=2)
        else:
            result.assert_outcomes(passed=1, errors=1)
            result.stdout.fnmatch_lines(["*fixture 'groundplane' not found*"])
    added = sorted(set(seen["with"]["modules"]) - set(seen["without"]["modules"]))
    assert added == ["groundplane_otel", "groundplane_otel.pytest_plugin"]
    assert seen["with"]["providers"] == seen["without"]["providers"]


def test_the_fixture_is_documented_by_fixtures(suite: pytest.Pytester) -> None:
    """``pytest --fixtures`` lists the fixture, from the plugin module, with its description."""
    result = suite.runpytest(*PLUGIN, "--fixtures")
    result.stdout.re_match_lines([r"groundplane -- .*groundplane_otel/pytest_plugin\.py:\d+$"])
    result.stdout.fnmatch_lines(["*A grounding guard on this test's own tracer/meter/logger*"])
