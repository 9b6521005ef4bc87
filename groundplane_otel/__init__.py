"""groundplane_otel: deterministic grounding guard for LLM agents (public surface pending)."""

__version__ = "0.1.0"
