"""Write the checklist as Markdown or CSV, never over an existing file unless asked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .scores import stack_scores
from ..i18n import N_, _
from .vocabulary import LEVEL_WORDS, STACK_LABELS, STATUS_WORDS

__all__ = ["to_markdown", "export", "free_paths"]

_SYMBOL = {"pass": "✅", "risk": "⚠️", "fail": "❌"}


def _status(status):
    """A status as the Markdown shows it: its symbol and its word in the language now in use."""
    if status not in _SYMBOL:
        return status
    return f"{_SYMBOL[status]} {_(STATUS_WORDS[status])}"


def _md_cell(text):
    text = str(text if text == text and text is not None else "")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def to_markdown(checklist_frame, title=None, requirements=None):
    """The checklist as a Markdown document: a score table, then one section per stack.

    Parameters
    ----------
    checklist_frame : DataFrame
        :func:`checklist` output.
    title : str, optional
        Default "Software-ecosystem checklist" (in the language now in use).
    requirements : Requirements, optional
        Described under the title when given.
    """
    _check_checklist(checklist_frame)
    scores = stack_scores(checklist_frame=checklist_frame)
    title = _("Software-ecosystem checklist") if title is None else title
    lines = [f"# {title}", ""]
    if requirements is not None:
        lines += [_("Requirements: {requirements}").format(requirements=_md_cell(requirements.describe())), ""]
    head = " | ".join(_(h) for h in (N_("stack"), N_("score"), N_("fail"), N_("risk"), N_("pass"), N_("worst item")))
    lines += [_("Score 0-100: weighted mean of item points (pass 70-100 by support level, risk 40-60, fail 0; "
                "see accelkit.ecosystem.checklist)."), "",
              f"| {head} |", "|---|---:|---:|---:|---:|---|"]
    for stack, row in scores.iterrows():
        lines.append(f"| {_md_cell(row['label'])} | {row['score']:.1f} | {row['n_fail']} | {row['n_risk']} | "
                     f"{row['n_pass']} | {_md_cell(row['worst_item'])} |")
    for stack in scores.index:
        rows = checklist_frame[checklist_frame["stack"] == stack]
        lines += ["", f"## {_md_cell(STACK_LABELS.get(stack, stack))} ({stack}): {rows['score'].iloc[0]:.1f}", "",
                  "| " + " | ".join(_(h) for h in (N_("item"), N_("status"), N_("level"), N_("reason"), N_("source")))
                  + " |", "|---|---|---|---|---|"]
        for _i, r in rows.iterrows():
            source = f"<{r['source_url']}>" if r["source_url"] else ""
            level = _(LEVEL_WORDS[r["level"]]) if r["level"] in LEVEL_WORDS else r["level"]
            lines.append(f"| {_md_cell(r['item'])} | {_status(r['status'])} | "
                         f"{_md_cell(level) or '—'} | {_md_cell(r['reason'])} | {source} |")
    return "\n".join(lines) + "\n"


def _check_checklist(frame):
    need = {"stack", "item", "status", "reason", "source_url", "score", "weight", "level"}
    if not isinstance(frame, pd.DataFrame) or need - set(frame.columns):
        missing = sorted(need - set(getattr(frame, "columns", [])))
        raise ValueError(f"checklist_frame must be accelkit.ecosystem.checklist() output; missing column(s) "
                         f"{', '.join(missing)}")


def export(checklist_frame, path, overwrite=False, requirements=None):
    """Write the checklist to ``path``: ``.csv`` (the tidy frame) or ``.md`` (Markdown).

    An existing file is never replaced unless ``overwrite=True``: it raises
    ``FileExistsError`` naming the file. The write is exclusive (no race with
    another writer). Returns the path written.
    """
    _check_checklist(checklist_frame)
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        text = checklist_frame.to_csv(index=False)
    elif suffix in (".md", ".markdown"):
        text = to_markdown(checklist_frame, requirements=requirements)
    else:
        raise ValueError(f"path must end in .csv or .md; got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "w" if overwrite else "x", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except FileExistsError:
        raise FileExistsError(f"{path} already exists; choose another name or pass overwrite=True") from None
    return path


def free_paths(folder, stem, suffixes=(".md", ".csv")):
    """Paths ``folder/stem<suffix>`` none of which exists yet: ``stem``, ``stem-2``, ``stem-3`` …

    One number serves every suffix, so a Markdown and a CSV export stay paired.
    """
    folder = Path(folder)
    n = 1
    while True:
        name = stem if n == 1 else f"{stem}-{n}"
        paths = [folder / f"{name}{s}" for s in suffixes]
        if not any(p.exists() for p in paths):
            return paths
        n += 1
