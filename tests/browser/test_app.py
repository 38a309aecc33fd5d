"""The front door served by the README's app command."""

from __future__ import annotations

import re

import pytest

from .conftest import ARTIFACTS, no_error_output, open_page, texts, type_number

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_front_door_renders_and_a_control_reaches_the_chapters(page, app_url):
    open_page(page, app_url, ready="text=choose an AI accelerator", charts=False)
    no_error_output(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "front-door.png"))
    type_number(page, "finish within [days]", 5)
    page.wait_for_function("document.body.innerText.includes('time_target_days=5')", timeout=30_000)
    page.get_by_role("tab", name="1 Demand").click()
    page.wait_for_function("document.body.innerText.includes('Finishing in 5 days')", timeout=60_000)
    # the page's first chart fetches plotly.js first (accelkit-plotly-lazy), so it may follow the text by a second
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    assert page.locator(".js-plotly-plot").count() >= 1
    # the decision tab ranks with the same scenario
    page.get_by_role("tab", name="9 Decision").click()
    page.wait_for_function("document.body.innerText.includes('Recommendation for training')", timeout=60_000)


def test_plotly_js_comes_with_the_first_chart_not_with_the_page(page, app_url):
    # jupyterlab-plotly's one script (4.8 MB, plotly.js) is no longer part of every page (issue 26)
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    open_page(page, app_url, ready="text=choose an AI accelerator", charts=False)
    assert not [u for u in fetched if "/jupyterlab-plotly/" in u], "the start page fetched plotly.js"
    page.get_by_role("tab", name="2 Bandwidth").click()
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    assert [u for u in fetched if "/jupyterlab-plotly/static/" in u]
    no_error_output(page)
    assert not page.errors


def test_front_door_bad_value_shows_a_message_and_keeps_working(page, app_url):
    open_page(page, app_url, ready="text=choose an AI accelerator", charts=False)
    type_number(page, "devices allowed [count]", 0)
    page.wait_for_selector(".ak-error", timeout=30_000)
    assert "n_devices" in " ".join(texts(page, ".ak-error"))
    type_number(page, "devices allowed [count]", 4)
    page.wait_for_selector(".ak-error", state="detached", timeout=30_000)
    page.get_by_role("tab", name="1 Demand").click()
    page.wait_for_function("document.body.innerText.includes('Training Llama-2 7B')", timeout=60_000)


def test_link_with_query_parameters_reproduces_the_view(page, app_url):
    open_page(page, app_url + "?model=Llama-2+70B&workload=inference&deployment=on-prem&tab=decision",
              ready=".ak-summary")
    page.wait_for_function("document.body.innerText.includes('Recommendation for inference of Llama-2 70B')",
                           timeout=60_000)
    assert "on-prem" in " ".join(texts(page, ".ak-summary"))
    no_error_output(page)


def test_link_with_a_bad_value_names_the_field(page, app_url):
    open_page(page, app_url + "?batch_size=-3", ready="text=choose an AI accelerator", charts=False)
    page.wait_for_selector(".ak-error", timeout=30_000)
    assert "batch_size" in " ".join(texts(page, ".ak-error"))


def _decision_summary(page, url, what):
    """Open the app at ``url`` (a decision-tab link), wait for the recommendation for ``what``, and
    return its summary text."""
    open_page(page, url, ready=".ak-summary")
    page.wait_for_function(f"document.body.innerText.includes('Recommendation for {what}')", timeout=90_000)
    no_error_output(page)
    return " ".join(texts(page, ".ak-summary"))


def test_decision_tab_shows_what_to_buy_the_total_and_the_devices_that_cannot_be_verified(page, app_url):
    """Issue 25: the buyer sees the purchasable unit, how many, the total with its range, and the
    devices whose unknown price decides the budget shown apart (never in the shortlist)."""
    summary = _decision_summary(page, app_url + "?workload=inference&model=Llama-3.1+8B&deployment=on-prem"
                                "&budget_usd=20000&tab=decision", "inference of Llama-3.1 8B")
    assert re.search(r"buy \d+ × .+: \$[\d,]+ \(\$[\d,]+-\$[\d,]+\) over 36 months", summary), summary
    assert "cannot be verified" in summary
    shortlist = page.locator("table", has=page.locator("th", has_text="configuration")).first.inner_text()
    assert re.search(r"\d+ × ", shortlist) and "total, 36 months (range)" in shortlist
    unverified = page.locator("table", has=page.locator("th", has_text="what would settle it")).first
    body = unverified.inner_text()
    # Gaudi 2 and A30 have no published price: under a budget they cannot be verified
    assert "Gaudi 2" in body and "price unknown" in body and "quoted price" in body
    assert "Gaudi 2" not in shortlist


def test_a_recommender_is_sized_in_user_item_pairs_and_follows_a_control(page, app_url):
    """DLRM-v2 served: the decision counts user-item pairs and one pass of a batch, the front door's
    latency target reads "ms per pass", and changing it reaches the decision."""
    summary = _decision_summary(page, app_url + "?workload=inference&model=DLRM-v2&precision=int8"
                                "&requests_per_s=20000000&deployment=on-prem&tab=decision", "inference of DLRM-v2")
    assert "ms per pass" in summary and "per M user-item pairs" in summary, summary
    assert "against 100," in summary, summary
    page.get_by_role("tab", name="Start", exact=True).click()
    type_number(page, "latency target [ms per pass]", 5)
    page.get_by_role("tab", name="9 Decision").click()
    page.wait_for_function("[...document.querySelectorAll('.ak-summary')].some(e => e.innerText.includes("
                           "'against 5,'))", timeout=90_000)
    no_error_output(page)
