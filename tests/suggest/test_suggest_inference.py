"""What suggest infers from what tools return and answers do, on traces recorded with the real
SDK: tables split by a selecting argument, a value's members, a difference of two rows, an
aggregate under a filter the tool arguments name, rankings; replay with the result agrees."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer

from groundplane_otel.cli import main
from groundplane_otel.otel.otlp_files import OtlpFileExporter
from groundplane_otel.otel.suggest.facts import infer_facts
from groundplane_otel.otel.suggest.runs import ToolResult

REGIONS = ("EU", "US", "APAC")


def tool(tracer: Tracer, name: str, arguments: dict[str, Any], result: Any) -> None:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
        "gen_ai.tool.call.result": json.dumps(result),
    }
    with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes):
        pass


def chat(tracer: Tracer, answer: dict[str, Any]) -> None:
    message = {"role": "assistant", "parts": [{"type": "text", "content": json.dumps(answer)}]}
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.output.messages": json.dumps([message]),
    }
    with tracer.start_as_current_span("chat m", attributes=attributes):
        pass


def record(path: Path, runs: int = 40) -> set[str]:
    """A sales agent: ``db.query(table=orders, region=EU)`` returns order rows of every region
    (the filter is left to the model), ``db.query(table=targets)`` one row per region,
    ``config.get`` an object; it answers the EU order total, the gap between two regions'
    targets and the currency. Every 8th run's total is wrong."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("inference-test")
    rng = random.Random(3)
    wrong_ids: set[str] = set()
    for index in range(runs):
        region = REGIONS[index % 3]
        orders = [
            {"order": f"o{index}-{n}", "region": REGIONS[n % 3], "amount": rng.randint(10, 99)}
            for n in range(9)
        ]
        targets = [{"region": r, "target": rng.randint(100, 999)} for r in REGIONS]
        settings = {"currency": rng.choice(["EUR", "USD"]), "fiscal_year": 2026}
        total = sum(row["amount"] for row in orders if row["region"] == "EU")
        wrong = index % 8 == 7
        answer = {
            "region": region,
            "total": total + (5 if wrong else 0),
            "vs": "US" if region != "US" else "EU",
            "gap": 0,
            "currency": settings["currency"],
        }
        by_region = {row["region"]: row["target"] for row in targets}
        answer["gap"] = by_region[answer["region"]] - by_region[answer["vs"]]
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sales"}
        with tracer.start_as_current_span("invoke_agent sales", attributes=agent) as root:
            tool(tracer, "db.query", {"table": "orders", "region": "EU"}, {"rows": orders})
            tool(tracer, "db.query", {"table": "targets"}, targets)
            tool(tracer, "config.get", {}, settings)
            chat(tracer, answer)
            if wrong:
                wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    provider.shutdown()
    return wrong_ids


def test_facts_checks_and_replay_of_a_multi_tool_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """db.query splits by ``table`` (its shapes differ by it); the total is a filtered sum,
    the gap a comparison, the currency a value's member; replay flags exactly the wrong runs."""
    traces = tmp_path / "traces.jsonl"
    wrong = record(traces)
    policy = tmp_path / "suggested.yaml"
    assert main(["suggest", "-o", str(policy), str(traces)]) == 0
    capsys.readouterr()
    data = yaml.safe_load(policy.read_text())
    assert data["facts"] == {
        "config_get": {"tool": "config.get", "kind": "value"},
        "db_query_orders": {
            "tool": "db.query",
            "arguments": {"table": "orders"},
            "kind": "table",
            "key": "order",
            "path": "rows",
        },
        "db_query_targets": {
            "tool": "db.query",
            "arguments": {"table": "targets"},
            "kind": "table",
            "key": "region",
        },
    }
    checks = data["boundaries"]["sales"]["checks"]
    assert {
        "aggregate_reconciles": {
            "fact": "db_query_orders",
            "field": "total",
            "column": "amount",
            "op": "sum",
            "where": {"region": "EU"},
        }
    } in checks
    assert {
        "field_matches_fact": {"fact": "config_get", "field": "currency", "path": "currency"}
    } in checks
    assert {
        "comparison": {
            "fact": "db_query_targets",
            "a_field": "region",
            "b_field": "vs",
            "delta_field": "gap",
            "column": "target",
        }
    } in checks
    code = main(["replay", "--policy", str(policy), "--json", "--quiet", str(traces)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {finding["trace_id"] for finding in report["findings"]} == wrong
    assert report["boundaries"]["sales"]["outcomes"] == {"passed": 35, "flagged": 5}


def test_a_tool_whose_calls_differ_only_in_data_is_one_fact() -> None:
    """Calls differing by an argument that does not change the result's shape (a window) make
    one fact, with no ``arguments:``; rows under a key give its ``path``."""
    results = [
        ToolResult(
            "q", {"window": w}, {"rows": [{"name": "a", "x": 1}, {"name": "b", "x": 2}]}, False
        )
        for w in ("1d", "2d", "3d")
    ]
    facts = infer_facts(results)
    assert [fact.as_mapping() for fact in facts] == [
        {"tool": "q", "kind": "table", "key": "name", "path": "rows"},
        {"tool": "q", "kind": "ranking", "key": "name", "score": "x", "path": "rows"},
    ]
    assert [fact.spec.name for fact in facts] == ["q", "q_ranking"]


def test_retrievals_are_documents_and_rows_without_a_unique_name_are_a_value() -> None:
    """A retrieval's result is ``documents``; rows with no unique string column are a value."""
    retrieval = ToolResult("kb", {"query": "x"}, [{"id": "d1", "content": "c"}], True)
    rows = ToolResult("log", {}, [{"level": "info"}, {"level": "info"}], False)
    facts = infer_facts([retrieval, rows])
    assert [(fact.spec.name, fact.spec.kind, fact.why) for fact in facts] == [
        ("kb", "documents", "retrieved documents (1 of 1 results)"),
        ("log", "value", "rows with no unique name column (1 of 1 results)"),
    ]


def test_rows_are_found_at_any_depth_and_the_path_said() -> None:
    """Rows under two keys, rows inside a list (``0``: the first list), and the shallowest
    keyed rows chosen over deeper ones (named in the comment)."""
    rows = [{"rep": "ann", "amount": 1.5}, {"rep": "bob", "amount": 2.25}]
    nested = ToolResult("a", {}, {"data": {"items": rows}, "status": "ok"}, False)
    listed = ToolResult(
        "b", {}, [[{"rep": "cy", "amount": 1}], [{"rep": "di", "amount": 2}]], False
    )
    pages = [{"page": 1, "lines": rows}]
    shallow = ToolResult("c", {}, {"teams": [{"team": "x", "n": 1}], "pages": pages}, False)
    facts = {
        f.spec.name: (f.as_mapping().get("path"), f.why)
        for f in infer_facts([nested, listed, shallow])
    }
    assert facts == {
        "a": ("data.items", "a table of rows keyed by 'rep' under 'data.items' (1 of 1 results)"),
        "a_ranking": ("data.items", "the same rows ranked by 'amount'"),
        "b": (
            "0",
            "a table of rows keyed by 'rep' under '0', chosen over the rows under '1' "
            "(1 of 1 results)",
        ),
        "b_ranking": ("0", "the same rows ranked by 'amount'"),
        "c": (
            "teams",
            "a table of rows keyed by 'team' under 'teams', chosen over the rows under 'pages', "
            "'pages.0.lines' (1 of 1 results)",
        ),
        "c_ranking": ("teams", "the same rows ranked by 'n'"),
    }
