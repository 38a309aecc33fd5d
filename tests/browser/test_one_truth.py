"""One truth per scenario in the served app (issue 27 point 1).

A vision, an LLM-serving and a training scenario, each opened from a link that carries the
example's fields: the decision names a recommended device and its figure (ms per frame, ms per
output token, days of training) and its total over the horizon; every other tab that shows that
device's figure -- chapter 01's table, chapter 05's costs, chapter 07's edge table, chapter 06's
cluster -- shows the same number. The numbers are read from the page as a person sees them.
"""

from __future__ import annotations

import re

import pytest

from accelkit.scenario import Scenario

from .conftest import no_error_output, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NUMBER = r"\d[\d,]*(?:\.\d+)?"


def _link(example):
    return "?" + Scenario.load(f"examples/{example}.yaml").to_query_string() + "&tab=decision"


def _value(text):
    return float(text.replace(",", ""))


def _same(shown_a, shown_b):
    """Two figures as written on the page are one figure: equal within the rounding of the coarser one."""
    decimals = min(len(t.split(".")[1]) if "." in t else 0 for t in (shown_a, shown_b))
    return abs(_value(shown_a) - _value(shown_b)) <= 0.5 * 10 ** -decimals + 1e-9


def _visible_text(page, selector):
    return " ".join(t.strip() for t in page.locator(f"{selector}:visible").all_text_contents())


def _table(page, header):
    """(headers, rows) of the visible table with a column headed ``header``: every cell's text."""
    return page.evaluate("""(header) => {
        for (const table of document.querySelectorAll('table')) {
            if (table.offsetParent === null) continue;
            const heads = Array.from(table.querySelectorAll('th')).map(th => th.innerText.trim());
            if (!heads.includes(header)) continue;
            const rows = Array.from(table.querySelectorAll('tbody tr')).map(
                tr => Array.from(tr.querySelectorAll('td')).map(td => td.innerText.trim()));
            return [heads, rows];
        }
        return null;
    }""", header)


def _cell(page, header, device, column):
    found = _table(page, header)
    assert found, f"no visible table with a column {header!r}"
    heads, rows = found
    row = next((r for r in rows if r and r[0] == device), None)
    assert row is not None, f"{device} is not in the table headed {header!r}: {[r[0] for r in rows]}"
    return row[heads.index(column)]


def _open_tab(page, name, text):
    page.get_by_role("tab", name=name).click()
    page.wait_for_function("(t) => document.body.innerText.includes(t)", arg=text, timeout=90_000)
    page.wait_for_timeout(300)


def _decision(page, example):
    open_page(page, page.app_url + _link(example), ready=".ak-summary", charts=False)
    page.wait_for_function("document.body.innerText.includes('Recommendation for')", timeout=120_000)
    no_error_output(page)
    summary = _visible_text(page, ".ak-summary")
    # the recommended device, or where the call is too close the one ranked first (its figures are followed)
    called = re.search(r"Recommended: (.+?), first in|Too close to call between (.+?) \(ranked first", summary)
    assert called, f"the decision names no device: {summary[:300]!r}"
    device = called.group(1) or called.group(2)
    total = re.search(rf"\$({NUMBER}) \(\${NUMBER}-\${NUMBER}\) over (?:36 months|the run)", summary).group(1)
    heads, rows = _table(page, "projected (range)")
    at = heads.index("projected (range)")
    page.shortlist = {r[heads.index("device")]: (r[heads.index("configuration")], re.match(NUMBER, r[at]).group(0))
                      for r in rows if re.match(NUMBER, r[at])}
    assert device in page.shortlist, "the recommended device is in the decision's shortlist table"
    return device, summary, total


@pytest.fixture
def app(page, app_url):
    page.app_url = app_url
    return page


def _demand_agrees_with_the_shortlist(page, unit):
    """Chapter 01's last column is the decision's configuration and figure, device by device."""
    heads, rows = _table(page, "the decision's configuration (chapter 09)")
    at = heads.index("the decision's configuration (chapter 09)")
    compared = 0
    for row in rows:
        if row[0] not in page.shortlist:
            continue
        configuration, projected = page.shortlist[row[0]]
        found = re.search(rf"^(.*): ({NUMBER}) {unit}$", row[at])
        assert found, f"chapter 01 writes {row[at]!r} for {row[0]}"
        assert configuration.startswith(found.group(1)), f"{row[0]}: {found.group(1)!r} vs {configuration!r}"
        assert _same(found.group(2), projected), f"{row[0]}: chapter 01 says {found.group(2)}, the decision {projected}"
        compared += 1
    assert compared >= 2, "fewer than two devices appear in both chapter 01 and the decision's shortlist"


def _the_total_in_chapter_05(page, device, total):
    _open_tab(page, "5 Energy & TCO", "on the recommended")
    summary = _visible_text(page, ".ak-summary")
    found = re.search(rf"costs \$({NUMBER}) \(\${NUMBER}-\${NUMBER}\) on the recommended (.+?):", summary)
    assert found, summary[:1500]
    assert found.group(2) == device, f"chapter 05 recommends {found.group(2)}, the decision {device}"
    assert _same(found.group(1), total), f"chapter 05 says ${found.group(1)}, the decision ${total}"


def test_a_vision_scenario_shows_one_frame_time_in_every_tab(app):
    device, summary, total = _decision(app, "smart-factory-edge-vision")
    ms = re.search(rf"{re.escape(device)} -- runs as .*?, ({NUMBER}) ms per frame", summary).group(1)
    # chapter 07: the edge table's time per frame for that device
    _open_tab(app, "7 Edge", "projection.vision")
    edge = _cell(app, "ms per frame", device, "ms per frame")
    assert _same(edge, ms), f"chapter 07 says {edge} ms per frame on {device}, the decision {ms}"
    assert "a change here changes them there" in app.locator("body").inner_text()
    # chapter 01: the decision's configuration per device, and the chapter's own figure at the same batch
    _open_tab(app, "1 Demand", "the decision's configuration (chapter 09)")
    searched = _cell(app, "device", device, "the decision's configuration (chapter 09)")
    assert searched.endswith("ms per frame") and _same(re.search(rf"({NUMBER}) ms per frame$", searched).group(1), ms)
    _demand_agrees_with_the_shortlist(app, "ms per frame")
    own = _cell(app, "device", device, "ms per frame (range)").split(" ")[0]
    assert _same(own, ms), f"chapter 01 says {own} ms per frame on {device}, the decision {ms}"
    assert "frames/s" in _visible_text(app, ".ak-summary") and "tokens" not in _visible_text(app, ".ak-summary")[:200]
    _the_total_in_chapter_05(app, device, total)
    no_error_output(app)


def test_an_llm_serving_scenario_shows_one_token_time_in_every_tab(app):
    device, summary, total = _decision(app, "serve-70b-at-latency-target")
    ms = re.search(rf"{re.escape(device)} -- runs as .*?, ({NUMBER}) ms per token", summary).group(1)
    _open_tab(app, "1 Demand", "the decision's configuration (chapter 09)")
    searched = _cell(app, "device", device, "the decision's configuration (chapter 09)")
    found = re.search(rf"({NUMBER}) ms per output token$", searched)
    assert found and _same(found.group(1), ms), f"chapter 01 says {searched!r} on {device}, the decision {ms} ms"
    _demand_agrees_with_the_shortlist(app, "ms per output token")
    _the_total_in_chapter_05(app, device, total)
    body = app.locator("body").inner_text()
    assert "streams [cameras]" not in _visible_text(app, "label"), "chapter 05 shows a cameras calculator for an LLM"
    assert "so it is not shown" in body
    # chapter 07 says it sizes a camera workload of its own, leaving the scenario alone
    _open_tab(app, "7 Edge", "not an edge camera workload")
    no_error_output(app)


def test_a_training_scenario_shows_one_number_of_days_in_every_tab(app):
    device, summary, total = _decision(app, "finetune-7b-in-a-day")
    days = re.search(rf"{re.escape(device)} -- runs as .*?, ({NUMBER}) days on 8", summary).group(1)
    assert _same(days, page_days := app.shortlist[device][1]), f"summary {days} days, shortlist {page_days}"
    _open_tab(app, "1 Demand", "the decision's configuration (chapter 09)")
    # the recommended device is not among chapter 01's default devices here: every device of both is compared
    _demand_agrees_with_the_shortlist(app, "days")
    # chapter 06 trains on the A100 by default: its days are chapter 01's for the A100
    a100 = _cell(app, "device", "A100 80GB SXM", "days on 8 (range)").split(" ")[0]
    _open_tab(app, "6 Cluster", "Scaling efficiency")
    cluster = re.search(rf"take ({NUMBER}) (?:\({NUMBER}-{NUMBER}\) )?days", _visible_text(app, ".ak-summary"))
    assert cluster and _same(cluster.group(1), a100), f"chapter 06: {cluster and cluster.group(1)}, chapter 01: {a100}"
    _the_total_in_chapter_05(app, device, total)
    no_error_output(app)


def test_in_chinese_chapter_01_shows_the_decisions_figures_in_chinese_words(app):
    """The same walk with ``lang=zh_CN``: chapter 01's decision column (in Chinese) carries the decision's
    figure for every device the two share; headers are looked up through the catalogue, not typed here."""
    from accelkit import i18n
    from accelkit.i18n import _

    with i18n.using("zh_CN"):
        projected, device = _("projected (range)"), _("device")
        column, demand_tab = _("the decision's configuration (chapter 09)"), _("1 Demand")
    open_page(app, app.app_url + _link("serve-70b-at-latency-target") + "&lang=zh_CN", ready=".ak-summary",
              charts=False)
    app.wait_for_function("(t) => document.body.innerText.includes(t)", arg=projected, timeout=120_000)
    no_error_output(app)
    heads, rows = _table(app, projected)
    shortlist = {r[heads.index(device)]: re.match(NUMBER, r[heads.index(projected)]).group(0)
                 for r in rows if re.match(NUMBER, r[heads.index(projected)])}
    _open_tab(app, demand_tab, column)
    summary = _visible_text(app, ".ak-summary")
    assert "推荐结论（第 09 章）会为每台设备搜索最佳配置" in summary, summary[:600]
    heads, rows = _table(app, column)
    compared = 0
    for row in rows:
        if row[0] in shortlist:
            found = re.search(rf"({NUMBER}) ms$", row[heads.index(column)])
            assert found and _same(found.group(1), shortlist[row[0]]), (row[0], row[heads.index(column)])
            compared += 1
    assert compared >= 2
