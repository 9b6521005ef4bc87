"""The loopback fake OpenAI server, under the short name the integration tests import.

It ships with the package (``groundplane_otel.fake_openai``) so the docs' examples run as copied;
this module only re-exports it for the tests on this directory's path.
"""

from __future__ import annotations

from groundplane_otel.fake_openai import FakeOpenAI, Turn, answer_turn, tool_call_turn

__all__ = ["FakeOpenAI", "Turn", "answer_turn", "tool_call_turn"]
