"""Where accelkit's shipped files are: the built-in tables and the chapter notebooks.

One home for both, imported by the catalogue, the CLI, the report and the app server.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .errors import CatalogError

__all__ = ["data_path", "notebooks_dir"]

_HERE = Path(__file__).resolve().parent


def data_path(filename=""):
    """Folder (or file inside it) holding the built-in tables.

    Installed wheels carry the tables in ``accelkit/data``; a source checkout keeps
    them in the repository's ``data/`` folder.
    """
    folder = _data_folder()
    return folder / filename if filename else folder


@lru_cache(maxsize=1)
def _data_folder():
    # looked up once: a ranking asks for a table's path some hundred times, each a file-system check
    for folder in (_HERE / "data", _HERE.parent / "data"):
        if (folder / "accelerators.csv").exists():
            return folder
    raise CatalogError(
        "the built-in catalogue (accelerators.csv) was not found next to the accelkit "
        f"package ({_HERE / 'data'}) or in the repository ({_HERE.parent / 'data'}); "
        "reinstall accelkit"
    )


def notebooks_dir():
    """Folder holding the chapter notebooks (repository checkout or installed wheel)."""
    for folder in (_HERE.parent / "notebooks", _HERE / "notebooks"):
        if (folder / "app.ipynb").exists():
            return folder
    raise SystemExit("accelkit: the notebooks folder was not found; reinstall accelkit")
