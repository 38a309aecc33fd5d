"""Small HTML pieces every panel and the file widgets share (below both, so neither imports the other)."""

from __future__ import annotations

import html

__all__ = ["error_html"]


def error_html(message):
    """A bad input's message as the panels show it (escaped)."""
    return f'<div class="ak-error"><b>Check this input:</b> {html.escape(str(message))}</div>'
