"""The decision page in Simplified Chinese (issue 27, points 2 and 7).

The page's own words (``accelkit.decision_page``, ``select.summary``, ``select.headline``) read
in Chinese for the three example scenarios; the sentences made elsewhere and only carried by
the page (purchase units, configurations, reasons a device cannot be verified: ``select.ranking``,
``select.reasons``, ``purchase``, ``configsearch``, ``device_facts``, ``cloud_pricing``) are checked
with the whole page; data text (the scenario's own name, system names, the ecosystem table's
sourced sentences) stays as written.
"""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path

import pytest

from accelkit import i18n, select
from accelkit.decision_page import summary_document, summary_html
from accelkit.scenario import Scenario
from accelkit.select.summary import count_words, date_words, money_range
from helpers import english_leftovers

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("serve-70b-at-latency-target", "smart-factory-edge-vision", "finetune-7b-in-a-day")
CJK = re.compile(r"[\u4e00-\u9fff]")
#: a Chinese stand-in for text the page carries but does not write
OTHER = "（他处）"


def _text(page):
    """What a reader sees: tags dropped, entities decoded, the exchange-rate note (accelkit.currency) left out."""
    page = re.sub(r'<p[^>]*data-field="exchange-rate".*?</p>', " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.fixture(scope="module", params=EXAMPLES)
def decided(request):
    scenario = Scenario.load(ROOT / "examples" / f"{request.param}.yaml")
    with i18n.using("zh_CN"):
        summary = select.decision_summary(scenario)
        page = summary_html(summary, css=False)
    return request.param, scenario, summary, page


def _own_parts(summary):
    """The summary with every text the page only carries replaced by a Chinese stand-in."""
    d = copy.deepcopy(summary)
    d["title"] = OTHER  # the person's own name for the scenario
    d["order"] = d["configuration"] = OTHER  # select.ranking / purchase / configsearch (H-decWords)
    for r in d["runners_up"]:
        r["order"] = OTHER
        # the runner-up's total is written by select.summary; its order by select.ranking
    for r in d["risks"]:
        r["text"] = OTHER  # purchase facts and the ecosystem table's notes
    for r in d["cannot_verify"]:
        r["missing"] = r["settle"] = OTHER  # select.ranking's reasons
    if d["next_step"]:
        d["next_step"] = OTHER
    return d


def test_the_pages_own_words_read_in_chinese(decided):
    name, _scenario, summary, page = decided
    with i18n.using("zh_CN"):
        own = _text(summary_html(_own_parts(summary), css=False))
    assert len(CJK.findall(own)) > 100, own
    assert english_leftovers(own) == [], (name, own)
    for heading in ("决策：", "备选，以及落选原因", "风险", "假设条件", "价格日期：", "批准人"):
        assert heading in own, (name, heading)
    assert "达到目标" in own or "未达目标" in own
    # the assumptions' labels are translated where shown; the dict keeps them English
    assert dict(summary["assumptions"])["precision"].startswith(_scenario.precision)
    assert "精度" in own and "使用周期" in own


def test_the_headline_runners_up_and_performance_are_chinese(decided):
    _name, scenario, summary, _page = decided
    assert CJK.search(summary["headline"]) and CJK.search(summary["job"])
    assert CJK.search(summary["performance"]["text"]) and english_leftovers(summary["performance"]["text"]) == []
    assert summary["performance"]["kind"] == ("time" if scenario.workload != "inference" else "latency")
    for r in summary["runners_up"]:
        assert r["why"].startswith("落后 ") and "主要因为" in r["why"]
        assert english_leftovers(r["why"]) == [] and CJK.search(r["total_text"])
    # the price dates as Chinese readers write them ("2024年10月3日"), never ISO
    assert not re.search(r"\d{4}-\d{2}", summary["prices_dated"])
    with i18n.using("en"):
        english = select.decision_summary(scenario)["prices_dated"]
    if re.search(r"\d{4}-\d{2}", english):  # a shortlist of undated (analyst) prices has no date to write
        assert re.search(r"\d{4}年\d{1,2}月", summary["prices_dated"]), summary["prices_dated"]


def test_some_example_writes_its_price_dates_the_chinese_way():
    written = []
    for name in EXAMPLES:
        scenario = Scenario.load(ROOT / "examples" / f"{name}.yaml")
        with i18n.using("zh_CN"):
            written.append(select.decision_summary(scenario)["prices_dated"])
    assert any(re.search(r"\d{4}年\d{1,2}月", text) for text in written), written


def _data(summary):
    """Data, not words of the workbook, that the page carries as written: the person's title for
    the scenario, the names of the systems one orders (data/systems.csv), and the ecosystem
    table's sourced sentences (``detail`` of data/ecosystem.csv) that an ecosystem risk quotes,
    also where the page cuts a long one short ("…")."""
    from accelkit.decision_page import _clip
    from accelkit.ecosystem import load_ecosystem
    from accelkit.systems import load_systems

    details = set(load_ecosystem()["detail"].dropna().astype(str))
    parts = {summary["title"], *load_systems()["system"].astype(str), *details}
    for r in summary["risks"]:
        clipped = _clip(r["text"])
        if r["kind"].startswith("ecosystem") and clipped.endswith("…"):
            body = clipped[:-1]
            for detail in details:
                at = body.find(detail[:30])
                if at >= 0 and detail.startswith(body[at:]):
                    parts.add(body[at:])
    return parts


def test_the_whole_page_reads_in_chinese_but_for_names_and_data(decided):
    """The whole page, the words it only carries included (purchase risks, the cloud price basis,
    configurations, reasons a device cannot be verified); names and data stay as written."""
    name, _scenario, summary, page = decided
    text = _text(page)
    for part in sorted(_data(summary), key=len, reverse=True):
        text = text.replace(part, " ")
    assert english_leftovers(text) == [], name
    purchase = [r["text"] for r in summary["risks"] if r["kind"] == "purchase"]
    assert all(CJK.search(t) for t in purchase), purchase


def test_english_is_unchanged_by_the_catalogue():
    s = Scenario.load(ROOT / "examples" / "smart-factory-edge-vision.yaml")
    with i18n.using("en"):
        d = select.decision_summary(s)
        page = summary_html(d, css=False)
    assert page.startswith('<section id="decision-summary"') and "<h2>Decision: " in page
    assert "What was assumed" in page and "Prices dated:" in page and not CJK.search(page)
    assert re.search(r"\d{4}-\d{2}", d["prices_dated"])


def test_the_document_language_and_money_follow_the_language(decided):
    _name, _scenario, summary, _page = decided
    with i18n.using("zh_CN"):
        document = summary_document(summary)
        assert '<html lang="zh-CN">' in document and "<title>" in document and "：决策</title>" in document
        assert money_range(1234.0, 1000.0, 1500.0, "?").startswith("$1,234")
        assert "（$1,000–$1,500）" in money_range(1234.0, 1000.0, 1500.0, "?")
        assert count_words(2e10) == "200亿" and count_words(1.5e6) == "150万"
        assert date_words("2024-10-03") == "2024年10月3日" and date_words("2020-05") == "2020年5月"
    with i18n.using("en"):
        assert '<html lang="en">' in summary_document(summary)
        assert money_range(1234.0, 1000.0, 1500.0, "?") == "$1,234 ($1,000-$1,500)"
        assert count_words(2e10) == "20 billion" and date_words("2020-05") == "2020-05"


def test_the_yuan_and_its_rate_are_named_under_the_price_date_when_a_rate_is_published(decided):
    from accelkit.currency import rate_note, usd_to_cny_rate

    _name, _scenario, summary, page = decided
    if usd_to_cny_rate() is None:
        pytest.skip("no exchange rate in data/exchange_rates.csv: dollars only, and no note")
    with i18n.using("zh_CN"):
        note = rate_note()
    assert 'data-field="exchange-rate"' in page and html.escape(note) in page
    assert page.index('data-field="prices-dated"') < page.index('data-field="exchange-rate"')
    assert "¥" in summary["total"]["text"]
    with i18n.using("en"):
        assert 'data-field="exchange-rate"' not in summary_html(summary)
