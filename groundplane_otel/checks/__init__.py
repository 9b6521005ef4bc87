"""The six check families (and field_matches_fact), each a builder plus a ``check_*`` twin.

Also ``numbers_recorded`` (``numbers.py``): every number in a prose field is a recorded one.
"""
