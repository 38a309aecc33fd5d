"""Maintainer tools for the notebooks: execute them in place (outputs stored for nbval).

    python tools/nbtools.py execute [NOTEBOOK ...]   # default: every notebook in notebooks/

Outputs are stored without widget state (a few KB per notebook instead of MB);
chart cells are tagged ``nbval-ignore-output`` so nbval compares only the
plain-text check cells.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path, timeout=120):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
    )
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                # never store the embedded plotly.js (~4 MB) in a committed notebook
                data.pop("text/html", None) if "application/vnd.plotly.v1+json" in data else None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return path


def main(argv):
    if not argv or argv[0] != "execute":
        print(__doc__)
        return 2
    paths = [Path(p) for p in argv[1:]] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name}", flush=True)
        execute(path.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
