"""The status page of ``olboost serve`` in a real headless browser: Debian's Chromium driven by
Playwright's Python API (``make test`` and ``make e2e`` install both, Chromium where apt-get runs
as root). Skipped, with the reason, where either is missing; Playwright downloads nothing, it
runs the system's browser."""

from __future__ import annotations

import shutil
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
                page.goto(server.url + "/")
                page.wait_for_function(
                    "document.getElementById('feedback-count').textContent === '30'",
                    timeout=15000,
                )
                assert page.text_content("#status") == "ok"
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
