"""Terms explained on tap (issue 27, point 3): on a 390 px phone with touch, in a static page and in a chapter."""

from __future__ import annotations

import pytest

from accelkit import glossary
from accelkit.ui import terms as T

from .conftest import open_page

pytestmark = [pytest.mark.browser]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def _after(page, selector):
    """The text the definition popup (the ``::after`` box) shows for the first ``selector``."""
    return page.eval_on_selector(selector, "el => getComputedStyle(el, '::after').content")


def test_a_tap_opens_the_definition_on_a_phone(browser, tmp_path):
    body = T.summary_html(["The all-reduces take 2 s at an MFU of 40 %."], ("MFU", "all-reduce"))
    body += T.words_html(("MFU", "PUE"), "zh")
    page_file = tmp_path / "terms.html"
    page_file.write_text(f"<!doctype html><meta charset='utf-8'><body>{body}</body>", encoding="utf-8")
    context = browser.new_context(**PHONE)
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        mfu = "abbr.ak-term >> text=MFU"
        assert _after(page, "abbr.ak-term") in ("none", "normal", "")  # closed until tapped
        page.tap(mfu)
        assert page.evaluate("document.activeElement.textContent") == "MFU"
        assert glossary.define("MFU") in _after(page, "abbr.ak-term:focus")
        box = page.eval_on_selector("abbr.ak-term:focus", "el => { const r = el.getBoundingClientRect(); "
                                    "return [r.left, window.innerWidth]; }")
        assert 0 <= box[0] < box[1]
        # the words box: a tap opens it, a tap on a word opens its long definition, in Chinese
        page.tap("details.ak-words > summary")
        page.tap("details.ak-words details summary >> nth=0")
        assert page.eval_on_selector("details.ak-words details", "el => el.open")
        assert glossary.define("MFU", "zh", long=True) in page.inner_text("details.ak-words details")
    finally:
        context.close()


@pytest.mark.slow
def test_the_cluster_chapter_explains_its_words_on_tap(browser, chapters_url):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    try:
        open_page(page, f"{chapters_url}/06_training_cluster.ipynb")
        page.wait_for_selector(".ak-summary abbr.ak-term", timeout=60_000)
        page.tap(".ak-summary abbr.ak-term >> text=MFU")
        assert glossary.define("MFU") in _after(page, ".ak-summary abbr.ak-term:focus")
        page.tap("details.ak-words > summary")
        assert page.eval_on_selector("details.ak-words", "el => el.open")
    finally:
        context.close()
