"""An OpenAI agent traced by Traceloop's opentelemetry-instrumentation-openai, run in its own
process by test_framework_traceloop.py (Traceloop's ``uninstrument()`` leaves its wrappers on
openai 3.x, so it must never share a process with the other OpenAI tests).

Usage: ``traceloop_app.py BASE_URL stream|plain|stream-enforce|stream-guarded``
(``stream-guarded``: the stream read through ``guard_stream``). The guard and the providers are
the integration harness's; the tool result is recorded by the guard's ``tool`` decorator.
Prints one JSON document: what the app saw, and what was exported.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai  # noqa: E402
from framework_kit import AGENT, config, content_texts, outputs, warehouse_query  # noqa: E402
from integration_harness import Otel, events  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

from groundplane_otel.otel import enforce, guard_stream, tool  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "warehouse_query",
            "parameters": {"type": "object", "properties": {"window": {"type": "string"}}},
        },
    }
]


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def final_answer(client: Any, messages: list[Any], mode: str, seen: dict[str, Any]) -> str:
    if not mode.startswith("stream"):
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return str(final.choices[0].message.content)
    chunks = client.chat.completions.create(model="gpt-fake-1", messages=messages, stream=True)
    if mode == "stream-guarded":
        seen["received"] = ""
        for chunk in guard_stream(chunks):
            seen["received"] += "".join(c.delta.content or "" for c in chunk.choices)
        return str(seen["received"])
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


def main() -> None:
    base_url, mode = sys.argv[1], sys.argv[2]
    records = Records()
    logging.getLogger().addHandler(records)
    logging.getLogger().setLevel(logging.INFO)
    otel = Otel()
    otel.install(config())
    OpenAIInstrumentor().instrument(tracer_provider=otel.tracer_provider)
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Which campaign won?"}]
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    seen: dict[str, Any] = {"raised": None, "answer": None}
    try:
        with (
            enforce() if mode == "stream-enforce" else contextlib.nullcontext(),
            otel.tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes),
        ):
            first = client.chat.completions.create(
                model="gpt-fake-1", messages=messages, tools=TOOLS
            )
            call = first.choices[0].message.tool_calls[0]
            result = tool("warehouse_query")(warehouse_query)(**json.loads(call.function.arguments))
            messages += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
            ]
            text = final_answer(client, messages, mode, seen)
            seen["answer"] = json.loads(text)
    except Exception as exc:
        seen["raised"] = type(exc).__name__
    spans = [
        {
            "name": span.name,
            "outcome": (span.attributes or {}).get("groundplane.outcome"),
            "status": span.status.status_code.name,
            "events": [event["name"] for event in events(span)],
        }
        for span in otel.spans()
    ]
    swallowed = otel.metrics().get("groundplane.outputs.swallowed", [])
    texts = [text for _, text in content_texts(otel, records.records)]
    print(
        json.dumps(
            {
                **seen,
                "spans": spans,
                "outputs": outputs(otel),
                "swallowed": [value for _, value in swallowed],
                "texts": texts,
            }
        )
    )
    otel.close()


if __name__ == "__main__":
    main()
