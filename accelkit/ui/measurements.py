""""Use my measurements": chapter 08's probe results for any panel, read once.

Chapters 01, 02 and 03 can replace the published efficiencies of the measured device
with what ``accelkit probe --json`` (chapter 08) measured on it. This is the one place
that reads that file for the panels, says what is missing in words, and renders the
measured rows; the projection engine does the rest (``measurements=`` of
:func:`accelkit.sizing.per_device` and :func:`accelkit.projection.project_scenario`).
"""

from __future__ import annotations

import html
from pathlib import Path

from ..i18n import _

__all__ = ["ProbeMeasurements"]


class ProbeMeasurements:
    """Probe results from a JSON file written by ``accelkit probe --json``, loaded on first use.

    Parameters
    ----------
    path : str or Path
        The file; empty means none given (the panels then say how to make one).
    """

    def __init__(self, path=""):
        self.path = str(path or "")
        self._frame = None

    def __bool__(self):
        return bool(self.path)

    def frame(self):
        """The results table; ValueError naming what to give when there is no file."""
        if not self.path:
            raise ValueError(_("use my measurements: give measured_results, a JSON file written by chapter 08 "
                               "(accelkit probe --json)"))
        if self._frame is None:
            from ..probes.results import load_results

            self._frame = load_results(self.path)
        return self._frame

    def when(self, on):
        """The results when the panel's "use my measurements" switch is ``on``, else None."""
        return self.frame() if on else None

    def source(self):
        """Where the results came from, for a sentence."""
        return self.frame().attrs.get("source", self.path)

    def html(self, probes_pattern="precision|matmul"):
        """The measured rows whose probe name matches ``probes_pattern``, as an HTML block.

        A missing or unreadable file gives a note in the page, never an exception: the
        chapter must still work without measurements.
        """
        if not self.path:
            return ('<div class="ak-note">' + _(
                "No measurements loaded. Run chapter 08 or <code>accelkit probe --quick --json results.json</code> "
                "and give that file as <code>measured_results</code> to compare measured fp32 / bf16 speed and error "
                "here.") + "</div>")
        try:
            frame = self.frame()
        except Exception as exc:  # a bad file must not break the chapter
            return ('<div class="ak-error">' + _("Could not read {file}: {problem}").format(
                file=html.escape(self.path), problem=html.escape(str(exc))) + "</div>")
        from ._base import table_html

        rows = frame[frame["probe"].astype(str).str.contains(probes_pattern, regex=True)]
        cols = [c for c in ("probe", "dtype", "shape", "measured", "unit", "datasheet", "ratio", "note") if c in rows]
        note = _("From {file}:").format(file=html.escape(Path(self.path).name))
        return f'<div class="ak-note">{note}</div>' + table_html(rows[cols])
