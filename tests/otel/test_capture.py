"""Span -> fact: tool calls read from GenAI, OpenInference and Traceloop spans, typed by their
FactSpec, with provenance pointing at the tool span; unmatched tools cost no metric series."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_harness import SALES_ROWS, Harness

from groundplane_otel.facts import Domain, Provenance, Ranking, Table
from groundplane_otel.otel import FactSpec, GuardConfig, trace_registry
from groundplane_otel.otel._engine.capture import ToolCall, build_fact, read_tool_call


class TestReadToolCall:
    def test_genai_execute_tool_span(self) -> None:
        """GenAI: name, call id, arguments and result attributes."""
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "top_sales",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"year": 2025}',
            "gen_ai.tool.call.result": "[]",
        }
        assert read_tool_call(attributes, "execute_tool top_sales") == ToolCall(
            "genai", "top_sales", "call_1", '{"year": 2025}', "[]"
        )

    def test_genai_tool_name_from_span_name(self) -> None:
        """An execute_tool span without gen_ai.tool.name is named by its span name."""
        call = read_tool_call({"gen_ai.operation.name": "execute_tool"}, "execute_tool top_sales")
        assert call is not None
        assert call.tool == "top_sales"

    def test_openinference_tool_span(self) -> None:
        """OpenInference TOOL: tool.name, tool.id, input.value, output.value."""
        attributes = {
            "openinference.span.kind": "TOOL",
            "tool.name": "top_sales",
            "tool.id": "call_9",
            "input.value": "{}",
            "output.value": "[]",
        }
        assert read_tool_call(attributes, "top_sales") == ToolCall(
            "openinference", "top_sales", "call_9", "{}", "[]"
        )

    def test_traceloop_entity(self) -> None:
        """Traceloop: traceloop.entity.name / input / output."""
        attributes = {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "top_sales",
            "traceloop.entity.input": "{}",
            "traceloop.entity.output": "[]",
        }
        assert read_tool_call(attributes, "top_sales.tool") == ToolCall(
            "traceloop", "top_sales", None, "{}", "[]"
        )

    def test_other_spans_are_not_tool_calls(self) -> None:
        """A chat or HTTP span is not a tool call."""
        assert read_tool_call({"gen_ai.operation.name": "chat"}, "chat gpt") is None
        assert read_tool_call({"http.method": "GET"}, "GET /") is None


class TestBuildFact:
    def test_ranking_from_rows(self) -> None:
        """key/score columns rank rows best-first, found under path."""
        spec = FactSpec("sales", "t", kind="ranking", key="region", score="total", path="rows")
        ranking = build_fact(
            spec, {"rows": [{"region": "US", "total": 7}, {"region": "EU", "total": 10}]}
        )
        assert ranking == Ranking("total", (("EU", 10), ("US", 7)))

    def test_ranking_from_object_lower_is_better(self) -> None:
        """A {name: score} object ranks by value; higher_is_better=False puts the lowest first."""
        spec = FactSpec("latency", "t", kind="ranking", higher_is_better=False)
        assert build_fact(spec, {"a": 3, "b": 1}) == Ranking("score", (("b", 1), ("a", 3)), False)

    def test_table_keeps_exhaustive_flag(self) -> None:
        """Rows become a Table keyed by key; exhaustive=False marks a truncated result."""
        spec = FactSpec("sales", "t", kind="table", key="region", exhaustive=False, path="rows")
        table = build_fact(spec, SALES_ROWS)
        assert isinstance(table, Table)
        assert (table.keys, table.columns, table.exhaustive) == (
            ("EU", "US"),
            ("region", "total"),
            False,
        )

    def test_table_columns_are_every_rows_keys_in_order_of_first_appearance(self) -> None:
        """A key only later rows carry is a column too, after the first row's keys; rows with
        the first row's keys in another order keep the first row's order."""
        spec = FactSpec("sales", "t", kind="table", key="region")
        rows = [
            {"region": "EU", "total": 1},
            {"total": 2, "region": "US"},
            {"region": "JP", "x": 3},
        ]
        assert build_fact(spec, rows).columns == ("region", "total", "x")
        assert build_fact(spec, rows[:2]).columns == ("region", "total")

    def test_domain_from_list_and_from_rows(self) -> None:
        """A list of names, or the key column of rows, is a Domain."""
        assert build_fact(FactSpec("d", "t", kind="domain"), ["a", "b"]) == Domain(
            frozenset({"a", "b"})
        )
        spec = FactSpec("d", "t", kind="domain", key="region", path="rows")
        assert build_fact(spec, SALES_ROWS) == Domain(frozenset({"EU", "US"}))

    def test_value_at_path(self) -> None:
        """A value fact is the payload (at path) as is."""
        assert build_fact(FactSpec("n", "t", path="meta.count"), {"meta": {"count": 3}}) == 3

    @pytest.mark.parametrize(
        ("spec", "payload"),
        [
            (FactSpec("s", "t", kind="ranking", key="region", score="total"), [{"region": "EU"}]),
            (
                FactSpec("s", "t", kind="ranking", key="region", score="total"),
                [{"region": "EU", "total": "10"}],
            ),
            (FactSpec("s", "t", kind="table", key="region"), {"region": "EU"}),
            (FactSpec("s", "t", kind="domain"), "EU"),
            (FactSpec("s", "t", path="rows"), {"data": []}),
        ],
        ids=["missing-score", "string-score", "not-rows", "string-domain", "path-missing"],
    )
    def test_misshaped_results_raise(self, spec: FactSpec, payload: Any) -> None:
        """A result that does not have the declared shape is a ValueError/TypeError."""
        with pytest.raises((ValueError, TypeError)):
            build_fact(spec, payload)


def _config(*facts: FactSpec) -> GuardConfig:
    return GuardConfig(facts=facts)


class TestCaptureThroughTheSdk:
    def test_genai_tool_span_records_fact_with_provenance(self, otel: Harness) -> None:
        """The fact's provenance is the tool, its arguments, the span's ids and the call id."""
        guard = otel.install(
            _config(
                FactSpec(
                    "sales", "top_sales", kind="ranking", key="region", score="total", path="rows"
                )
            )
        )
        with otel.tracer.start_as_current_span("request"):
            tool = otel.tool(SALES_ROWS, **{"gen_ai.tool.call.arguments": '{"year": 2025}'})
            fact = trace_registry(guard=guard).get("sales")
        assert fact.value == Ranking("total", (("EU", 10), ("US", 7)))
        assert fact.provenance == Provenance(
            "top_sales",
            {"year": 2025},
            f"{tool.context.trace_id:032x}",
            f"{tool.context.span_id:016x}",
            "call_1",
        )

    def test_openinference_and_traceloop_sources(self, otel: Harness) -> None:
        """OpenInference and Traceloop tool spans record facts with their fixed source label."""
        guard = otel.install(
            _config(FactSpec("a", "tool_a", kind="domain"), FactSpec("b", "tool_b"))
        )
        with otel.tracer.start_as_current_span("request"):
            oi = {
                "openinference.span.kind": "TOOL",
                "tool.name": "tool_a",
                "output.value": '["x", "y"]',
            }
            with otel.tracer.start_as_current_span("tool_a", attributes=oi):
                pass
            tl = {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "tool_b",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"q": 1}}),
                "traceloop.entity.output": '{"n": 2}',
            }
            with otel.tracer.start_as_current_span("tool_b.tool", attributes=tl):
                pass
            registry = trace_registry(guard=guard)
            assert registry.domain("a") == Domain(frozenset({"x", "y"}))
            assert registry.value("b") == {"n": 2}
            assert registry.provenance("b").args == {"q": 1}
        sources = sorted(
            attrs["groundplane.fact.source"] for attrs, _ in otel.metrics()["groundplane.facts"]
        )
        assert sources == ["openinference", "traceloop"]

    def test_arguments_select_which_call_feeds_the_fact(self, otel: Harness) -> None:
        """A FactSpec with arguments= records only the calls whose arguments include them."""
        spec = FactSpec("eu_sales", "sales", arguments={"region": "EU"})
        guard = otel.install(_config(spec))
        with otel.tracer.start_as_current_span("request"):
            otel.tool(
                {"total": 7}, name="sales", **{"gen_ai.tool.call.arguments": '{"region": "US"}'}
            )
            otel.tool(
                {"total": 10}, name="sales", **{"gen_ai.tool.call.arguments": '{"region": "EU"}'}
            )
            assert trace_registry(guard=guard).value("eu_sales") == {"total": 10}

    def test_tool_span_without_content_records_nothing(self, otel: Harness) -> None:
        """Without gen_ai.tool.call.result (content capture off) nothing is recorded or counted."""
        guard = otel.install(_config(FactSpec("sales", "top_sales")))
        with otel.tracer.start_as_current_span("request"):
            otel.tool(None)
            assert "sales" not in trace_registry(guard=guard)
        assert "groundplane.facts" not in otel.metrics()

    def test_thousands_of_unknown_tools_create_no_series(self, otel: Harness) -> None:
        """Tool names are never metric attributes: unmatched tools add no series at all."""
        otel.install(_config(FactSpec("sales", "top_sales")))
        with otel.tracer.start_as_current_span("request"):
            for number in range(2_000):
                otel.tool({"n": number}, name=f"tool_{number}")
            otel.tool({"n": 1})
        assert otel.metrics()["groundplane.facts"] == [
            (
                {
                    "groundplane.fact.kind": "value",
                    "groundplane.fact.source": "genai",
                    "groundplane.fact.outcome": "recorded",
                },
                1,
            )
        ]
