"""The references behind the numbers, and which chapter uses which.

A chapter's last cell prints :func:`chapter_references` (PyBaMM-style): the papers,
datasheets and documents behind what that chapter showed, plus the catalogue
sources of the devices on screen. The bibliography is data: ``data/references.csv``
(key, citation) and ``data/chapter_references.csv`` (chapter, its keys in order).
"""

from __future__ import annotations

__all__ = ["REFERENCES", "CHAPTERS", "chapter_references", "format_references"]

def _load():
    """The bibliography (``data/references.csv``: key, citation) and each chapter's ordered
    reference keys (``data/chapter_references.csv``); a chapter naming an unknown key is an error."""
    import csv

    from .paths import data_path

    with open(data_path("references.csv"), newline="", encoding="utf-8") as f:
        refs = {r["key"]: r["citation"] for r in csv.DictReader(f)}
    with open(data_path("chapter_references.csv"), newline="", encoding="utf-8") as f:
        chapters = {r["chapter"]: r["references"].split() for r in csv.DictReader(f)}
    unknown = sorted({k for keys in chapters.values() for k in keys} - set(refs))
    if unknown:
        raise ValueError(f"chapter_references.csv names references missing from references.csv: {', '.join(unknown)}")
    return refs, chapters


#: key -> citation; chapter -> its reference keys in order (both read from data/, references as data)
REFERENCES, CHAPTERS = _load()


def format_references(keys):
    """Numbered reference list for the given keys."""
    return "\n".join(f"[{i}] {REFERENCES[k]}" for i, k in enumerate(keys, 1))


def chapter_references(chapter, devices=None, catalog=None):
    """Text listing the references of a chapter and the sources of the devices shown.

    Parameters
    ----------
    chapter : str
        A key of :data:`CHAPTERS`.
    devices : sequence of str, optional
        Device names on screen; their ``source_url`` is listed.
    """
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    text = "References\n" + format_references(CHAPTERS[chapter])
    devices = [] if devices is None else list(devices)
    if devices:
        from .catalog import load_catalog

        catalog = load_catalog() if catalog is None else catalog
        rows = catalog[catalog["name"].isin(list(devices))]
        lines = [f"  {r['name']}: {r['source_url']}" for _, r in rows.iterrows()]
        text += "\n\nDevice figures from\n" + "\n".join(lines)
    return text
