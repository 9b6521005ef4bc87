"""The check families, each a builder plus a ``check_*`` twin: the six that relate structured
fields to recorded facts (and field_matches_fact), and the prose and evidence families —
numbers_recorded (every number and rank in prose is a recorded one), dates_recorded (opt-in:
every date and time in prose is a recorded one), no_restricted_values and
entities_in_scope (what an answer may reveal and name), citations_retrieved and
quotes_anchored (what it may cite and quote)."""

# groundplane's ``checks`` module held superlative and field_matches_fact: keep
# ``from groundplane.checks import superlative`` working after the import switch. Importing a
# submodule binds the package attribute to the module; these names then rebind it to the
# builder (``import groundplane_otel.checks.superlative as m`` therefore gives the builder too:
# import the module's contents with ``from groundplane_otel.checks.superlative import ...``).
from groundplane_otel.checks.field_matches_fact import (
    check_field_matches_fact as check_field_matches_fact,
)
from groundplane_otel.checks.field_matches_fact import field_matches_fact as field_matches_fact
from groundplane_otel.checks.superlative import check_superlative as check_superlative
from groundplane_otel.checks.superlative import superlative as superlative
