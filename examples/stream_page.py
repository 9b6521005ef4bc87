"""A web page that streams a guarded answer: Starlette, server-sent events, ``guard_stream``.

Each sentence of the model's answer is checked before the page receives any of it; a sentence
quoting a number no record supports stops the answer, and the page shows the refusal instead.
No API key, no network: a scripted model streams its answer token by token.

    python examples/stream_page.py        # then open http://127.0.0.1:8037/?q=wrong (or right)

``build_app()`` returns the ASGI app on providers of its own (the browser test serves it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from groundplane_otel import UnsupportedClaim, numbers_recorded
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    GuardConfig,
    MatchSpec,
    guard_stream,
    install,
    tool,
)

AGENT = "invoice-assistant"
INVOICES = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
ANSWERS = {
    "right": FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars.",
    "wrong": FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars.",
}
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice assistant</title></head>
<body>
<h1>Invoice assistant</h1>
<p id="answer"></p>
<p id="refusal" hidden></p>
<p id="status">streaming</p>
<script>
const q = new URLSearchParams(location.search).get("q") || "right";
const source = new EventSource("/answer?q=" + encodeURIComponent(q));
const answer = document.getElementById("answer");
const status = document.getElementById("status");
source.addEventListener("delta", (e) => { answer.textContent += JSON.parse(e.data); });
source.addEventListener("refusal", (e) => {
  const refusal = document.getElementById("refusal");
  refusal.textContent = JSON.parse(e.data);
  refusal.hidden = false;
  status.textContent = "refused";
  source.close();
});
source.addEventListener("done", () => { status.textContent = "done"; source.close(); });
</script>
</body></html>
"""


async def scripted_model(answer: str) -> AsyncIterator[str]:
    """The model: ``answer`` one word (with its leading space) at a time."""
    for index, word in enumerate(answer.split(" ")):
        await asyncio.sleep(0.005)
        yield (" " if index else "") + word


def build_app() -> Starlette:
    """The page and its answer stream, guarded (enforce mode, facts per request)."""
    provider = TracerProvider(sampler=ALWAYS_ON)
    spec = BoundarySpec(
        "invoice_answer",
        ("invoice",),
        (numbers_recorded("invoice"),),
        match=MatchSpec(agent_name=AGENT),
        report_mode="first",  # the refusal is the first unsupported claim
        answer="text",
    )
    fact = FactSpec("invoice", "invoice_query", kind="table", key="id")
    guard = install(
        GuardConfig(facts=(fact,), boundaries=(spec,)),
        tracer_provider=provider,
        meter_provider=MeterProvider(),
    )
    tracer = provider.get_tracer("stream-page")
    invoice_query = tool("invoice_query", guard=guard)(lambda: INVOICES)

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(PAGE)

    async def answer(request: Request) -> EventSourceResponse:
        text = ANSWERS.get(request.query_params.get("q", "right"), ANSWERS["right"])

        async def events() -> AsyncIterator[dict[str, Any]]:
            attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
            with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
                invoice_query()
                try:
                    async for delta in guard_stream(scripted_model(text), guard=guard):
                        yield {"event": "delta", "data": json.dumps(delta)}
                except UnsupportedClaim as refusal:
                    message = f"Answer stopped: a claim could not be verified ({refusal.code})."
                    yield {"event": "refusal", "data": json.dumps(message)}
                    return
            yield {"event": "done", "data": "{}"}

        return EventSourceResponse(events())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        guard.uninstall()  # the server stopped: the guard and its providers go with it
        provider.shutdown()

    return Starlette(routes=[Route("/", page), Route("/answer", answer)], lifespan=lifespan)


def main() -> int:
    import uvicorn

    uvicorn.run(build_app(), host="127.0.0.1", port=8037)
    return 0


if __name__ == "__main__":
    sys.exit(main())
