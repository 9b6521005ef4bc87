"""The number helpers of the checks, one role a module.

- ``sums``: exact sums and dot products (fast for floats), a result as int or float, offsets
  (the numeric families: aggregate_reconciles, comparison, superlative, ranking_prefix).
- ``recorded``: the numbers a set of facts records, and where each one lives.
- ``documents``: the numbers retrieved documents' texts spell, evidence when declared.
- ``prose_words``: the vocabulary of numbers in prose (locales, magnitude and number words).
- ``prose_pattern``: the scanner's one regular expression, built once per locale.
- ``prose_scan``: finding the numbers in a text (``scan_numbers``) and what is not a quantity.
- ``prose_fields``: numbers_recorded's arguments and the texts it scans.
- ``receipts``: what a number no fact records gets in its claim (span, nearest value).
- ``direction``: which number a direction word (rose, fell, a drop of) is said of, and which
  recorded values are changes.
- ``units``: the unit or currency a number is written in, and what a column may declare.
- ``wording``: the verdict of those words against the recorded values (numbers_recorded).
- ``ordinals``: rank claims in prose ("North was third", "top 3") read against Rankings;
  ``rank_words`` its vocabulary, ``rank_receipt`` what a contradicted rank gets.
- ``dates``: the scanner's date and time tokens read as calendar points, and the dates and
  times a set of facts records (for dates_recorded).

Exact arithmetic the core itself needs (the registry, Table, Ranking) is
``groundplane_otel._arithmetic``.
"""
