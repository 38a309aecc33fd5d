"""Small HTML pieces every panel and the file widgets share (below both, so neither imports the other)."""

from __future__ import annotations

import html

from ..i18n import _

__all__ = ["error_html"]


def error_html(message):
    """A bad input's message as the panels show it (escaped)."""
    return '<div class="ak-error"><b>{check}</b> {message}</div>'.format(
        check=html.escape(_("Check this input:")), message=html.escape(str(message)))
