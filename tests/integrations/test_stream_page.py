"""The streamed web page (examples/stream_page.py) in a real browser: uvicorn serves the
Starlette app, headless Chromium (Debian's ``chromium``, driven by Playwright with that
executable: no browser download) loads the page, and what the page displays is read back — a
wrong sentence never appears, the refusal does, a right answer appears in full."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import stream_page  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
# Every text the answer element held, recorded in the page itself as it changed.
RECORD = """
window.seen = [];
const answer = document.getElementById("answer");
new MutationObserver(() => window.seen.push(answer.textContent))
  .observe(answer, {childList: true, characterData: true, subtree: true});
"""


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app on a free loopback port, in a thread; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(stream_page.build_app(), host="127.0.0.1", port=port, log_level="error")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


def shown(base: str, q: str) -> dict[str, Any]:
    """Load the page for question ``q`` in headless Chromium; what it displayed."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page()
            page.add_init_script(
                "document.addEventListener('DOMContentLoaded', () => {" + RECORD + "});"
            )
            page.goto(f"{base}/?q={q}")
            page.wait_for_function(
                "document.getElementById('status').textContent !== 'streaming'", timeout=20_000
            )
            return {
                "status": page.inner_text("#status"),
                "answer": page.text_content("#answer"),
                "refusal": page.text_content("#refusal"),
                "refusal_visible": page.is_visible("#refusal"),
                "seen": page.evaluate("window.seen"),
            }
        finally:
            browser.close()


def test_a_wrong_sentence_never_appears_and_the_refusal_does(server: str) -> None:
    """The wrong rate's sentence is never on the page, at any moment; the first sentence is,
    then the refusal."""
    page = shown(server, "wrong")
    assert page["status"] == "refused"
    assert page["answer"] == stream_page.FIRST
    assert page["refusal_visible"]
    assert page["refusal"] == ("Answer stopped: a claim could not be verified (number_unrecorded).")
    assert page["seen"]  # the page did stream (the observer saw the answer grow)
    assert not [text for text in page["seen"] if "4.7" in text or "last month" in text]


def test_a_right_answer_appears_in_full(server: str) -> None:
    """Every sentence of a right answer reaches the page; no refusal."""
    page = shown(server, "right")
    assert page["status"] == "done"
    assert page["answer"] == stream_page.ANSWERS["right"]
    assert not page["refusal_visible"]
    assert len(page["seen"]) > 3  # sentence by sentence, not all at once
