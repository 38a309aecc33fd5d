"""Small HTML pieces every panel and the file widgets share (below both, so neither imports the other), and
the front door's link and language pieces (plain HTML: they run in the browser)."""

from __future__ import annotations

import html
from urllib.parse import unquote_plus

from ..i18n import LANGUAGE_NAMES, LANGUAGES, _

__all__ = ["error_html", "copy_link_html", "differs_html", "languages_html"]


def error_html(message):
    """A bad input's message as the panels show it (escaped)."""
    return '<div class="ak-error"><b>{check}</b> {message}</div>'.format(
        check=html.escape(_("Check this input:")), message=html.escape(str(message)))


#: the copy button's click: the link is the page's own address (computed in the browser, so it is right
#: behind any proxy or JupyterHub prefix) with this view's query; if the clipboard is refused (an http page,
#: a browser that asks), the link stands selected in a read-only box for the person to copy
_COPY_JS = ("var b=this,p=b.parentNode,box=p.querySelector('.ak-link-url'),note=p.querySelector('.ak-link-status');"
            "var url=location.origin+location.pathname+'?'+b.dataset.query;"
            "box.value=url;box.style.display='block';box.focus();box.select();"
            "var ok=function(){note.textContent=b.dataset.ok},no=function(){note.textContent=b.dataset.no};"
            "try{navigator.clipboard.writeText(url).then(ok,no)}catch(e){no()}")


def copy_link_html(query):
    """A "Copy link" button (plain HTML: it must run in the browser) with its fallback box."""
    words = {"ok": _("Link copied."), "no": _("Copy the link from the box."),
             "title": _("a link that reopens this view with every setting"), "button": _("Copy link"),
             "box": _("link to this view")}
    words = {k: html.escape(v) for k, v in words.items()}
    return (
        '<span class="ak-copy-link"><button type="button" class="ak-copy-button jupyter-button" '
        f'data-query="{html.escape(query)}" data-ok="{words["ok"]}" data-no="{words["no"]}" '
        f'onclick="{html.escape(_COPY_JS)}" title="{words["title"]}">{words["button"]}</button> '
        '<span class="ak-link-status ak-note"></span>'
        f'<input class="ak-link-url" type="text" readonly style="display:none" aria-label="{words["box"]}"></span>'
    )


def differs_html(scenario):
    """The settings of this view that differ from the defaults, as the link writes them."""
    parts = [f"{k}={unquote_plus(v)}" for k, v in (p.split("=", 1) for p in scenario.to_query_string().split("&")
                                                     if "=" in p)]
    if not parts:
        return '<div class="ak-note">{text}</div>'.format(
            text=html.escape(_("The link carries every setting; all are at their defaults.")))
    shown = ", ".join(f"<code>{html.escape(p)}</code>" for p in parts)
    return '<div class="ak-note">{text}</div>'.format(
        text=_("The link carries every setting; these differ from the defaults: {settings}").format(settings=shown))


def languages_html(query_for, current):
    """English / 简体中文: the page again, same view (``query_for(lang)``: its query), in the other language."""
    links = []
    for lang in LANGUAGES:
        name = html.escape(LANGUAGE_NAMES[lang])
        if lang == current:
            links.append(f"<b>{name}</b>")
            continue
        query = html.escape(query_for(lang))
        links.append(f'<a class="ak-lang" lang="{lang.replace("_", "-")}" href="?{query}" data-query="{query}" '
                     "onclick=\"location.href=location.origin+location.pathname+'?'+this.dataset.query;"
                     'return false;">' + name + "</a>")
    return '<div class="ak-languages ak-note">{links}</div>'.format(links=" · ".join(links))
