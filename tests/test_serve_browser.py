"""The status page of ``olboost serve`` in a real headless browser: Debian's Chromium driven by
Playwright's Python API (``make test`` and ``make e2e`` install both, Chromium where apt-get runs
as root). Skipped, with the reason, where either is missing; Playwright downloads nothing, it
runs the system's browser."""

from __future__ import annotations

import re
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="olboost serve needs the serve extra")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (make test and make e2e install it)"
)

from serve_support import Server, features  # noqa: E402

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium (apt-get install chromium, as make test does when root)"
)
def test_status_page_draws_loss_and_click_through(tmp_path: Path) -> None:
    args = ("--labels", "a,b,c,d,e,f", "--n-features", "4", "--learners", "3", "--k", "3")
    with Server(tmp_path / "store", *args) as server:
        # feedback spread over three seconds: the series gets points at several moments
        for i in range(30):
            shown = server.rank(features(4, i))
            assert server.feedback(shown["impression"], shown["labels"][: 1 + i % 2])[0] == 200
            time.sleep(0.1)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            try:
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda err: errors.append(str(err)))
                # a resource that failed to load (the favicon's 404 was one, at every load)
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                # under the page's own Content-Security-Policy (a security probe, session 36:
                # it had none), which forbids eval: polled from here, not by wait_for_function
                answer = page.goto(server.url + "/")
                assert "script-src 'sha256-" in answer.headers["content-security-policy"]
                deadline = time.monotonic() + 15
                while page.text_content("#feedback-count") != "30":
                    assert time.monotonic() < deadline, page.text_content("#feedback-count")
                    time.sleep(0.05)
                assert page.text_content("#status") == "ok"
                model = page.text_content("#model")
                assert model.startswith("topk-adaptive, k = 3, 6 labels, "), model
                loss = float(page.text_content("#loss-value"))
                ctr = float(page.text_content("#ctr-value"))
                assert 0.0 <= loss <= 1.0 and 0.0 <= ctr <= 1.0
                for chart in ("#loss-chart", "#ctr-chart"):
                    assert int(page.get_attribute(chart, "data-points")) >= 1
                    # something was drawn: pixels that are not transparent
                    painted = page.evaluate(
                        """(sel) => {
                            const c = document.querySelector(sel);
                            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height);
                            let n = 0;
                            for (let i = 3; i < d.data.length; i += 4) n += d.data[i] > 0;
                            return n;
                        }""",
                        chart,
                    )
                    assert painted > 500, (chart, painted)
                assert errors == []
            finally:
                browser.close()


# Counts the page's requests in flight, and the most at once.
_COUNT_FETCHES = """
window.inFlight = 0; window.mostInFlight = 0;
const realFetch = window.fetch;
window.fetch = (...args) => {
  window.inFlight += 1;
  window.mostInFlight = Math.max(window.mostInFlight, window.inFlight);
  return realFetch(...args).finally(() => { window.inFlight -= 1; });
};
"""


@pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium (apt-get install chromium, as make test does when root)"
)
def test_status_page_says_a_server_that_stops_answering(tmp_path: Path) -> None:
    # it said "ok" over frozen numbers while unanswered requests piled up, one more a second,
    # and a late answer overwrote a newer one
    import os
    import signal

    args = ("--labels", "a,b,c,d", "--n-features", "4", "--learners", "2", "--k", "2")
    with Server(tmp_path / "store", *args) as server:
        shown = server.rank(features(4, 0))
        assert server.feedback(shown["impression"], shown["labels"][:1])[0] == 200
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            try:
                # wait_for_function evaluates its strings, which the page's CSP forbids (the
                # test above runs the page under it)
                page = browser.new_page(viewport={"width": 375, "height": 700}, bypass_csp=True)
                page.add_init_script(_COUNT_FETCHES)
                page.goto(server.url + "/")
                page.wait_for_function(
                    "document.getElementById('feedback-count').textContent === '1'",
                    timeout=15000,
                )
                status = page.locator("#status")
                assert status.text_content() == "ok" and status.get_attribute("role") == "status"
                label = page.get_attribute("#loss-chart", "aria-label")
                assert label.startswith("estimated rank loss: ") and " now" in label
                # on a phone's width the page fits, charts included
                assert page.evaluate("document.documentElement.scrollWidth") <= 375
                os.kill(server.pid, signal.SIGSTOP)
                try:
                    page.wait_for_function(
                        "document.getElementById('status').textContent"
                        ".startsWith('no answer within 3 s')",
                        timeout=15000,
                    )
                    time.sleep(4)  # four more seconds unanswered
                    said = status.text_content()
                    age = int(re.search(r"the numbers shown are (\d+) s old", said).group(1))
                    assert 4 <= age <= 60, said  # at least the four seconds slept, in seconds
                    assert page.get_attribute("#numbers", "class") == "stale"
                    assert page.evaluate("window.mostInFlight") <= 2  # series and health
                finally:
                    os.kill(server.pid, signal.SIGCONT)
                page.wait_for_function(
                    "document.getElementById('status').textContent === 'ok'", timeout=15000
                )
                assert page.get_attribute("#numbers", "class") == ""
                # a log that cannot be written for a while is a warning over live numbers, gone
                # once it is written again
                blocker = sqlite3.connect(server.store / "log.sqlite", timeout=0)
                try:
                    blocker.isolation_level = None
                    blocker.execute("BEGIN IMMEDIATE")  # past SQLite's 5 s wait
                    assert server.request("POST", "/rank", {"features": features(4, 1)})[0] == 503
                    page.wait_for_function(
                        "document.getElementById('status').textContent === 'warning: the log "
                        "could not be written: OperationalError: database is locked (requests "
                        "are refused until it can be; the service goes on)'",
                        timeout=15000,
                    )
                    assert page.get_attribute("#numbers", "class") == ""
                finally:
                    blocker.execute("ROLLBACK")
                    blocker.close()
                assert server.request("POST", "/rank", {"features": features(4, 2)})[0] == 200
                page.wait_for_function(
                    "document.getElementById('status').textContent === 'ok'", timeout=15000
                )
                # a service stopped on an error says which, and what to do ("error" alone): an
                # I/O error, from the server's file size limit (1 byte: EFBIG)
                import resource

                hard = resource.prlimit(server.pid, resource.RLIMIT_FSIZE)[1]
                resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (1, hard))
                try:
                    assert server.request("POST", "/rank", {"features": features(4, 3)})[0] == 503
                finally:
                    resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (hard, hard))
                page.wait_for_function(
                    "document.getElementById('status').textContent.startsWith("
                    "'error: the log writer stopped: OperationalError: disk I/O error (the "
                    "service answers "
                    "no request until it is restarted)')",
                    timeout=15000,
                )
                assert page.get_attribute("#numbers", "class") == "stale"
            finally:
                browser.close()
