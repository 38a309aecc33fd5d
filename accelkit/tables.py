"""One reader for every data table: a declarative schema per CSV, one error path.

Each file in ``data/`` (and a user's own files of the same shape) is described by a
:class:`Schema`: its columns, and for each column what it holds (text, a number, a
whole number, one of a vocabulary), its unit, its range, whether the column must
exist and whether every cell must be filled. :func:`read_table` reads the file as
text, checks every cell against the schema, types the columns, and reports *every*
problem at once in one form::

    <file>, line <CSV line> (<row label>), column <column>: expected <what>, got <cell>

The loaders (:mod:`accelkit.catalog`, :mod:`accelkit.models`, :mod:`accelkit.device_facts`,
:mod:`accelkit.ecosystem`, the projection tables) add only the checks that span rows
or columns (for example a sparse figure copied into a dense column) through
:func:`problem` and the same error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

__all__ = ["Column", "Schema", "TableError", "read_rows", "read_table", "check_rows", "problem", "line_of",
           "raise_problems"]

#: problems shown in one message (all of them stay in ``error.problems``)
SHOWN_PROBLEMS = 25


class TableError(ValueError):
    """A data file does not match its schema; ``problems`` lists every problem found."""

    def __init__(self, message, problems=None):
        self.problems = list(problems or [])
        super().__init__(message)


@dataclass(frozen=True)
class Column:
    """One column of a table.

    Parameters
    ----------
    name : str
        Header name.
    kind : {"text", "number", "integer"}
        What a cell holds; numbers may carry thousands separators (``1,979``).
    expected : str
        What a good cell is, in words, for the error message (default from kind,
        unit and range).
    unit : str
        Unit of a number, as ``docs/nomenclature.md`` names it.
    low, high : float, optional
        Range of a number; ``low`` is exclusive unless ``low_inclusive``.
    choices : tuple of str
        For text: the allowed values (compared case-insensitively, stored in lower case
        when ``lower``).
    required : bool
        The column must be in the header.
    nonempty : bool
        Every cell must be filled (``empty_message`` says why, in words).
    """

    name: str
    kind: str = "text"
    expected: str = ""
    unit: str = ""
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = False
    choices: tuple = ()
    lower: bool = False
    required: bool = False
    nonempty: bool = False
    empty_message: str = ""

    def words(self):
        """What a good cell is, for the error message."""
        if self.expected:
            return self.expected
        if self.choices:
            return "one of " + ", ".join(self.choices)
        what = {"number": "a number", "integer": "a whole number"}.get(self.kind, "a text")
        if self.unit:
            what += f" in {self.unit}"
        if self.low is not None:
            what += f" {'>=' if self.low_inclusive else '>'} {self.low:g}"
        if self.high is not None:
            what += f" <= {self.high:g}"
        return what


@dataclass(frozen=True)
class Schema:
    """The columns of one table and how its rows are named in messages.

    ``what`` names the table in a missing-column message ("a catalogue CSV needs at
    least ..."); ``label`` is the column whose value identifies a row in messages;
    ``unique`` a column whose values may appear only once (case-insensitive).
    """

    what: str
    columns: tuple = field(default_factory=tuple)
    label: str | None = None
    unique: str | None = None
    suffixes: tuple = (".csv", ".txt")
    hint: str = ""
    unique_message: str = "{column} {value!r} appears twice"

    def column(self, name):
        return next(c for c in self.columns if c.name == name)

    @property
    def required(self):
        return [c.name for c in self.columns if c.required]


def line_of(index):
    """CSV line number of a data row (line 1 is the header)."""
    return int(index) + 2


def problem(origin, index, column, message, label=None):
    """One problem in the one form: ``origin, line N (label), column C: message``."""
    where = f"{origin}, line {line_of(index)}" + (f" ({label})" if label is not None else "")
    return f"{where}, column {column}: {message}" if column else f"{where}: {message}"


def raise_problems(origin, problems, error=TableError):
    """Raise ``error`` listing every problem (the first :data:`SHOWN_PROBLEMS` in the message)."""
    if not problems:
        return
    shown = "\n  - ".join(problems[:SHOWN_PROBLEMS])
    more = f"\n  … and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    raise error(f"{origin}: {len(problems)} problem(s):\n  - {shown}{more}", problems)


def read_rows(path, origin, error=TableError, suffixes=(".csv", ".txt"), what="rows"):
    """A CSV file as a frame of stripped strings (nothing typed yet)."""
    path = Path(path)
    if not path.exists():
        raise error(f"{origin}: file not found: {path}")
    if path.suffix.lower() not in suffixes:
        raise error(f"{origin}: expected a .csv file of {what}, got {path.name}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise error(f"{origin}: {path} is not a readable CSV file ({exc})") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame.apply(lambda col: col.str.strip())


def _labels(frame, schema):
    if schema.label is None or schema.label not in frame.columns:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return frame[schema.label].where(frame[schema.label] != "", f"no {schema.label}")


def _did_you_mean(value, choices):
    from ._validate import suggest

    hint = suggest(str(value), list(choices)) if value else []
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def check_rows(raw, schema, origin, error=TableError):
    """Check and type a frame of strings against ``schema``.

    Returns ``(frame, problems)``: the typed frame (every schema column present;
    numbers as float, empty cells NaN) and the list of problems found, so a loader can
    add its own before :func:`raise_problems`. A missing required column raises at once.
    """
    missing = [c for c in schema.required if c not in raw.columns]
    if missing:
        raise error(f"{origin}: missing column(s) {', '.join(missing)}; {schema.what} needs at least "
                    f"{', '.join(schema.required)}{schema.hint}", [f"missing column {m}" for m in missing])
    frame = raw.copy()
    labels = _labels(frame, schema)
    problems = []
    for col in schema.columns:
        if col.name not in frame.columns:
            frame[col.name] = ""
        text = frame[col.name]
        empty = text == ""
        if col.nonempty and not col.choices:
            message = col.empty_message or f"expected {col.words()}, got an empty cell"
            problems += [problem(origin, i, col.name, message, labels[i]) for i in frame.index[empty]]
        if col.kind in ("number", "integer"):
            cleaned = text.str.replace(",", "", regex=False)
            values = pd.to_numeric(cleaned.where(~empty), errors="coerce")
            bad = ~empty & values.isna()
            problems += [problem(origin, i, col.name, f"expected {col.words()}, got {text[i]!r}", labels[i])
                         for i in frame.index[bad]]
            out = pd.Series(False, index=frame.index)
            if col.low is not None:
                out |= (values < col.low) if col.low_inclusive else (values <= col.low)
            if col.high is not None:
                out |= values > col.high
            if col.kind == "integer":
                out |= values.notna() & (values != values.round())
            problems += [problem(origin, i, col.name, f"expected {col.words()}, got {values[i]:g}", labels[i])
                         for i in frame.index[values.notna() & out]]
            frame[col.name] = values.astype(float)
        elif col.choices:
            folded = text.str.lower()
            allowed = {c.lower() for c in col.choices}
            bad = ~folded.isin(allowed) & (~empty | col.nonempty)
            problems += [problem(origin, i, col.name, f"expected {col.words()}, got {text[i]!r}"
                                 + _did_you_mean(text[i], col.choices), labels[i]) for i in frame.index[bad]]
            if col.lower:
                frame[col.name] = folded
    if schema.unique and schema.unique in frame.columns:
        key = frame[schema.unique]
        dupes = key.str.lower().duplicated(keep="first") & (key != "")
        problems += [problem(origin, i, None, schema.unique_message.format(column=schema.unique, value=key[i]))
                     for i in frame.index[dupes]]
    return frame, problems


def read_table(path, schema, origin=None, error=TableError):
    """Read, check and type one table; every problem raised at once as ``error``."""
    origin = origin or str(path)
    frame, problems = check_rows(read_rows(path, origin, error, schema.suffixes), schema, origin, error)
    raise_problems(origin, problems, error)
    return frame
