"""Browser tests: Voilà on 127.0.0.1, driven by Playwright in Debian's chromium.

Under ``make test`` (ACCELKIT_REQUIRE_ALL=1) a missing chromium or playwright fails
these tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from helpers import require
from servers import ROOT, accelkit_app, free_port, serve, wait_for_port

CHROMIUM = os.environ.get("ACCELKIT_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@pytest.fixture(scope="session")
def browser():
    require(Path(CHROMIUM).exists() or shutil.which("chromium"), f"chromium ({CHROMIUM}; apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright (pip install playwright)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                              args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def chapters_url(tmp_path_factory):
    """Voilà serving the notebooks folder; chapters at /voila/render/<name>.ipynb."""
    port = free_port()
    log = tmp_path_factory.mktemp("voila") / "chapters.log"
    voila = shutil.which("voila") or str(Path(sys.executable).with_name("voila"))
    cmd = [voila, str(ROOT / "notebooks"), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1"]
    with serve(cmd, log) as process:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/voila/render"


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """The README's app command (`accelkit app`) on a free port."""
    port = free_port()
    log = tmp_path_factory.mktemp("voila") / "app.log"
    with serve(accelkit_app(port), log) as process:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and "page" in item.funcargs:
        # keep what the browser showed, to see why (tests/browser/artifacts, not committed)
        ARTIFACTS.mkdir(exist_ok=True)
        pg = item.funcargs["page"]
        try:
            pg.screenshot(path=str(ARTIFACTS / f"{item.name}.png"), full_page=True)
            (ARTIFACTS / f"{item.name}.txt").write_text(pg.locator("body").inner_text() + "\n\nerrors: "
                                                         + "\n".join(pg.errors))
        except Exception:
            pass


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def open_page(page, url, ready=".ak-summary", timeout_ms=90_000, charts=True):
    page.goto(url, timeout=timeout_ms)
    page.wait_for_selector(ready, timeout=timeout_ms)
    if charts:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=timeout_ms)
    page.wait_for_timeout(500)
    return page


def label_exact(text):
    return re.compile(rf"^\s*{re.escape(text)}\s*$")


def control(page, label, kind=".widget-text"):
    """The widget box whose label reads exactly ``label``."""
    box = page.locator(kind, has=page.locator("label", has_text=label_exact(label))).first
    try:
        # later cells of a chapter render after the first one: give them time
        box.wait_for(state="visible", timeout=90_000)
    except Exception:
        raise AssertionError(f"no control labelled {label!r} appeared on the page within 90 s") from None
    return box


def type_number(page, label, value):
    box = control(page, label).locator("input")
    box.fill(str(value))
    box.press("Enter")


def choose(page, label, option):
    control(page, label, ".widget-dropdown").locator("select").select_option(label=option)


def texts(page, selector):
    return [t.strip() for t in page.locator(selector).all_text_contents()]


def snapshot(page):
    """What the reader sees: summary sentences, chart titles, and the first chart's data."""
    return {
        "summary": " ".join(texts(page, ".ak-summary")),
        "titles": texts(page, ".js-plotly-plot .gtitle"),
        # the data behind every chart on the page (plotly keeps it on the graph div)
        "plots": page.evaluate(
            "() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => JSON.stringify(g.data || []))"
            ".join('|')"
        ),
    }


def wait_for_change(page, before, what="summary", timeout_ms=30_000):
    """Poll until ``snapshot(page)[what]`` differs from ``before[what]``."""
    step = 250
    for _ in range(timeout_ms // step):
        now = snapshot(page)
        if now[what] != before[what]:
            return now
        page.wait_for_timeout(step)
    raise AssertionError(f"the {what} did not change within {timeout_ms / 1000:.0f} s after the control changed")


def wait_until(page, condition, what, timeout_ms=30_000):
    """Poll until ``condition(snapshot(page))`` holds (a chart may still be drawing when a test starts)."""
    step = 250
    for _ in range(timeout_ms // step):
        now = snapshot(page)
        if condition(now):
            return now
        page.wait_for_timeout(step)
    raise AssertionError(f"{what} did not happen within {timeout_ms / 1000:.0f} s after the control changed")


def no_error_output(page):
    """No Python traceback or error block anywhere on the page."""
    body = page.locator("body").inner_text()
    assert "Traceback" not in body, "the page shows a Python traceback"
    assert page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").count() == 0, \
        "the page shows stderr output"
    assert page.locator(".ak-error").count() == 0, f"the page shows an input error: {texts(page, '.ak-error')}"
