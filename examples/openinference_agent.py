"""The OpenAI Agents SDK example traced by OpenInference (openinference-instrumentation-openai-
agents) instead of the OpenTelemetry GenAI instrumentations: same agent, same ``guard(...)``
line. OpenInference names the agent on its AGENT span only when that span ends, so the span path
could never match it by name; the guardrail does not need to — it runs in the SDK, with the agent
in hand. The guardrail's event lands on OpenInference's GUARDRAIL span.

    python examples/openinference_agent.py
"""

from __future__ import annotations

import sys

from openai_agents_agent import main

if __name__ == "__main__":
    sys.argv.append("--openinference")
    main()
