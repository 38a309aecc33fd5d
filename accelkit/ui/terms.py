"""Terms explained on tap as well as on hover: the glossary (``data/glossary.csv``) in the panels.

- :func:`term` -- one term as an ``<abbr>``: its ``title`` shows on hover, and because it takes the
  focus (``tabindex``) a tap on a phone opens the definition under it (pure CSS, no script, so it
  works in Voilà, JupyterLab and a static report alike);
- :func:`summary_html` -- a panel's summary sentences with the first use of each listed term marked so;
- :func:`words_html` -- a "Words on this page" box: one ``<details>`` per term (a tap opens it);
- :class:`WordsBox` -- that box as a widget, with an English / 中文 switch and the full glossary
  behind a button (built only when asked for).

Every string a panel passes to these helpers must be a term or an alias in the glossary;
``tests/test_glossary.py`` reads the calls in ``accelkit/ui/*.py`` and checks them.
"""

from __future__ import annotations

import html
import re

import ipywidgets as W

from .. import glossary
from ..i18n import _

__all__ = ["TERMS_CSS", "term", "summary_html", "words_html", "WordsBox"]

TERMS_CSS = """
<style>
.ak-term {border-bottom:1px dotted #666;cursor:help;position:relative;text-decoration:none;outline:none}
.ak-term:focus {background:#fff3c4}
.ak-term:focus::after {content:attr(data-def);position:absolute;left:0;top:1.5em;z-index:30;display:block;
  width:min(20em,80vw);background:#fffbe6;border:1px solid #c9b458;border-radius:3px;padding:5px 7px;
  font-size:12px;font-weight:normal;line-height:1.4;color:#222;white-space:normal;box-shadow:0 2px 6px rgba(0,0,0,.2)}
.ak-words {font-size:13px;margin:6px 0}
.ak-words > summary {cursor:pointer;color:#1a5a96;font-weight:600;padding:4px 0}
.ak-words details {margin:2px 0 2px 12px}
.ak-words details > summary {cursor:pointer;padding:3px 0}
.ak-words details p {margin:2px 0 4px 16px;max-width:60em}
</style>
"""

_INTRO = {"en": ("Words on this page", "tap or click a word for its meaning", "Source"),
          "zh": ("本页术语", "点击术语查看解释", "出处")}


def term(name, text=None, lang=None):
    """``name`` (a glossary term or alias) as an ``<abbr>`` that explains itself on hover and on tap.

    ``text`` is what is shown (default ``name``); it is escaped. ``lang`` ("en", "zh", a locale;
    default the language now in use) is the definition's language.
    """
    definition = html.escape(glossary.define(name, lang), quote=True)
    shown = html.escape(name if text is None else text)
    return f'<abbr class="ak-term" tabindex="0" title="{definition}" data-def="{definition}">{shown}</abbr>'


def _pattern(form):
    """A whole-word match of ``form`` (a plural 's' allowed); acronyms match their exact case."""
    body = re.escape(form)
    flags = 0 if any(c.isupper() for c in form) else re.IGNORECASE
    # word edges are ASCII: in Chinese text a term sits right next to a Chinese character
    return re.compile(rf"(?<![A-Za-z0-9_-]){body}s?(?![A-Za-z0-9_-])", flags)


def _forms(name, lang=None):
    """How ``name`` may be written on the page: itself, and on a Chinese page its Chinese words too."""
    forms = [name]
    if glossary._lang(lang) == "zh":
        forms += glossary.ZH_FORMS.get(glossary.lookup(name)["term"], ())
    return forms


def mark(text, names, lang=None):
    """Escaped ``text`` with the first use of each of ``names`` wrapped by :func:`term`.

    On a Chinese page (``lang`` "zh", or the language in use) a term written in Chinese
    (:data:`accelkit.glossary.ZH_FORMS`) is marked as well.
    """
    escaped = html.escape(text)
    spans = []  # (start, end, name) of the first use of each name, never overlapping
    forms, taken = [], set()
    for name in names:
        for form in _forms(name, lang):
            if form != name and form in taken:
                continue  # two spellings of one term ("ridge point", "Ridge point"): its Chinese words once
            taken.add(form)
            forms.append((form, name))
    for form, name in sorted(forms, key=lambda f: len(f[0]), reverse=True):  # longer first ("ZeRO stage", "ZeRO")
        if any(n == name for _s, _e, n in spans):
            continue
        for match in _pattern(html.escape(form)).finditer(escaped):
            start, end = match.span()
            if not any(s < end and start < e for s, e, _n in spans):
                spans.append((start, end, name))
                break
    out, last = [], 0
    for start, end, name in sorted(spans):
        out.append(escaped[last:start])
        out.append(term(name, html.unescape(escaped[start:end]), lang))
        last = end
    out.append(escaped[last:])
    return "".join(out)


def summary_html(sentences, names, lang=None):
    """A panel's summary box (as :func:`accelkit.ui._base.summary_html`) with ``names`` explained on tap."""
    if isinstance(sentences, str):
        sentences = [sentences]
    seen = set()
    parts = []
    for sentence in sentences:
        if not sentence:
            continue
        fresh = [n for n in names if n not in seen and any(_pattern(html.escape(f)).search(html.escape(sentence))
                                                            for f in _forms(n, lang))]
        seen.update(fresh)
        parts.append(mark(sentence, fresh, lang))
    body = "<br>".join(parts)
    return f'{TERMS_CSS}<div class="ak-summary">{body}</div>' if body else ""


def words_html(names, lang=None, open_=False):
    """A "Words on this page" box: each term a ``<details>`` (short definition; tap for more and a source)."""
    code = glossary._lang(lang)
    title, hint, source = _INTRO[code]
    items, done = [], set()
    for name in names:
        row = glossary.lookup(name)
        if row["term"] in done:
            continue
        done.add(row["term"])
        link = ""
        if row["source_url"]:
            link = (f' <a href="{html.escape(row["source_url"])}" target="_blank" rel="noopener noreferrer">'
                    f"{source}</a>")
        items.append(f"<details><summary><b>{html.escape(glossary.shown_name(row['term'], code))}</b>: "
                     f"{html.escape(row[f'short_{code}'])}"
                     f"</summary><p>{html.escape(row[f'long_{code}'])}{link}</p></details>")
    state = " open" if open_ else ""
    return (f'{TERMS_CSS}<details class="ak-words"{state}><summary>{title} ({len(items)}) '
            f'<span class="ak-note">{hint}</span></summary>{"".join(items)}</details>')


class WordsBox:
    """The words of one panel as a widget: the box, an English / 中文 switch, and the full glossary on demand."""

    def __init__(self, names, lang=None):
        self.names = tuple(names)
        lang = glossary._lang(lang)  # default: the language now in use ("zh" for zh_CN)
        for name in self.names:  # an unknown word fails when the panel is built, naming the closest terms
            glossary.lookup(name)
        self.lang = W.ToggleButtons(options=[("English", "en"), ("中文", "zh")], value=lang,
                                    style={"button_width": "70px"}, layout=W.Layout(width="auto"))
        self.full = W.ToggleButton(value=False, description=_("Full glossary"), icon="book",
                                   tooltip=_("every term the workbook uses, with sources"),
                                   layout=W.Layout(width="150px"))
        self.box = W.HTML(words_html(self.names, lang))
        self.page = W.HTML("")
        self.lang.observe(lambda _change: self._draw(), names="value")
        self.full.observe(lambda _change: self._draw(), names="value")
        self.widget = W.VBox([self.box, W.HBox([self.lang, self.full]), self.page])

    def _draw(self):
        self.box.value = words_html(self.names, self.lang.value)
        self.page.value = glossary.glossary_html(self.lang.value) if self.full.value else ""
