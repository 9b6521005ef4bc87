"""The stream gate behind ``guard_stream``: release units, chunk shapes and the gate itself.
Private: import ``guard_stream`` from ``groundplane_otel.otel``."""
