"""The decision page a buyer signs, first in the app's decision tab, live (issue 27, point 2)."""

from __future__ import annotations

import re

import pytest

from .conftest import no_error_output, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# the decision panel's own box (a VBox) around the page
PANEL = "xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' widget-vbox ')][1]"


def _figures(page):
    return page.evaluate("""() => {
        const s = document.getElementById('decision-summary');
        const f = k => (s.querySelector(`[data-field="${k}"]`) || {}).innerText || '';
        return {order: f('order'), total: f('total'), performance: f('performance')};
    }""")


def test_the_decision_tab_opens_on_the_decision_page_and_it_follows_the_controls(page, app_url):
    open_page(page, app_url + "?workload=inference&model=Llama-3.1+8B&deployment=on-prem&latency_target_ms=50"
              "&tab=decision", ready="#decision-summary [data-field=total]", charts=False)
    no_error_output(page)
    summary = page.locator("#decision-summary")
    text = summary.inner_text()
    assert text.startswith("Decision:") and "Buy" in text and "Runners-up, and why they lost" in text
    assert "What was assumed" in text and "Prices dated:" in text and "against a target of 50 ms" in text
    assert re.search(r"\d+ × ", _figures(page)["order"])
    # first in the tab: nothing the panel shows (controls, headings, tables) comes before it
    panel = summary.locator(PANEL)
    before = panel.evaluate("""(box) => {
        const mine = document.getElementById('decision-summary').getBoundingClientRect();
        return Array.from(box.querySelectorAll('input, select, textarea, button, h4, table'))
            .filter(e => !document.getElementById('decision-summary').contains(e))
            .filter(e => { const r = e.getBoundingClientRect(); return r.height > 0 && r.top < mine.top; })
            .map(e => e.tagName + ' ' + (e.innerText || e.value || '').slice(0, 40));
    }""")
    assert not before, f"shown above the decision page: {before}"
    first = _figures(page)
    # a tighter latency target changes the figures the buyer signs
    box = panel.locator(".widget-text", has=page.locator("label", has_text=re.compile(r"^\s*latency target"))).first
    box.locator("input").fill("12")
    box.locator("input").press("Enter")
    page.wait_for_function(
        "(before) => { const e = document.querySelector('#decision-summary [data-field=performance]');"
        " return e && e.innerText !== before; }", arg=first["performance"], timeout=60_000)
    after = _figures(page)
    assert "against a target of 12 ms" in after["performance"]
    assert after != first
    no_error_output(page)
    assert not page.errors
