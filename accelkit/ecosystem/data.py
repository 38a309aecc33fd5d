"""Load and validate ``data/ecosystem.csv``: one row per (software stack, criterion).

Checks, each naming the file, line and column: known stack / criterion / level
(with the closest match), a detail in words on every row, an http(s) source on
every row but ``unknown`` ones, no duplicate (stack, criterion), every criterion
present for every stack. The rows are checked by the one table reader
(:mod:`accelkit.tables`); a user's file is read, never written.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..catalog import SOFTWARE_STACKS, CatalogError, _read_rows, data_path
from ..tables import Column, Schema, check_rows, problem, raise_problems
from .vocabulary import CRITERIA, LEVELS

__all__ = ["ECOSYSTEM_COLUMNS", "load_ecosystem"]

ECOSYSTEM_COLUMNS = ["stack", "criterion", "level", "detail", "source_url", "retrieved"]


ECOSYSTEM_SCHEMA = Schema("an ecosystem CSV", (
    Column("stack", required=True, choices=tuple(SOFTWARE_STACKS), lower=True, nonempty=True),
    Column("criterion", required=True, choices=tuple(CRITERIA), lower=True, nonempty=True),
    Column("level", required=True, choices=tuple(LEVELS), lower=True, nonempty=True),
    Column("detail", required=True, nonempty=True,
           empty_message="every row needs a detail in words (for unknown: what was searched)"),
    Column("source_url", required=True),
    Column("retrieved"),
), hint=" (retrieved optional)")


def _validate(raw, origin):
    frame, problems = check_rows(raw, ECOSYSTEM_SCHEMA, origin, CatalogError)
    sourced = frame["level"] != "unknown"
    no_url = sourced & ~frame["source_url"].str.match(r"https?://\S+$")
    for idx in frame.index[no_url]:
        problems.append(problem(origin, idx, "source_url", f"a {frame.at[idx, 'level']!r} row needs an http(s) "
                                 f"source URL, got {frame.at[idx, 'source_url']!r}; use level 'unknown' if no "
                                 "source was found"))
    dupes = frame.duplicated(["stack", "criterion"], keep="first")
    for idx in frame.index[dupes]:
        problems.append(problem(origin, idx, "criterion", f"({frame.at[idx, 'stack']}, "
                                 f"{frame.at[idx, 'criterion']}) appears twice"))
    known = frame[frame["stack"].isin(SOFTWARE_STACKS) & frame["criterion"].isin(CRITERIA)]
    for stack, rows in known.groupby("stack", sort=False):
        for criterion in sorted(set(CRITERIA) - set(rows["criterion"]), key=CRITERIA.index):
            problems.append(f"{origin}: stack {stack!r} has no row for criterion {criterion!r}; add one (level "
                            "'unknown' if nothing was found)")
    raise_problems(origin, problems, CatalogError)
    return frame[ECOSYSTEM_COLUMNS].reset_index(drop=True)


@lru_cache(maxsize=1)
def _builtin_ecosystem():
    origin = "ecosystem table"
    return _validate(_read_rows(data_path("ecosystem.csv"), origin), origin)


def load_ecosystem(path=None):
    """The software-stack support table, validated, one row per (stack, criterion).

    Parameters
    ----------
    path : str or Path, optional
        A CSV with columns ``stack, criterion, level, detail, source_url[, retrieved]``
        (read, never written). Default: the built-in ``data/ecosystem.csv``.

    Returns
    -------
    pandas.DataFrame
        Columns ``stack, criterion, level, detail, source_url, retrieved`` (text).
        ``stack`` ids are catalogue stack ids (:data:`accelkit.catalog.SOFTWARE_STACKS`),
        criteria from :data:`CRITERIA`, levels from :data:`LEVELS`.

    Raises
    ------
    CatalogError
        Naming the file, line and column: an unknown stack/criterion/level (with
        the closest match), a sourced row (any level but ``unknown``) without an
        http(s) ``source_url``, an empty detail, a duplicate (stack, criterion),
        or a stack missing a criterion.
    """
    if path is None:
        return _builtin_ecosystem().copy()
    origin = f"ecosystem file {Path(path).name}"
    return _validate(_read_rows(path, origin), origin)

