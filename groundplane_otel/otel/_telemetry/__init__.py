"""The live guard's telemetry, outside the engine (driver-side, private): ``telemetry`` writes
the ``Evaluation``s the engine returns as span events, span status, metrics and log records (the
``Results`` install wires into the live span processor, and the verifier's export); replay's
tally and the pytest fixture read findings through ``metric_counts``. It reads the engine only
through its door (``otel/_engine/__init__``); the engine never imports it."""
