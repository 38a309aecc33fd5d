"""The decision page a buyer signs, as HTML (one A4 page in print) and as a PDF.

:func:`summary_html` renders :func:`accelkit.select.decision_summary`'s dict -- it
computes nothing -- as a block with ``id="decision-summary"``: first in the app's
decision tab and on the report's index page. Every string from the data or the
person is escaped. :data:`SUMMARY_CSS` styles it on screen and, with ``@media
print``, prints it alone on one A4 page. :func:`write_pdf` prints a standalone page
of the block with Debian's chromium driven by Playwright, offline, scaled so it fits
one A4 page.

Below both :mod:`accelkit.ui` and :mod:`accelkit.report` (the app's download button
calls the report), so neither imports the other through it.
"""

from __future__ import annotations

import html
import math
import os
import shutil
from pathlib import Path

from .i18n import _, html_lang

__all__ = ["PdfError", "SUMMARY_CSS", "chromium_path", "summary_document", "summary_html", "write_pdf"]

#: A4 in millimetres, and the margins the print stylesheet and the PDF use
A4_MM = (210.0, 297.0)
MARGIN_MM = 12.0
_MM_TO_PX = 96 / 25.4

SUMMARY_CSS = f"""<style>
#decision-summary {{font-family: Arial, Helvetica, sans-serif; color: #1f2328; border: 1px solid #c9d7c9;
  border-left: 5px solid #3c8d40; background: #fbfdfb; padding: 10px 16px; margin: 6px 0 12px; max-width: 62em;
  font-size: 14px; line-height: 1.35}}
#decision-summary h2 {{font-size: 19px; margin: 2px 0 2px}}
#decision-summary h3 {{font-size: 14px; margin: 10px 0 3px; color: #2f5f32}}
#decision-summary .ak-ds-job {{color: #555; margin: 0 0 6px}}
#decision-summary .ak-ds-headline {{font-weight: bold; margin: 4px 0 8px}}
#decision-summary dl {{display: grid; grid-template-columns: 13em 1fr; gap: 3px 12px; margin: 0}}
#decision-summary dt {{font-weight: bold; color: #333; float: none; width: auto; clear: none}}
#decision-summary dd {{margin: 0; float: none; width: auto}}
#decision-summary ul, #decision-summary ol {{margin: 2px 0; padding-left: 1.4em}}
#decision-summary li {{margin: 1px 0}}
#decision-summary table {{border-collapse: collapse; font-size: 13px}}
#decision-summary td {{padding: 1px 10px 1px 0; vertical-align: top}}
#decision-summary .ak-ds-meets {{color: #2e7d32; font-weight: bold}}
#decision-summary .ak-ds-misses {{color: #b3261e; font-weight: bold}}
#decision-summary .ak-ds-small {{font-size: 12px; color: #555}}
#decision-summary .ak-ds-sign {{margin-top: 12px; display: flex; gap: 3em; font-size: 13px}}
#decision-summary .ak-ds-sign span {{border-top: 1px solid #888; padding-top: 2px; min-width: 14em}}
@page {{size: A4; margin: {MARGIN_MM:g}mm}}
@media print {{
  /* only the decision page prints: everything that neither holds it nor lies inside it is hidden */
  body *:not(:has(#decision-summary)):not(#decision-summary):not(#decision-summary *) {{display: none !important}}
  #decision-summary {{border: none; background: none; padding: 0; margin: 0; max-width: none; font-size: 10pt;
    break-inside: avoid; page-break-inside: avoid}}
  #decision-summary h2 {{font-size: 15pt}}
  #decision-summary h3 {{font-size: 11pt}}
  #decision-summary table, #decision-summary .ak-ds-small {{font-size: 9pt}}
}}
</style>"""

#: the most items of a list printed on the page (the rest are counted, and shown in chapter 09)
_MAX_ITEMS = 5
_MAX_CHARS = 220


def _e(text):
    return html.escape(str(text), quote=True)


def _tag(name, text, attributes=""):
    """``<name attributes>text</name>``, the text escaped."""
    return f"<{name}{attributes}>{_e(text)}</{name}>"


def _clip(text, n=_MAX_CHARS):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _items(entries, render, more):
    """The first :data:`_MAX_ITEMS` of ``entries`` as list items; ``more``, a sentence with ``{n}``, counts the rest."""
    shown = [f"<li>{render(e)}</li>" for e in entries[:_MAX_ITEMS]]
    if len(entries) > _MAX_ITEMS:
        shown.append(f'<li class="ak-ds-small">{_e(more.format(n=len(entries) - _MAX_ITEMS))}</li>')
    return "".join(shown)


def summary_html(summary, css=True):
    """The decision page (``<section id="decision-summary">``) for a
    :func:`accelkit.select.decision_summary` dict; ``css`` includes :data:`SUMMARY_CSS`.

    Written in the language in use (:mod:`accelkit.i18n`): the page's own words here, the
    sentences as :func:`~accelkit.select.decision_summary` wrote them, the assumptions' labels
    and the risks' kinds (English keys in the dict) translated as they are shown, the devices by
    the names the reader knows (:func:`accelkit.names.display_name`). In Chinese
    the exchange rate behind the yuan figures (:func:`accelkit.currency.rate_note`) is named
    under the prices' date."""
    from .currency import rate_note
    from .names import display_name
    from .numbers import joined
    from .select.summary import usd_words

    d = summary
    parts = [SUMMARY_CSS if css else "", '<section id="decision-summary" class="ak-decision-summary">',
             _tag("h2", _("Decision: {title}").format(title=d["title"])),
             f'<p class="ak-ds-job">{_e(d["job"])}</p>',
             f'<p class="ak-ds-headline" data-field="headline">{_e(d["headline"])}</p>']
    if d.get("device"):
        perf = d.get("performance") or {}
        mark = (_tag("span", _("meets the target"), ' class="ak-ds-meets"') if perf.get("meets")
                else _tag("span", _("misses the target"), ' class="ak-ds-misses"'))
        timed = perf["kind"] == "time" if "kind" in perf else "days" in perf.get("text", "")
        target_label = _("Time against the target") if timed else _("Latency against the target")
        verb = _("Rent") if d["action"] == "rent" else _("Buy")
        parts.append("<dl>")
        parts.append(_tag("dt", verb) + f'<dd data-field="order">{_e(d["order"])}</dd>')
        parts.append(_tag("dt", _("Total over {horizon}").format(horizon=d["total"]["horizon"]))
                     + f'<dd data-field="total">{_e(d["total"]["text"])} '
                     + _tag("span", _("(central figure, low-high range)"), ' class="ak-ds-small"') + "</dd>")
        parts.append(_tag("dt", target_label) + '<dd data-field="performance">'
                     + _("{performance}: {mark}").format(performance=_e(perf.get("text", "")), mark=mark) + "</dd>")
        if d.get("checked"):
            # how far the engine behind the figure was checked on published measurements like this one
            parts.append(_tag("dt", _("The engine's track record")) + f'<dd data-field="checked">{_e(d["checked"])}</dd>')
        if d.get("configuration"):
            parts.append(_tag("dt", _("Configuration"))
                         + f'<dd data-field="configuration">{_e(d["configuration"])}</dd>')
        parts.append("</dl>")
        if d["runners_up"]:
            parts.append(_tag("h3", _("Runners-up, and why they lost")) + "<ol>")
            parts.append("".join(
                '<li data-field="runner-up">'
                + _("<b>{name}</b>: {why}. {order}, {total}.").format(
                    name=_e(display_name(r["name"])), why=_e(r["why"]), order=_e(r["order"]),
                    total=_e(r["total_text"]))
                + "</li>" for r in d["runners_up"]))
            parts.append("</ol>")
        else:
            parts.append(_tag("h3", _("Runners-up")) + _tag("p", _("None: no other device passes every hard limit.")))
        parts.append(_tag("h3", _("Risks")))
        if d["risks"]:
            parts.append("<ul>" + _items(d["risks"], lambda r: _("<b>{device}</b> ({kind}): {text}").format(
                device=_e(display_name(r["device"])), kind=_e(_(r["kind"])), text=_e(_clip(r["text"]))),
                _("and {n} more risks")) + "</ul>")
        else:
            parts.append(_tag("p", _("No licence, export, market or ecosystem risk is recorded for these devices.")))
    elif d.get("next_step"):
        parts.append(f'<p data-field="next-step">{_e(d["next_step"])}</p>')
    if d["cannot_verify"]:
        parts.append(_tag("h3", _("Cannot be verified (a figure a limit needs is unknown)")) + "<ul>")
        parts.append(_items(d["cannot_verify"], lambda r: _("<b>{device}</b>: {missing}; settle it with {settle}").format(
            device=_e(display_name(r["device"])), missing=_e(_clip(r["missing"], 120)),
            settle=_e(_clip(r["settle"], 100))),
            _("and {n} more devices")))
        parts.append("</ul>")
    parts.append(_tag("h3", _("What was assumed")) + "<table>")
    parts.append("".join(f"<tr><td>{_tag('b', _(k))}</td><td>{_e(v)}</td></tr>" for k, v in d["assumptions"]))
    if d.get("quoted_prices"):
        quotes = joined([f"{display_name(k)} {usd_words(v)}" for k, v in d["quoted_prices"].items()])
        parts.append("<tr><td>" + _tag("b", _("your quotes")) + f"</td><td>{_e(quotes)}</td></tr>")
    parts.append("</table>")
    dated = d.get("prices_dated") or _("no dated price behind these figures")
    counts = d["counts"]
    tally = _("{shortlisted} device(s) shortlisted, {unverified} cannot be verified, {excluded} excluded by a hard "
              "limit; chapter 09 shows them all.").format(shortlisted=counts["shortlisted"],
                                                          unverified=counts["cannot verify"],
                                                          excluded=counts["excluded"])
    parts.append('<p class="ak-ds-small" data-field="prices-dated">'
                 + _e(_("Prices dated: {dated}.").format(dated=dated)) + " " + _e(tally) + "</p>")
    note = rate_note()
    if note:
        parts.append(f'<p class="ak-ds-small" data-field="exchange-rate">{_e(note)}</p>')
    parts.append('<div class="ak-ds-sign">' + _tag("span", _("Approved by")) + _tag("span", _("Date")) + "</div>")
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def summary_document(summary, lang=None):
    """A standalone HTML page holding only the decision page (for the PDF); ``lang`` (default
    :func:`accelkit.i18n.html_lang`, the language in use) is the page's ``lang`` attribute."""
    lang = html_lang() if lang is None else lang
    title = _("{title}: decision").format(title=summary["title"])
    return (f'<!DOCTYPE html>\n<html lang="{_e(lang)}"><head><meta charset="utf-8">'
            f'<title>{_e(title)}</title></head><body style="margin:0">\n'
            f"{summary_html(summary)}\n</body></html>\n")


class PdfError(RuntimeError):
    """The PDF cannot be written (no chromium, no Playwright); the message is one line."""


def chromium_path():
    """Debian's chromium (``ACCELKIT_CHROMIUM`` overrides); raises :class:`PdfError` if absent."""
    path = os.environ.get("ACCELKIT_CHROMIUM", "/usr/bin/chromium")
    if Path(path).is_file():
        return path
    found = shutil.which("chromium")
    if found:
        return found
    raise PdfError(f"--pdf needs chromium ({path} not found; apt-get install -y chromium)")


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise PdfError("--pdf needs Playwright (pip install playwright; its own browsers are not used)") from None
    return sync_playwright


_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def write_pdf(summary, path):
    """Print the decision page to ``path`` as one A4 page (offline: nothing is fetched).

    The page is laid out at the printable width; when it is taller than the printable
    height it is scaled down to fit, so it is always one page.
    """
    executable = chromium_path()
    sync_playwright = _playwright()
    # Playwright's sync API refuses to run where an asyncio loop is running (a Jupyter kernel, the
    # app's "download report", a test session with async fixtures): print from a thread of its own
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_print_pdf, summary, path, executable, sync_playwright).result()


def _print_pdf(summary, path, executable, sync_playwright):
    width_px = (A4_MM[0] - 2 * MARGIN_MM) * _MM_TO_PX
    height_px = (A4_MM[1] - 2 * MARGIN_MM) * _MM_TO_PX
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=_ARGS)
        try:
            page = browser.new_page(viewport={"width": math.floor(width_px), "height": math.floor(height_px)})
            page.route("**/*", lambda route: route.abort())  # offline: the page needs nothing from outside
            page.set_content(summary_document(summary), wait_until="load")
            page.emulate_media(media="print")
            tall = page.evaluate("() => document.getElementById('decision-summary').getBoundingClientRect().height")
            scale = max(0.1, min(1.0, 0.97 * height_px / max(tall, 1.0)))
            page.pdf(path=str(path), format="A4", print_background=True, scale=scale,
                     margin={k: f"{MARGIN_MM:g}mm" for k in ("top", "right", "bottom", "left")})
        finally:
            browser.close()
    return Path(path)
