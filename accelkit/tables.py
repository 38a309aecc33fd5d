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

from . import units

__all__ = ["Column", "Schema", "TableError", "read_rows", "read_table", "check_rows", "problem", "line_of",
           "raise_problems"]

#: problems shown in one message (all of them stay in ``error.problems``)
SHOWN_PROBLEMS = 25
#: the largest table file read (the shipped ones are well under 1 MiB)
MAX_TABLE_BYTES = 64 * units.MIB
#: the longest problem line (values in it are cut to a short prefix)
MAX_PROBLEM_CHARS = 400


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
    if label is not None and len(str(label)) > 40:
        label = str(label)[:40] + "…"
    where = f"{origin}, line {line_of(index)}" + (f" ({label})" if label is not None else "")
    line = f"{where}, column {column}: {message}" if column else f"{where}: {message}"
    # a problem quotes at most a short prefix of a bad value, whatever the caller passed
    return line if len(line) <= MAX_PROBLEM_CHARS else line[:MAX_PROBLEM_CHARS] + " …"


def raise_problems(origin, problems, error=TableError):
    """Raise ``error`` listing every problem (the first :data:`SHOWN_PROBLEMS` in the message)."""
    if not problems:
        return
    if len(problems) == 1:  # one line: the problem names the file, line and column itself
        raise error(problems[0], problems)
    shown = "\n  - ".join(problems[:SHOWN_PROBLEMS])
    more = f"\n  … and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    raise error(f"{origin}: {len(problems)} problem(s):\n  - {shown}{more}", problems)


def read_rows(path, origin, error=TableError, suffixes=(".csv", ".txt"), what="rows"):
    """A CSV file as a frame of stripped strings (nothing typed yet).

    The file must be a regular file of at most :data:`MAX_TABLE_BYTES`, UTF-8 text,
    with a header line; a row with more cells than the header is an error (a stray
    comma would shift every later column), a shorter row is padded with empty cells.
    """
    path = Path(path)
    if not path.exists():
        raise error(f"{origin}: file not found: {path}")
    if path.suffix.lower() not in suffixes:
        raise error(f"{origin}: expected a .csv file of {what}, got {path.name}")
    return rows_from_text(_read_text(path, origin, error), origin, error)


def _read_text(path, origin, error):
    try:
        if not path.is_file():
            raise error(f"{origin}: {path} is not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(MAX_TABLE_BYTES + 1)
    except OSError as exc:
        raise error(f"{origin}: cannot read {path} ({exc.strerror or exc})") from None
    if len(data) > MAX_TABLE_BYTES:
        raise error(f"{origin}: {path} is larger than {MAX_TABLE_BYTES // units.MIB} MiB; is it the right file?")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{origin}: {path} is not a readable CSV file: not UTF-8 text (byte {exc.start}); "
                    "save it as UTF-8 CSV") from None


def rows_from_text(text, origin, error=TableError):
    """CSV text (a header line, then rows) -> frame of stripped strings; see :func:`read_rows`."""
    import csv
    import io

    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=True)
                if r and not (len(r) == 1 and not r[0].strip())]  # blank lines are skipped
    except csv.Error as exc:
        raise error(f"{origin}: not a readable CSV file ({_short(str(exc), 80)})") from None
    if not rows:
        raise error(f"{origin}: the file is empty; expected a header line naming the columns, then one row per line")
    header = [c.strip() for c in rows[0]]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise error(f"{origin}: column {_short(dupes[0])} appears twice in the header")
    problems = []
    for i, row in enumerate(rows[1:]):
        if len(row) > len(header):
            problems.append(problem(origin, i, None, f"{len(row)} cells, but the header has {len(header)} columns "
                                    f"(a stray comma, or a value with a comma that needs quotes?)"))
        elif len(row) < len(header):
            row.extend([""] * (len(header) - len(row)))
    raise_problems(origin, problems, error)
    frame = pd.DataFrame([[c.strip() for c in r] for r in rows[1:]], columns=header, dtype=str)
    if frame.empty:
        frame = pd.DataFrame({c: pd.Series([], dtype=str) for c in header})
    return frame


def _short(text, n=40):
    """A value quoted in an error message: at most ``n`` characters of it."""
    text = str(text)
    return repr(text[:n]) + (f" … ({len(text)} characters)" if len(text) > n else "")


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
            problems += [problem(origin, i, col.name, f"expected {col.words()}, got {_short(text[i])}", labels[i])
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
            problems += [problem(origin, i, col.name, f"expected {col.words()}, got {_short(text[i])}"
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
