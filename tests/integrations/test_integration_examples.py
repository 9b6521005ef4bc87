"""The integration examples run as subprocesses and print exactly what their docstrings promise:
the wrong argmax is caught (reask, block, raise) and the right answer goes through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLAIM = (
    "unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance={provenance} | computed argmax on {key} is "
    "'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)


def run(script: str, *args: str) -> list[str]:
    """Run an example with this interpreter; it must exit 0 and print nothing on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GROUNDPLANE_"))}
    # This checkout's package, not whichever copy the interpreter has installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout.splitlines()


def test_langgraph_agent_takes_the_reask_edge() -> None:
    """The scripted wrong winner is routed to reask, the corrected one ends the run, and the
    guarded node's checks appear as spans and claims metrics."""
    claim = CLAIM.format(provenance="warehouse.query(window='7d')", key="'ctr'")
    assert run("langgraph_agent.py") == [
        'model:  {"winner": "north", "ctr": 0.0412}',
        f"guard:  {claim}",
        "reask:  the model is asked again with the violation in its prompt",
        'model:  {"winner": "harbour", "ctr": 0.0455}',
        'answer: {"winner": "harbour", "ctr": 0.0455}',
        "path:   tool -> violation -> reask -> model",
        "span:   guarded_node model outcome=blocked events=['wrong_winner'] "
        "evaluations=['unsupported']",
        "span:   guarded_node model outcome=passed events=[] evaluations=['supported']",
        "metric: groundplane.claims verdict=unsupported 1",
        "metric: groundplane.claims verdict=supported 1",
    ]


def test_mcp_agent_records_from_a_real_server_and_blocks() -> None:
    """Facts come from a real stdio MCP server, an isError result is refused, the right answer
    passes and the wrong one is blocked with its event pointing at the MCP call's span."""
    fact = (
        'fact:   campaign_ctr = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301} '
        "from campaign_ctr(window='7d')"
    )
    tool = (
        "tool:   MCP tool 'campaign_spend' returned an error result (isError=true): "
        "'billing backend unavailable'"
    )
    claim = CLAIM.format(provenance="campaign_ctr(window='7d')", key="'score'")
    assert run("mcp_agent.py") == [
        fact,
        tool,
        'model:  {"winner": "harbour", "ctr": 0.0455}',
        "guard:  passed",
        fact,
        tool,
        'model:  {"winner": "north", "ctr": 0.0412}',
        f"guard:  blocked: {claim}",
        "span:   chat scripted outcome=passed event->-",
        "span:   chat scripted outcome=blocked event->execute_tool campaign_ctr",
    ]


def test_openai_agent_raises_from_the_client_call() -> None:
    """Against the fake OpenAI server the right answer is returned and the wrong one raises out
    of chat.completions.create, leaving an ERROR chat span with the guardrail event."""
    claim = CLAIM.format(provenance="warehouse_query(window='7d')", key="'score'")
    assert run("openai_agent.py") == [
        'answer: {"winner": "harbour", "ctr": 0.0455}',
        f"blocked: {claim}",
        "span:   chat gpt-fake-1 outcome=passed status=UNSET events=[] evaluations=['supported']",
        "span:   chat gpt-fake-1 outcome=blocked status=ERROR events=['wrong_winner'] "
        "evaluations=['unsupported']",
    ]


# -- the framework adapters (examples/frameworks_policy.yaml, content capture off) -------------

REASK_CLAIM = CLAIM.format(provenance="warehouse_query(window='7d')", key="'score'")


def test_pydantic_ai_agent_reasks_then_raises() -> None:
    """reask=True: the wrong winner goes back as ModelRetry and the right one is returned;
    without reask the guard's exception leaves run_sync; events on the invoke_agent spans."""
    assert run("pydantic_ai_agent.py") == [
        'model:  {"winner": "north", "ctr": 0.0412}',
        'model:  {"winner": "harbour", "ctr": 0.0455}',
        'answer: {"winner":"harbour","ctr":0.0455}',
        'model:  {"winner": "north", "ctr": 0.0412}',
        "raised: UnsupportedClaim field=winner claimed=north",
        "span:   invoke_agent campaign-analyst outcome=passed events=['wrong_winner']",
        "span:   invoke_agent campaign-analyst outcome=blocked events=['wrong_winner']",
        "metric: groundplane.outputs outcome=blocked 2",
        "metric: groundplane.outputs outcome=passed 1",
    ]


def _agents_lines(span: str) -> list[str]:
    return [
        'answer: {"winner":"harbour","ctr":0.0455}',
        'tripwire: blocked "north" -> supported "harbour"',
        f"span:   {span} outcome=passed events=[]",
        f"span:   {span} outcome=blocked events=['wrong_winner']",
        "metric: groundplane.outputs outcome=passed 1",
        "metric: groundplane.outputs outcome=blocked 1",
    ]


def test_openai_agents_agent_trips_the_sdk_guardrail() -> None:
    """The right answer is returned, the wrong one trips OutputGuardrailTripwireTriggered with
    the report as output info (genai-openai-agents + genai-openai)."""
    assert run("openai_agents_agent.py") == _agents_lines("invoke_agent campaign-analyst")


def test_openinference_agent_trips_the_sdk_guardrail() -> None:
    """The same agent traced by OpenInference: the event lands on its GUARDRAIL span."""
    assert run("openinference_agent.py") == _agents_lines("groundplane")


def test_langchain_agent_reasks_through_the_middleware() -> None:
    """create_agent + GroundplaneMiddleware(on_violation="reask"): the violation goes back to
    the model, the corrected answer ends the run."""
    assert run("langchain_agent.py") == [
        f"reask:  {REASK_CLAIM}",
        'answer: {"winner": "harbour", "ctr": 0.0455}',
        "span:   invoke_agent campaign-analyst outcome=passed events=['wrong_winner']",
        "metric: groundplane.outputs outcome=blocked 1",
        "metric: groundplane.outputs outcome=passed 1",
    ]


def test_langgraph_prebuilt_agent_raises_through_the_post_model_hook() -> None:
    """create_react_agent + post_model_hook(agent_name=...): the guard's exception leaves
    invoke."""
    assert run("langchain_agent.py", "--langgraph") == [
        "raised: UnsupportedClaim field=winner claimed=north",
        "span:   invoke_agent campaign-analyst outcome=blocked events=['wrong_winner']",
        "metric: groundplane.outputs outcome=blocked 1",
    ]


def test_traceloop_agent_raises_plain_and_streamed_through_enforce() -> None:
    """Traceloop's openai instrumentation, no adapter: the right answer is returned and the
    wrong one raises, from the plain client call and from the enforce() scope around the
    streamed one; four openai.chat spans, two passed and two blocked."""
    raised = "raised UnsupportedClaim field=winner claimed=north"
    answer = 'answer {"winner": "harbour", "ctr": 0.0455}'
    assert run("traceloop_agent.py") == [
        f"plain: {answer}",
        f"plain: {raised}",
        f"streamed, enforce(): {answer}",
        f"streamed, enforce(): {raised}",
        "span:   openai.chat outcome=passed events=[]",
        "span:   openai.chat outcome=blocked events=['wrong_winner']",
        "span:   openai.chat outcome=passed events=[]",
        "span:   openai.chat outcome=blocked events=['wrong_winner']",
        "metric: groundplane.outputs outcome=passed 2",
        "metric: groundplane.outputs outcome=blocked 2",
    ]
