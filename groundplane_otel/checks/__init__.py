"""The six check families (and field_matches_fact), each a builder plus a ``check_*`` twin."""
