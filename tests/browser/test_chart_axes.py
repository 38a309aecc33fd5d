"""Every chart the app draws has sane axes and a legend clear of them (issue 27 point 4).

A vision, an LLM-serving and a training scenario are opened from a link; every tab is opened in
turn, and for every chart on it the browser's own layout is read (plotly's ``_fullLayout``, the
ranges it actually drew, and the boxes of the legend and the axis titles):

- every axis range is two distinct finite numbers; a log axis spans at most 10^-30 .. 10^30
  (a reference line placed at 10^value instead of log10(value) once stretched one to 10^176);
- the legend's box does not overlap an axis title.
"""

from __future__ import annotations

import pytest

from accelkit.scenario import Scenario

from .conftest import open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXAMPLES = ["smart-factory-edge-vision", "serve-70b-at-latency-target", "finetune-7b-in-a-day"]
TABS = ["Catalogue", "1 Demand", "2 Bandwidth", "3 Precision", "4 Ecosystem", "5 Energy & TCO", "6 Cluster",
        "7 Edge", "9 Decision", "10 How far to trust"]

_AXES_AND_LEGEND = """() => {
  const problems = [];
  let charts = 0;
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                            Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    if (gd.offsetParent === null || !gd._fullLayout) continue;
    charts += 1;
    const fl = gd._fullLayout;
    const title = (fl.title && fl.title.text) || '(untitled chart)';
    for (const key of Object.keys(fl)) {
      if (!/^[xy]axis\\d*$/.test(key) || !fl[key] || !fl[key].range || fl[key].visible === false) continue;
      const ax = fl[key], r = ax.range.map(Number);
      if (!(Number.isFinite(r[0]) && Number.isFinite(r[1]))) { problems.push(`${title}: ${key} range ${ax.range}`); continue; }
      if (r[0] === r[1]) problems.push(`${title}: ${key} range is one point (${r[0]})`);
      if (ax.type === 'log' && (Math.abs(r[0]) > 30 || Math.abs(r[1]) > 30))
        problems.push(`${title}: log ${key} spans 10^${r[0].toFixed(1)}..10^${r[1].toFixed(1)}`);
      if (ax.type === 'linear' && (Math.abs(r[0]) > 1e30 || Math.abs(r[1]) > 1e30))
        problems.push(`${title}: ${key} range ${r}`);
    }
    const legend = gd.querySelector('g.legend');
    if (legend) {
      const box = legend.getBoundingClientRect();
      for (const t of gd.querySelectorAll('text.xtitle, text.ytitle, text[class^="x"][class$="title"], text[class^="y"][class$="title"]')) {
        if (!t.textContent.trim()) continue;
        const tb = t.getBoundingClientRect();
        if (overlap(box, tb) > 4)
          problems.push(`${title}: the legend (y ${Math.round(box.top)}-${Math.round(box.bottom)}, x ${Math.round(box.left)}-${Math.round(box.right)}) covers the axis title "${t.textContent.trim()}" (y ${Math.round(tb.top)}-${Math.round(tb.bottom)}, x ${Math.round(tb.left)}-${Math.round(tb.right)})`);
      }
    }
  }
  return {charts, problems: Array.from(new Set(problems))};
}"""


def _open_tab(page, name):
    page.get_by_role("tab", name=name, exact=True).click()
    # a tab builds its panel when first opened ("opening…"), then its charts render
    page.wait_for_function("() => !Array.from(document.querySelectorAll('.lm-TabPanel, .p-TabPanel, .widget-tab-contents'))"
                           ".some(p => p.offsetParent !== null && p.innerText.includes('opening…'))", timeout=120_000)
    page.wait_for_timeout(2500)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_chart_on_every_tab_has_finite_sane_axes_and_a_legend_clear_of_them(page, app_url, example):
    link = "?" + Scenario.load(f"examples/{example}.yaml").to_query_string()
    open_page(page, app_url + link, ready=".ak-start", charts=False)
    found, seen = [], 0
    for tab in TABS:
        _open_tab(page, tab)
        result = page.evaluate(_AXES_AND_LEGEND)
        seen += result["charts"]
        found += [f"tab {tab}: {p}" for p in result["problems"]]
    assert seen >= 8, f"only {seen} charts were drawn over {len(TABS)} tabs for {example}: the tabs did not render"
    assert not found, f"{example}: charts with broken axes or legends:\n  " + "\n  ".join(found)
