"""One registry of check families (issue 38): ``groundplane_otel._FAMILIES``. The policy reader,
the package namespace, groundplane's module names and docs/checks.md all agree with it, and every
``check_*`` twin is made from its builder (its signature is the builder's, after
``registry, output``)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import groundplane_otel as gp
from groundplane_otel.otel.policy._checks import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
NAMES = [family.name for family in gp._FAMILIES]


def test_the_policy_reader_reads_the_registry() -> None:
    """A policy may name exactly the registry's families, in its order."""
    assert list(FAMILIES) == NAMES
    assert len(NAMES) == len(set(NAMES)) == 13


def test_the_namespace_exports_each_family_from_its_module() -> None:
    """Builder, twin and extra exports load from ``groundplane_otel.checks.<family>`` and are
    in ``__all__`` (tests/test_lazy_namespace.py pins the TYPE_CHECKING block to the same).
    Compared by where each object was defined, not by identity: an inline ``pytester`` run
    earlier in the session restores ``sys.modules`` afterwards, so a family module it imported
    is imported afresh here while the namespace keeps the object it loaded then."""
    for family in gp._FAMILIES:
        module = importlib.import_module(f"groundplane_otel.checks.{family.name}")
        for name in (family.name, f"check_{family.name}", *family.exports):
            assert gp._SOURCE[name] == module.__name__, name
            assert name in gp.__all__, name
            exported, own = getattr(gp, name), getattr(module, name)
            assert _defined_at(exported) == _defined_at(own), name
    checks = {name for name in gp.__all__ if name.startswith("check_")}
    assert checks == {f"check_{name}" for name in NAMES}


def _defined_at(value: object) -> tuple[str, str]:
    """The module and qualified name ``value`` was defined under."""
    return (getattr(value, "__module__", ""), getattr(value, "__qualname__", repr(value)))


def test_docs_checks_md_names_every_family_and_only_families_in_its_table() -> None:
    """docs/checks.md names each family; its "What it checks" table lists only families."""
    text = (ROOT / "docs" / "checks.md").read_text("utf-8")
    for name in NAMES:
        assert f"`{name}`" in text, name
    table = text.split("# groundplane, in full")[0]
    rows = re.findall(r"^\| `(\w+)`", table, flags=re.MULTILINE)
    assert rows
    assert set(rows) <= set(NAMES)


def test_groundplane_module_names_re_export_the_family_modules() -> None:
    """``groundplane.ordering`` etc. are real modules (type checkers find them) re-exporting the
    family's own builder and twin, and ``groundplane_otel.checks`` holds the families groundplane
    kept in its ``checks``."""
    for family in gp._FAMILIES:
        if family.reference in (None, "checks"):
            continue
        assert (ROOT / "groundplane_otel" / f"{family.reference}.py").is_file()
        module = importlib.import_module(f"groundplane_otel.{family.reference}")
        assert sorted(module.__all__) == sorted((family.name, f"check_{family.name}"))
        assert getattr(module, family.name) is getattr(gp, family.name)
        assert getattr(module, f"check_{family.name}") is getattr(gp, f"check_{family.name}")
    checks = importlib.import_module("groundplane_otel.checks")
    for family in gp._FAMILIES:
        if family.reference == "checks":
            assert getattr(checks, family.name) is getattr(gp, family.name)
            assert getattr(checks, f"check_{family.name}") is getattr(gp, f"check_{family.name}")


def test_each_twin_takes_registry_output_then_its_builders_parameters() -> None:
    """The twin's signature is derived from the builder's: names, kinds and defaults."""
    for name in NAMES:
        builder = inspect.signature(getattr(gp, name)).parameters
        twin = getattr(gp, f"check_{name}")
        parameters = list(inspect.signature(twin).parameters.values())
        assert [p.name for p in parameters[:2]] == ["registry", "output"]
        assert all(p.kind is p.POSITIONAL_ONLY for p in parameters[:2])
        assert parameters[2:] == list(builder.values()), name
        assert twin.__name__ == f"check_{name}"
        assert twin.__module__ == f"groundplane_otel.checks.{name}"


def test_a_twin_validates_and_checks_as_its_builder_does() -> None:
    """Same arguments, same errors: a bad argument is the builder's error; a wrong answer is
    the check's claim."""
    registry = gp.FactRegistry()
    registry.record_ranking("ctr", {"north": 0.0412, "harbour": 0.0455}, key="ctr")
    gp.check_superlative(registry, {"winner": "harbour"}, "ctr")
    with pytest.raises(gp.UnsupportedClaim) as claim:
        gp.check_superlative(registry, {"winner": "north"}, "ctr")
    assert claim.value.code == "wrong_winner"
    with pytest.raises(ValueError, match="tolerance") as built:
        gp.superlative("ctr", tolerance=-1)
    with pytest.raises(ValueError, match="tolerance") as twinned:
        gp.check_superlative(registry, {"winner": "harbour"}, "ctr", tolerance=-1)
    assert str(twinned.value) == str(built.value)
