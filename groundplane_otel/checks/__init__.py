"""The check families, each a builder plus a ``check_*`` twin: the six that relate structured
fields to recorded facts (and field_matches_fact), and the prose and evidence families —
no_restricted_values and entities_in_scope (what an answer may reveal and name),
citations_retrieved and quotes_anchored (what it may cite and quote)."""
