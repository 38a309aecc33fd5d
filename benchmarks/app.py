"""Time to first interaction of the Voilà app: page requested -> first control usable.

Starts `accelkit app` on a free port of 127.0.0.1 and drives Debian's chromium with
Playwright; each run opens a fresh page (Voilà starts a fresh kernel per visit).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from ._timing import report

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main(runs=3):
    sys.path.insert(0, str(ROOT / "tests"))
    from playwright.sync_api import sync_playwright

    from servers import accelkit_app, free_port, serve, wait_for_port

    port = free_port()
    times = []
    with serve(accelkit_app(port), Path("/tmp") / f"accelkit-bench-app-{port}.log") as process:
        wait_for_port(port, process=process)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for _ in range(runs):
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/")
                page.locator(".widget-dropdown select").first.wait_for(state="visible", timeout=120_000)
                page.wait_for_function("!document.querySelector('.widget-dropdown select').disabled")
                times.append(time.perf_counter() - start)
                page.close()
            browser.close()
    return [report(f"app: page requested -> first control usable ({runs} visits)",
                   (min(times), statistics.median(times)), target=8.0)]
