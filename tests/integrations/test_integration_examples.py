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


def run(script: str) -> list[str]:
    """Run an example with this interpreter; it must exit 0 and print nothing on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GROUNDPLANE_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
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
        "span:   guarded_node model outcome=blocked events=['wrong_winner']",
        "span:   guarded_node model outcome=passed events=[]",
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
        "span:   chat gpt-fake-1 outcome=passed status=UNSET events=[]",
        "span:   chat gpt-fake-1 outcome=blocked status=ERROR events=['wrong_winner']",
    ]
