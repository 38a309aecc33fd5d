"""The errors a person's input raises, below every other module (any module may raise them).

:class:`ScenarioError` names the scenario field; :class:`CatalogError` the file, line
and column of a table. Both are re-exported where they were first defined
(:mod:`accelkit.scenario`, :mod:`accelkit.catalog`).
"""

from __future__ import annotations

from .tables import TableError

__all__ = ["ScenarioError", "CatalogError", "short_repr", "MAX_MESSAGE"]

#: the longest error message (values in it are quoted as a short prefix)
MAX_MESSAGE = 400


def short_repr(value, n=40):
    """A value as an error message quotes it: a bounded ``repr`` (a short prefix of long text,
    the first items of long or nested lists), never the whole of a large value."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = n
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 4
    r.maxlevel = 2
    return r.repr(value)


class ScenarioError(ValueError):
    """A scenario field has a value accelkit cannot use; ``field`` names it."""

    def __init__(self, field_name, message):
        field_name = str(field_name)
        if len(field_name) > 40:
            field_name = field_name[:40] + "…"
        self.field = field_name
        text = f"scenario field '{field_name}': {message}"
        super().__init__(text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + " …")


class CatalogError(TableError):
    """A catalogue file, row or device name is not what accelkit expects.

    ``problems`` lists every problem found (file, line, column, expectation).
    """
