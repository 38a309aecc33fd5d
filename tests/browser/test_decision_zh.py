"""The decision page in Simplified Chinese, in the app (issue 27, points 2 and 7).

The app is opened with ``?lang=zh_CN&tab=decision``; its server also runs with
``ACCELKIT_LANG=zh_CN`` and the browser asks for Chinese, so the page is Chinese whichever
of the three ways the app honours first.
"""

from __future__ import annotations

import os
import re

import pytest

from helpers import english_leftovers
from servers import accelkit_app, free_port, serve, wait_for_port

from .conftest import no_error_output, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CJK = re.compile(r"[\u4e00-\u9fff]")
QUERY = ("?lang=zh_CN&tab=decision&workload=inference&model=Llama-3.1+8B&deployment=on-prem"
         "&latency_target_ms=50")


@pytest.fixture(scope="module")
def zh_app_url(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("voila") / "app-zh.log"
    with serve(accelkit_app(port), log, env=dict(os.environ, ACCELKIT_LANG="zh_CN")) as process:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture
def zh_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def _parts(page):
    """The page's own words, by part: headings, labels, the headline, the figures' sentences."""
    return page.evaluate("""() => {
        const s = document.getElementById('decision-summary');
        const all = q => Array.from(s.querySelectorAll(q)).map(e => e.innerText.trim());
        const one = k => (s.querySelector(`[data-field="${k}"]`) || {}).innerText || '';
        return {headings: all('h2, h3'), labels: all('dt'), assumed: all('table td:first-child'),
                headline: one('headline'), total: one('total'), performance: one('performance'),
                dated: one('prices-dated'), sign: all('.ak-ds-sign span'), text: s.innerText};
    }""")


def test_the_decision_page_reads_in_chinese_and_follows_the_controls(zh_page, zh_app_url):
    page = zh_page
    open_page(page, zh_app_url + QUERY, ready="#decision-summary [data-field=total]", charts=False)
    no_error_output(page)
    parts = _parts(page)
    assert parts["headings"][0].startswith("决策：")
    assert {"风险", "假设条件"} <= set(parts["headings"]) and "备选，以及落选原因" in parts["headings"]
    assert parts["labels"][0] == "购买" and "延迟与目标对比" in parts["labels"]
    assert "精度" in parts["assumed"] and "使用周期" in parts["assumed"]
    assert parts["sign"] == ["批准人", "日期"]
    for key in ("headline", "total", "performance", "dated"):
        assert CJK.search(parts[key]), (key, parts[key])
        assert english_leftovers(parts[key]) == [], (key, parts[key])
    for text in parts["headings"][1:] + parts["labels"] + parts["assumed"]:
        assert CJK.search(text) and english_leftovers(text) == [], text
    assert "目标为 50 ms" in parts["performance"]
    assert re.search(r"\d{4}年\d{1,2}月", parts["dated"]), parts["dated"]
    # the panel around the page speaks Chinese too: its control groups and headings
    body = page.locator("body").inner_text()
    assert "约束条件" in body and "候选清单" in body
    # a tighter latency target, typed in the Chinese control, changes the figures the buyer signs
    panel = page.locator("#decision-summary").locator(
        "xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' widget-vbox ')][1]")
    box = panel.locator(".widget-text", has=page.locator("label", has_text=re.compile(r"^\s*延迟目标"))).first
    box.locator("input").fill("12")
    box.locator("input").press("Enter")
    page.wait_for_function(
        "(before) => { const e = document.querySelector('#decision-summary [data-field=performance]');"
        " return e && e.innerText !== before; }", arg=parts["performance"], timeout=60_000)
    after = _parts(page)
    assert "目标为 12 ms" in after["performance"] and english_leftovers(after["performance"]) == []
    no_error_output(page)
    assert not page.errors
