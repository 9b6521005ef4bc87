"""The engine every driver shares (the live span processor, replay, the verifier): capture,
output reading, the per-request store, evaluation, accounting, lineage, telemetry and the
SDK contract. Private: import from ``groundplane_otel.otel``."""
