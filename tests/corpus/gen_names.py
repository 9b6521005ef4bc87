"""Corpus cases for the name- and row-reading families: entities_recorded, row_integrity and
field_matches_fact."""

from __future__ import annotations

import random
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from ._common import NON_FINITE, Emitter, names, repeat, scores
from .model import Case, FactSpec, truly_matches

FACT = "named"
EARLIER = "earlier_page"

# -- entities_recorded ----------------------------------------------------------------------


def _names_fact(rng: random.Random, labels: list[Hashable]) -> FactSpec:
    """The names as a Domain (strings only), a Ranking or a Table key column, at random."""
    kinds = ("ranking", "table") if not all(isinstance(n, str) for n in labels) else None
    kind = rng.choice(kinds or ("domain", "ranking", "table"))
    if kind == "domain":
        return FactSpec("domain", FACT, list(labels))
    if kind == "ranking":
        return FactSpec("ranking", FACT, [(n, rng.randrange(100)) for n in labels])
    rows = [{"id": n, "score": rng.randrange(100)} for n in labels]
    return FactSpec("table", FACT, rows, {"key": "id"})


def _pick_output(
    rng: random.Random, labels: list[Hashable], bad: Any = None
) -> tuple[dict[str, Any], list[str]]:
    """Fields holding recorded names (one name or a list); ``bad`` replaces one of them."""
    fields = rng.sample(["winner", "mentioned", "runner_up"], rng.randint(1, 3))
    output: dict[str, Any] = {}
    for field in fields:
        if field == "mentioned":
            output[field] = rng.sample(labels, rng.randint(1, min(4, len(labels))))
        else:
            output[field] = rng.choice(labels)
    if bad is not None:
        field = rng.choice(fields)
        if isinstance(output[field], list):
            output[field][rng.randrange(len(output[field]))] = bad
        else:
            output[field] = bad
    return output, fields


def entities_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("entities_recorded", cases, FACT)

    def strings(rng: random.Random) -> list[Hashable]:
        return names(rng, rng.randint(3, 40))

    def blended(rng: random.Random) -> bool:
        labels = strings(rng)
        a, b = rng.sample(labels, 2)
        assert isinstance(a, str)
        assert isinstance(b, str)
        claim = rng.choice(
            (f"{a} {b}", f"{a}{b}", f"{a}-{b}", f"{a}/{b}", a[: len(a) // 2] + b[len(b) // 2 :])
        )
        if claim in labels:
            return False
        output, fields = _pick_output(rng, labels, claim)
        check = {"fields": fields, "fact": FACT, "case_sensitive": rng.random() < 0.7}
        emit(
            "blended_name",
            "unsupported",
            [_names_fact(rng, labels)],
            check,
            output,
            "unknown_entity",
        )
        return True

    def case_drift(rng: random.Random) -> bool:
        labels = strings(rng)
        name = rng.choice(labels)
        assert isinstance(name, str)
        claim = rng.choice((name.upper(), name.title(), name.capitalize(), name.swapcase()))
        if claim in labels:
            return False
        output, fields = _pick_output(rng, labels, claim)
        check = {"fields": fields, "fact": FACT}
        if rng.random() < 0.5:
            check["case_sensitive"] = True
        emit(
            "case_drift", "unsupported", [_names_fact(rng, labels)], check, output, "unknown_entity"
        )
        return True

    def leaked_id(rng: random.Random) -> bool:
        ints = rng.random() < 0.5
        everything = names(rng, rng.randint(6, 40), ints=ints)
        cut = rng.randint(3, len(everything) - 2)
        labels, earlier = everything[:cut], everything[cut:]
        if ints and rng.random() < 0.5:
            claim: Any = rng.choice((str(rng.choice(labels)), float(rng.choice(labels))))
        else:
            claim = rng.choice(earlier)
        facts = [
            _names_fact(rng, labels),
            FactSpec(
                "domain",
                EARLIER,
                [str(n) for n in earlier],
                {"tool": "crm.search", "args": {"page": 1}},
            ),
        ]
        output, fields = _pick_output(rng, labels, claim)
        check = {"fields": fields, "fact": FACT, "case_sensitive": rng.random() < 0.7}
        emit("leaked_id", "unsupported", facts, check, output, "unknown_entity")
        return True

    def empty_list(rng: random.Random) -> bool:
        labels = names(rng, rng.randint(1, 30), ints=rng.random() < 0.2)
        if rng.random() < 0.7:
            output: dict[str, Any] = {"qualified": []}
            check: dict[str, Any] = {"fields": ["qualified"], "fact": FACT}
        else:
            output = {"summary": {"entities": []}}
            check = {"fields": ["name"], "fact": FACT, "path": "summary.entities"}
        emit("empty_list", "unsupported", [_names_fact(rng, labels)], check, output, "empty_list")
        return True

    def structured_value(rng: random.Random) -> bool:
        labels = names(rng, rng.randint(2, 30), ints=rng.random() < 0.3)
        name = rng.choice(labels)
        claim = rng.choice(({"name": name}, [[name]], [name, [name]], None, 3.5))
        output, fields = _pick_output(rng, labels)
        output[rng.choice(fields)] = claim
        check = {"fields": fields, "fact": FACT, "case_sensitive": rng.random() < 0.5}
        emit(
            "structured_value",
            "unsupported",
            [_names_fact(rng, labels)],
            check,
            output,
            "unknown_entity",
        )
        return True

    # -- supported --

    def recorded(rng: random.Random) -> bool:
        labels = names(rng, rng.randint(1, 40), ints=rng.random() < 0.3)
        output, fields = _pick_output(rng, labels)
        emit(
            "correct:recorded",
            "supported",
            [_names_fact(rng, labels)],
            {"fields": fields, "fact": FACT},
            output,
        )
        return True

    def case_insensitive(rng: random.Random) -> bool:
        labels = strings(rng)
        output, fields = _pick_output(rng, labels)
        for field in fields:
            value = output[field]
            fold = rng.choice((str.upper, str.title, str.swapcase))
            output[field] = [fold(v) for v in value] if isinstance(value, list) else fold(value)
        check = {"fields": fields, "fact": FACT, "case_sensitive": False}
        emit("correct:case_insensitive", "supported", [_names_fact(rng, labels)], check, output)
        return True

    def allowed_empty(rng: random.Random) -> bool:
        labels = strings(rng)
        output, fields = _pick_output(rng, labels)
        output["qualified"] = []
        check = {"fields": [*fields, "qualified"], "fact": FACT, "allow_empty": True}
        emit("correct:allow_empty", "supported", [_names_fact(rng, labels)], check, output)
        return True

    def nested_path(rng: random.Random) -> bool:
        labels = names(rng, rng.randint(2, 30), ints=rng.random() < 0.3)
        chosen = rng.sample(labels, rng.randint(1, min(5, len(labels))))
        output: dict[str, Any] = {
            "summary": {"entities": [{"name": n, "note": "ok"} for n in chosen]}
        }
        check = {"fields": ["name"], "fact": FACT, "path": "summary.entities"}
        if rng.random() < 0.3:
            output = {"summary": {"best": {"name": chosen[0], "also": chosen}}}
            check = {"fields": ["name", "also"], "fact": FACT, "path": "summary.best"}
        emit("correct:nested_path", "supported", [_names_fact(rng, labels)], check, output)
        return True

    for make in (blended, case_drift, leaked_id, empty_list, structured_value):
        repeat(rng, per_class, make)
    for make in (recorded, case_insensitive, allowed_empty, nested_path):
        repeat(rng, per_class, make)
    return cases


# -- row_integrity --------------------------------------------------------------------------

COLUMNS = ("spend", "ctr", "owner", "clicks", "big", "flag")


def _table_rows(rng: random.Random, size: int) -> list[dict[str, Any]]:
    keys = names(rng, size, ints=rng.random() < 0.3)
    owners = ["ana", "bo", "cy", "dee", "eli", "fay"]
    spend = scores(rng, size, "int")
    ctr = scores(rng, size, "float")
    big = scores(rng, size, "large")
    return [
        {
            "id": key,
            "spend": spend[i],
            "ctr": ctr[i],
            "owner": rng.choice(owners),
            "clicks": rng.randrange(1, 10_000),
            "big": big[i],
            "flag": rng.random() < 0.5,
        }
        for i, key in enumerate(keys)
    ]


def _same(claim: Any, cell: Any, tolerance: float = 0, rel: float | None = None) -> bool:
    if isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return truly_matches(claim, Fraction(cell), tolerance, rel)
    return type(claim) is type(cell) and claim == cell


def row_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("row_integrity", cases, FACT)

    def setup(
        rng: random.Random,
    ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, str], dict[str, Any]]:
        rows = _table_rows(rng, rng.randint(2, 20))
        row = rng.choice(rows)
        columns = rng.sample(COLUMNS, rng.randint(1, 4))
        mapping = {f"claimed_{c}": c for c in columns}
        output: dict[str, Any] = {"id": row["id"], **{f: row[c] for f, c in mapping.items()}}
        return rows, row, mapping, output

    def facts(rows: list[dict[str, Any]]) -> list[FactSpec]:
        return [FactSpec("table", FACT, rows, {"key": "id"})]

    def attribute_swap(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        field = rng.choice(list(mapping))
        column = mapping[field]
        other = rng.choice([r for r in rows if r is not row])
        check: dict[str, Any] = {"fact": FACT, "key_field": "id", "fields": mapping}
        tolerance, rel = rng.choice(((0, None), (0, None), (0.001, None), (0, 1e-6), (0.5, 0.001)))
        if tolerance:
            check["tolerance"] = tolerance
        if rel:
            check["rel_tolerance"] = rel
        if _same(other[column], row[column], tolerance, rel):
            return False
        output[field] = other[column]
        emit("attribute_swap", "unsupported", facts(rows), check, output, "swapped_value")
        return True

    def column_swap(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        field = rng.choice(list(mapping))
        column = mapping[field]
        numeric = ("spend", "clicks", "ctr", "big")
        if column not in numeric:
            return False
        source = rng.choice([c for c in numeric if c != column])
        if _same(row[source], row[column]):
            return False
        output[field] = row[source]
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("column_swap", "unsupported", facts(rows), check, output)
        return True

    def invented_value(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        field = rng.choice(list(mapping))
        column = mapping[field]
        cell = row[column]
        tolerance = rng.choice((0, 0, 0.01))
        if isinstance(cell, str):
            claim: Any = cell + "x"
        else:
            claim = cell + rng.choice((1, -1, 0.5, 1e-3, 100))
        if _same(claim, cell, tolerance):
            return False
        output[field] = claim
        check = {"fact": FACT, "key_field": "id", "fields": mapping, "tolerance": tolerance}
        emit("invented_value", "unsupported", facts(rows), check, output)
        return True

    def numeric_string(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        numeric = [f for f, c in mapping.items() if c in ("spend", "clicks", "ctr", "big")]
        if not numeric:
            return False
        field = rng.choice(numeric)
        output[field] = str(output[field])
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("numeric_string", "unsupported", facts(rows), check, output, "value_mismatch")
        return True

    def bool_as_number(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        mapping["claimed_flag"] = "flag"
        output["claimed_flag"] = rng.choice(
            (int(row["flag"]), float(row["flag"]), str(row["flag"]).lower())
        )
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("bool_as_number", "unsupported", facts(rows), check, output)
        return True

    def unknown_row(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        key = row["id"]
        if isinstance(key, int):
            output["id"] = rng.choice((str(key), float(key), key + 100_000, True))
        else:
            output["id"] = rng.choice((key.upper(), f"{key}-2", "missing", [key]))
        if any(type(r["id"]) is type(output["id"]) and r["id"] == output["id"] for r in rows):
            return False
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("unknown_row", "unsupported", facts(rows), check, output, "row_not_found")
        return True

    def non_finite(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        numeric = [f for f, c in mapping.items() if c in ("spend", "clicks", "ctr", "big")]
        if not numeric:
            return False
        output[rng.choice(numeric)] = rng.choice(NON_FINITE)
        check: dict[str, Any] = {"fact": FACT, "key_field": "id", "fields": mapping}
        if rng.random() < 0.5:
            check["rel_tolerance"] = 1.0
        emit("non_finite_claim", "unsupported", facts(rows), check, output, "value_mismatch")
        return True

    # -- supported --

    def exact(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        check: dict[str, Any] = {"fact": FACT, "key_field": "id", "fields": mapping}
        if rng.random() < 0.3:  # fields=None: every output field that is a column
            check["fields"] = None
            output = {"id": row["id"], **{c: row[c] for c in mapping.values()}}
        emit("correct:exact", "supported", facts(rows), check, output)
        return True

    def within_tolerance(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        check: dict[str, Any] = {"fact": FACT, "key_field": "id", "fields": mapping}
        numeric = [f for f, c in mapping.items() if c in ("spend", "clicks", "ctr")]
        if not numeric:
            return False
        if rng.random() < 0.5:
            tolerance = rng.choice((0.5, 0.01))
            check["tolerance"] = tolerance
            for field in numeric:
                output[field] = output[field] + rng.uniform(-0.9, 0.9) * tolerance
            ok = all(_same(output[f], row[mapping[f]], tolerance) for f in numeric)
        else:
            rel = rng.choice((0.01, 1e-3))
            check["rel_tolerance"] = rel
            for field in numeric:
                output[field] = output[field] * (1 + rng.uniform(-0.9, 0.9) * rel)
            ok = all(_same(output[f], row[mapping[f]], 0, rel) for f in numeric)
        if not ok:
            return False
        emit("correct:within_tolerance", "supported", facts(rows), check, output)
        return True

    def int_as_float(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        ints = [f for f, c in mapping.items() if c in ("spend", "clicks")]
        if not ints:
            return False
        for field in ints:
            output[field] = float(output[field])
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("correct:int_vs_float", "supported", facts(rows), check, output)
        return True

    def large_ints(rng: random.Random) -> bool:
        rows, row, mapping, output = setup(rng)
        mapping["claimed_big"] = "big"
        output["claimed_big"] = row["big"]
        check = {"fact": FACT, "key_field": "id", "fields": mapping}
        emit("correct:large_ints", "supported", facts(rows), check, output)
        return True

    wrong = (
        attribute_swap, column_swap, invented_value, numeric_string, unknown_row, non_finite,
        bool_as_number,
    )  # fmt: skip
    for make in wrong:
        repeat(rng, per_class, make)
    for make in (exact, within_tolerance, int_as_float, large_ints):
        repeat(rng, per_class * 5 // 4, make)
    return cases


# -- field_matches_fact ---------------------------------------------------------------------


def field_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("field_matches_fact", cases, FACT)

    def value(rng: random.Random) -> dict[str, Any]:
        return {
            "total": rng.randrange(0, 10**6),
            "rate": round(rng.uniform(0, 1), 4),
            "label": rng.choice(("q1", "q2", "q3")),
            "regions": names(rng, rng.randint(1, 5)),
            "flag": rng.random() < 0.5,
            "big": 10**18 + rng.randrange(10**6),
        }

    def case(rng: random.Random, failure: str, label: str, mutate: Any = None) -> bool:
        fact = value(rng)
        key = rng.choice(list(fact))
        claim = fact[key] if mutate is None else mutate(fact[key])
        if claim is None:
            return False
        check: dict[str, Any] = {"field": "claimed", "fact": FACT}
        if rng.random() < 0.7:
            check["path"] = key
            expected = fact[key]
        else:
            expected = fact
            claim = fact if mutate is None else {**fact, key: claim}
        if label == "unsupported" and type(claim) is type(expected) and claim == expected:
            return False
        emit(failure, label, [FactSpec("value", FACT, fact)], check, {"claimed": claim},
             "value_mismatch" if label == "unsupported" else None)  # fmt: skip
        return True

    def wrong_value(v: Any) -> Any:
        if isinstance(v, bool):
            return not v
        if isinstance(v, (int, float)):
            return v + 1
        if isinstance(v, list):
            return v[::-1] if len(v) > 1 else [*v, "extra"]
        return v + "!"

    def bool_as_number(v: Any) -> Any:
        if isinstance(v, bool):
            return int(v)
        return None

    def int_as_float(v: Any) -> Any:
        """The same number as a float: equal by value (only 'total' is below 2**53)."""
        if isinstance(v, int) and not isinstance(v, bool) and float(v) == v:
            return float(v)
        return None

    def large_int_as_float(v: Any) -> Any:
        """A large int written as a float rounds to another value: never equal."""
        if isinstance(v, int) and not isinstance(v, bool) and float(v) != v:
            return float(v)
        return None

    def numeric_string(v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def key_type(rng: random.Random) -> bool:
        """A fact recorded in code with int keys; the JSON output can only have str keys."""
        fact = {rng.randrange(1, 12): names(rng, 1)[0] for _ in range(rng.randint(1, 4))}
        claim = {str(k): v for k, v in fact.items()}
        emit("json_key_type", "unsupported", [FactSpec("value", FACT, fact)], {"field": "claimed"},
             {"claimed": claim}, "value_mismatch")  # fmt: skip
        return True

    repeat(rng, per_class // 2, key_type)
    for failure, mutate in (
        ("wrong_value", wrong_value),
        ("bool_as_number", bool_as_number),
        ("large_int_as_float", large_int_as_float),
        ("numeric_string", numeric_string),
    ):
        repeat(rng, per_class // 2, lambda rng, f=failure, m=mutate: case(rng, f, "unsupported", m))
    repeat(rng, per_class, lambda rng: case(rng, "correct:equal", "supported"))
    repeat(
        rng,
        per_class // 2,
        lambda rng: case(rng, "correct:int_vs_float_by_value", "supported", int_as_float),
    )
    return cases
