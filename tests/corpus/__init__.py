"""A labelled corpus of model outputs, generated with a fixed seed, to measure the checker's own
false-pass and false-reject rates (``tests/test_error_rates.py``, ``python -m bench.error_rates``).
"""
