"""The OpenTelemetry layer: capture facts from tool spans, guard LLM output spans."""
