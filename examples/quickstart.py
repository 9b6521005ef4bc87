"""Quickstart: the groundplane core, no OpenTelemetry (`make quickstart`).

The argmax is computed in code when the tool result is recorded; the model's structured answer
can only phrase it. A right answer passes, a wrong winner raises with the full provenance, and
report mode lists every violation at once (what a reask loop feeds back to the model).
"""

from __future__ import annotations

from groundplane_otel import (  # a groundplane user only switches this import
    ClaimsUnsupported,
    FactRegistry,
    UnsupportedClaim,
    boundary,
    entities_recorded,
    ranking_prefix,
    superlative,
)


def main() -> None:
    reg = FactRegistry()
    reg.record_ranking(
        "campaign_ctr",
        {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301},
        key="ctr",
        tool="warehouse.query",
        args={"table": "campaign_daily", "window": "7d"},
    )
    print("recorded campaign_ctr; computed winner:", reg.get("campaign_ctr").value.winner)

    print("\n1. the model names the computed winner")
    checks = [superlative(fact="campaign_ctr", score_field="ctr")]
    with boundary(reg, facts=["campaign_ctr"], checks=checks) as b:
        b.submit({"winner": "harbour", "ctr": 0.0455})
    print("   passed")

    print("\n2. the model names the runner-up")
    try:
        with boundary(reg, facts=["campaign_ctr"], checks=checks) as b:
            b.submit({"winner": "north", "ctr": 0.0412})
    except UnsupportedClaim as exc:
        print(f"   UnsupportedClaim: {exc}")

    print("\n3. report mode: every violation at once, for a reask loop")
    checks = [
        superlative(fact="campaign_ctr", score_field="ctr"),
        ranking_prefix(fact="campaign_ctr", field="top", k=2),
        entities_recorded(fields=["mentioned"], fact="campaign_ctr"),
    ]
    output = {"winner": "north", "ctr": 0.0455, "top": ["north", "harbour"], "mentioned": ["nort"]}
    with boundary(reg, facts=["campaign_ctr"], checks=checks) as b:
        report = b.report(output)
    print(f"   ok={report.ok} passed={list(report.passed)}")
    for line in report.to_text().splitlines():
        print(f"   - {line}")

    print('\n4. mode="all" raises ClaimsUnsupported carrying the same report')
    try:
        with boundary(reg, facts=["campaign_ctr"], checks=checks, mode="all") as b:
            b.submit(output)
    except ClaimsUnsupported as exc:
        print(f"   ClaimsUnsupported with {len(exc.report.violations)} violations, from:")
        for name in exc.report.failed:
            print(f"   - {name}")


if __name__ == "__main__":
    main()
