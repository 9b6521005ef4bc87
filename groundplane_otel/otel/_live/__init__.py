"""The live driver: the span processor that drives the engine from the OpenTelemetry SDK's span
hooks, and the state one live guard owns (its ``enforce()`` hand-over, its watch for refusals a
framework swallowed). Private: import from ``groundplane_otel.otel``."""
