"""Figures of chapter 04: the software-ecosystem support matrix and the stack scores."""

from __future__ import annotations

import html
import textwrap
from functools import lru_cache

from ..ecosystem import CRITERIA, CRITERION_LABELS, LEVELS, STACK_LABELS
from ..ecosystem.vocabulary import LEVEL_WORDS, STATUS_WORDS
from ..i18n import _
from ._common import empty_figure, figure

__all__ = ["ecosystem_heatmap", "ecosystem_score_chart", "LEVEL_COLORS", "STATUS_COLORS"]

#: one colour per support level, green (native) to red (none); unknown is grey
LEVEL_COLORS = {
    "native": "#1a9850",
    "plugin": "#91cf60",
    "fork": "#d9ef8b",
    "limited": "#fdae61",
    "none": "#d73027",
    "unknown": "#d9d9d9",
}
STATUS_COLORS = {"pass": "#1a9850", "risk": "#fdae61", "fail": "#d73027"}


@lru_cache(maxsize=4096)
def _wrap(text, width=70):
    return "<br>".join(textwrap.wrap(html.escape(str(text)), width)) or "—"


def ecosystem_heatmap(ecosystem, stacks=None, highlight=(), title=None):
    """Stacks (rows) × criteria (columns), each cell coloured by its support level.

    Parameters
    ----------
    ecosystem : DataFrame
        :func:`accelkit.ecosystem.load_ecosystem` output.
    stacks : list of str, optional
        Row order (e.g. best score first); default: the table's order.
    highlight : iterable of str
        Criteria the current requirements depend on; marked ★ on the axis.

    Hovering a cell shows the level, the detail in words and its source URL.
    """
    title = _("Support per stack and criterion") if title is None else title
    data = ecosystem if stacks is None else ecosystem[ecosystem["stack"].isin(list(stacks))]
    if data.empty:
        return empty_figure(_("No stack to show"), title)
    order = list(stacks) if stacks is not None else list(dict.fromkeys(data["stack"]))
    order = [s for s in order if s in set(data["stack"])]
    cells = {(s, c): (lv, d, u) for s, c, lv, d, u in
             zip(data["stack"], data["criterion"], data["level"], data["detail"], data["source_url"])}
    highlight = set(highlight)
    x = [("★ " if c in highlight else "") + _(CRITERION_LABELS.get(c, c)) for c in CRITERIA]
    level_word = {level: _(LEVEL_WORDS[level]) for level in LEVELS}
    y = [STACK_LABELS.get(s, s) for s in order]
    code = {level: i for i, level in enumerate(LEVELS)}
    z, text, hover = [], [], []
    for stack in order:
        z_row, t_row, h_row = [], [], []
        for criterion in CRITERIA:
            level, detail, url = cells.get((stack, criterion), ("unknown", _("no row in the table"), ""))
            z_row.append(code[level])
            t_row.append(level_word[level])
            source = _("source: {url}").format(url=html.escape(url) if url else _("none found"))
            h_row.append(
                f"<b>{html.escape(STACK_LABELS.get(stack, stack))} · {html.escape(_(CRITERION_LABELS[criterion]))}: "
                f"{level_word[level]}</b><br>{_wrap(detail)}<br><i>{source}</i>"
            )
        z.append(z_row), text.append(t_row), hover.append(h_row)
    n = len(LEVELS)
    scale = []
    for i, level in enumerate(LEVELS):
        scale += [[i / n, LEVEL_COLORS[level]], [(i + 1) / n, LEVEL_COLORS[level]]]
    heatmap = {
        "type": "heatmap", "z": z, "x": x, "y": y, "text": text, "texttemplate": "%{text}", "textfont": {"size": 9},
        "hovertext": hover, "hoverinfo": "text", "colorscale": scale, "zmin": -0.5, "zmax": n - 0.5, "xgap": 2,
        "ygap": 2, "colorbar": {"tickvals": list(range(n)), "ticktext": [level_word[lv] for lv in LEVELS],
                                "title": {"text": _("level")},
                                "thickness": 12},
    }
    if highlight:
        title += " · " + _("★ your requirements depend on it")
    return figure([heatmap], title, height=max(380, 30 * len(order) + 200),
                  margin={"l": 150, "r": 20, "t": 130, "b": 30},
                  xaxis={"side": "top", "tickangle": -30},
                  yaxis={"autorange": "reversed", "title": _("software stack")})


def ecosystem_score_chart(scores, title=None):
    """Horizontal bars: each stack's checklist score (0-100), coloured by its worst status.

    Parameters
    ----------
    scores : DataFrame
        :func:`accelkit.ecosystem.stack_scores` output (best first).
    """
    title = _("Ecosystem score per stack") if title is None else title
    if scores is None or len(scores) == 0:
        return empty_figure(_("No stack to score"), title)
    colors = [STATUS_COLORS.get(s, "#888888") for s in scores["worst_status"]]
    word = {status: _(STATUS_WORDS[status]) for status in STATUS_WORDS}
    labels = [f"{sc:.0f}" + (f" · {nf} {word['fail']}" if nf else "") + (f" · {nr} {word['risk']}" if nr else "")
              for sc, nf, nr in zip(scores["score"], scores["n_fail"], scores["n_risk"])]
    hover = [
        f"<b>{html.escape(label)}</b>: {sc:.1f} / 100<br>{nf} {word['fail']}, {nr} {word['risk']}, {np_} {word['pass']}"
        + ("<br>" + _("worst: {reason}").format(reason=_wrap(reason)) if reason else "")
        for label, sc, nf, nr, np_, reason in zip(scores["label"], scores["score"], scores["n_fail"],
                                                  scores["n_risk"], scores["n_pass"], scores["worst_reason"])
    ]
    bar = {
        "type": "bar", "x": scores["score"], "y": scores["label"], "orientation": "h", "marker": {"color": colors},
        "text": labels, "textposition": "auto", "hovertext": hover, "hoverinfo": "text", "name": _("score"),
        "showlegend": False,
    }
    legend = [{"type": "bar", "x": [None], "y": [None], "marker": {"color": color},
               "name": _("worst item: {status}").format(status=word[status]),
               "showlegend": True, "hoverinfo": "skip"}
              for status, color in STATUS_COLORS.items()]  # legend for the colours
    return figure([bar] + legend, title, height=max(320, 26 * len(scores) + 150),
                  xaxis={"title": _("score [0-100] (weighted checklist points)"), "range": [0, 100]},
                  yaxis={"autorange": "reversed"})
