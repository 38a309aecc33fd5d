"""Widgets for files in and out: a picker (built-in / upload / the operator's data folder) and downloads.

No widget here takes a path: a visitor of the served app cannot name a server file,
and a download is a ``data:`` link built in memory (no file is written on the server).
See :mod:`accelkit.userfiles` for the limits and the data folder's rules.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import ipywidgets as W

from .. import units
from .. import userfiles as U
from ..i18n import _

__all__ = ["FilePicker", "download_link", "DownloadBox"]

UPLOAD = ("upload", "")


class FilePicker:
    """A choice of file: built-in entries, "uploaded file(s)", or a file of the data folder.

    Parameters
    ----------
    description : str
        The dropdown's label.
    builtin : list of (label, key)
        Entries that name no file (``("example", "example")``); :meth:`read` returns the key.
    accept : str
        The upload widget's ``accept`` (".csv,.txt").
    suffixes : tuple of str
        Data-folder files shown (by ending; empty: all).
    given : str or Path, optional
        A file the notebook's own code named (a parameter such as ``log_path``): offered as
        an entry. Never set by the app's visitors.
    multiple : bool
        Several files at once (one log per host).
    """

    def __init__(self, description, builtin=(), accept="", suffixes=(), given=None, multiple=False, value=None,
                 width="300px"):
        self.builtin = list(builtin)
        options = list(self.builtin)
        self.given = [Path(p) for p in ([given] if isinstance(given, (str, Path)) else (given or [])) if str(p)]
        if self.given:
            options.append((_("file: {names}").format(names=", ".join(p.name for p in self.given)), ("given", "")))
        options.append((_("uploaded file(s)") if multiple else _("uploaded file"), UPLOAD))
        for name in U.data_files(suffixes=suffixes):
            options.append((_("data folder: {name}").format(name=name), ("data", name)))
        if value is None:
            value = ("given", "") if self.given else options[0][1]
        self.choice = W.Dropdown(options=options, value=value, description=description,
                                 layout=W.Layout(width=width))
        self.upload = W.FileUpload(accept=accept, multiple=multiple, description=_("upload"),
                                   tooltip=_("a file from your computer (at most {size} MiB)").format(
                                       size=f"{U.MAX_BYTES / units.MIB:g}"),
                                   layout=W.Layout(width="120px"))
        self.upload.observe(self._on_upload, names="value")
        self.widget = W.HBox([self.choice, self.upload], layout=W.Layout(align_items="center"))

    def _on_upload(self, change):
        if change["new"]:
            self.choice.value = UPLOAD

    def give(self, name, data):
        """Set the upload from Python (check cells, tests) as if a person had uploaded ``data``."""
        import datetime

        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self.upload.value = ({"name": str(name), "type": "", "size": len(data), "content": memoryview(data),
                              "last_modified": datetime.datetime.now(datetime.timezone.utc)},)

    @property
    def key(self):
        """The chosen entry: a built-in key, or ``"upload"``, ``"data"``, ``"given"``."""
        value = self.choice.value
        return value[0] if isinstance(value, tuple) else value

    def read(self):
        """A built-in key (str), or ``[(name, text), ...]`` of the chosen file(s), within the limits,
        or -- for the files the notebook's code named (``given``) -- their paths, for that code to read.

        Raises :class:`accelkit.userfiles.InputError` for nothing uploaded, a refused name
        or a file over the limits.
        """
        value = self.choice.value
        if not isinstance(value, tuple):
            return value
        kind, name = value
        if kind == "upload":
            files = U.uploaded_files(self.upload.value)
            if not files:
                raise U.InputError(_("{what}: no file uploaded yet; press 'upload' and choose one").format(
                    what=self.choice.description))
            return files
        if kind == "data":
            return [(name, U.read_data_file(name))]
        return list(self.given)  # the notebook's own files: its code reads them (no visitor can name one)


def download_link(filename, text, mime="application/json", label=None):
    """An ``<a download>`` link carrying ``text`` as a ``data:`` URL (nothing is written on the server)."""
    data = base64.b64encode(text.encode("utf-8") if isinstance(text, str) else bytes(text)).decode("ascii")
    label = label or _("download {file}").format(file=filename)
    return (f'<a download="{html.escape(filename)}" href="data:{mime};base64,{data}" class="ak-download">'
            f"{html.escape(label)}</a>")


class DownloadBox:
    """A button that turns what ``make()`` returns — ``(filename, text, mime)`` — into a download link."""

    def __init__(self, description, make, icon="download", width="170px"):
        self.make = make
        self.button = W.Button(description=description, icon=icon, layout=W.Layout(width=width))
        self.status = W.HTML()
        self.button.on_click(lambda _b: self.prepare())
        self.widget = W.HBox([self.button, self.status], layout=W.Layout(align_items="center"))

    def prepare(self):
        """Build the link now; returns its HTML (an error message if ``make`` refuses)."""
        from ._html import error_html

        try:
            filename, text, mime = self.make()
        except (OSError, ValueError) as exc:
            self.status.value = error_html(exc)
            return self.status.value
        self.status.value = download_link(filename, text, mime)
        return self.status.value
