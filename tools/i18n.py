"""Maintainer tool for the translations (gettext catalogues in ``accelkit/locale``).

    python tools/i18n.py extract                  # every marked string: PATH:LINE  msgid
    python tools/i18n.py missing [--lang zh_CN]   # marked strings no catalogue translates (exit 1 if any)
    python tools/i18n.py add FILE.po [--lang zh_CN] [--only PATH-PREFIX ...]
                                                  # append the missing ones (empty msgstr) to one catalogue
                                                  # file, for a translator to fill in

Marked strings are the arguments of ``_()``, ``N_()`` and ``ngettext()`` in ``accelkit/``
(Babel's Python extractor) and every Markdown cell of ``notebooks/*.ipynb`` (a chapter's
narrative, translated whole by :func:`accelkit.report` when a report is rendered in another
language).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}


def python_messages(root=ROOT / "accelkit"):
    """(path, line, msgid) of every marked string in the package's Python sources."""
    from babel.messages.extract import extract

    found = []
    for path in sorted(root.rglob("*.py")):
        if "locale" in path.parts:
            continue
        with open(path, "rb") as handle:
            for line, message, _comments, _context in extract("python", handle, keywords=KEYWORDS):
                for text in (message if isinstance(message, tuple) else (message,)):
                    if text:
                        found.append((str(path.relative_to(ROOT)), line, text))
    return found


def notebook_messages(root=ROOT / "notebooks"):
    """(path, cell number, source) of every Markdown cell of the notebooks."""
    import nbformat

    found = []
    for path in sorted(root.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for number, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown" and cell.source.strip():
                found.append((str(path.relative_to(ROOT)), number, cell.source))
    return found


def all_messages():
    return python_messages() + notebook_messages()


def missing(lang="zh_CN"):
    from accelkit.i18n import catalogue

    catalogue.cache_clear()
    merged = catalogue(lang)
    return [(p, n, m) for p, n, m in all_messages() if merged is None or not (merged.get(m) and merged.get(m).string)]


def add(po_file, lang="zh_CN", only=()):
    """Append the missing strings (optionally only those from paths starting with ``only``) to ``po_file``."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    path = Path(po_file)
    if path.exists():
        with open(path, "rb") as handle:
            cat = read_po(handle, locale=lang)
    else:
        cat = Catalog(locale=lang, domain="accelkit", project="accelkit")
    added = 0
    for where, line, message in missing(lang):
        if only and not where.startswith(tuple(only)):
            continue
        if cat.get(message) is None:
            cat.add(message, "", locations=[(where, line)])
            added += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        write_po(handle, cat, width=0, omit_header=False, sort_output=False)
    return added


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("extract")
    miss = sub.add_parser("missing")
    miss.add_argument("--lang", default="zh_CN")
    addp = sub.add_parser("add")
    addp.add_argument("po_file")
    addp.add_argument("--lang", default="zh_CN")
    addp.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args(argv)
    if args.command == "extract":
        for where, line, message in all_messages():
            print(f"{where}:{line}\t{message[:100]!r}")
        return 0
    if args.command == "missing":
        rows = missing(args.lang)
        for where, line, message in rows:
            print(f"{where}:{line}\t{message[:100]!r}")
        print(f"{len(rows)} string(s) without a {args.lang} translation", file=sys.stderr)
        return 1 if rows else 0
    print(f"added {add(args.po_file, args.lang, args.only)} string(s) to {args.po_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
