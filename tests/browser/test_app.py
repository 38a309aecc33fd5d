"""The front door served by the README's app command."""

from __future__ import annotations

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
    assert page.locator(".js-plotly-plot").count() >= 1
    # the decision tab ranks with the same scenario
    page.get_by_role("tab", name="9 Decision").click()
    page.wait_for_function("document.body.innerText.includes('Recommendation for training')", timeout=60_000)


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
