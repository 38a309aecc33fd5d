"""The validation's recorded ratios: what the engine projected for each published case, pinned.

:func:`~accelkit.projection.validation.validate` compares the engine with published
measurements; a factor-of-two bound on each case (the acceptance of the projection
issue) still passes when a fitted constant is 30 % off. This module pins the engine
instead: each case's ratio (projected speed / measured speed) as it was recorded,
each category's geometric-mean error and geometric-mean ratio (its bias), and the
README's table of errors. The tests (``tests/test_validation.py``) and the mutation
check (``python -m benchmarks mutations``) call the same :func:`failures`.

The record is regenerated **deliberately**, when the engine is changed on purpose::

    python tools/record_validation.py          # writes tests/data/validation_ratios.csv and validation_summary.csv

and the commit says why the ratios moved; a change elsewhere that moves a case is a
regression to explain, not a record to rewrite.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .validation import geometric_mean_error, summary

__all__ = ["CASE_TOLERANCE", "POINT", "record", "write_record", "load_record", "case_failures",
           "summary_failures", "readme_failures", "failures"]

#: how far (relative) a case's ratio may move from its recorded ratio
CASE_TOLERANCE = 0.10
#: how far (absolute, 0.005 = half a percentage point) a category's geometric-mean error or ratio may move: at one
#: point a 30 % change to three small fitted overheads (the fixed prefill and decode-step costs, the training step's)
#: passed every check (``python -m benchmarks mutations``); at half a point every change fails one
POINT = 0.005

_README_ROWS = {"all": "all", "fit split": "fit", "holdout split": "holdout"}


def _gm_ratio(ratios):
    r = np.asarray(ratios, dtype=float)
    r = r[np.isfinite(r) & (r > 0)]
    return float(np.exp(np.mean(np.log(r)))) if r.size else np.nan


def record(results):
    """``(ratios, categories)``: each case's ratio, and per category (and ``all``) the
    number of cases, the geometric-mean error and the geometric-mean ratio."""
    ratios = results[["case_id", "category", "ratio"]].copy()
    groups = [("all", results)] + [(c, g) for c, g in results.groupby("category", sort=True)]
    cats = pd.DataFrame([{"category": c, "cases": len(g), "gm_error": geometric_mean_error(g["ratio"]),
                          "gm_ratio": _gm_ratio(g["ratio"])} for c, g in groups])
    return ratios, cats


def write_record(results, ratios_path, summary_path):
    """Write :func:`record` to the two CSV files (ratios to 6 significant figures)."""
    ratios, cats = record(results)
    ratios.to_csv(ratios_path, index=False, float_format="%.6g", lineterminator="\n")
    cats.to_csv(summary_path, index=False, float_format="%.6g", lineterminator="\n")
    return Path(ratios_path), Path(summary_path)


def load_record(ratios_path, summary_path):
    """The recorded ``(ratios, categories)`` frames."""
    return pd.read_csv(ratios_path), pd.read_csv(summary_path)


def case_failures(results, recorded, tolerance=CASE_TOLERANCE):
    """``case_id -> message`` for every case whose ratio moved more than ``tolerance``
    (relative) from its recorded ratio, every case without a record and every recorded
    case that is gone."""
    rec = recorded.set_index("case_id")["ratio"]
    out = {}
    for _, row in results.iterrows():
        cid, new = row["case_id"], float(row["ratio"])
        where = f"case {cid} ({row['device']}, {row['model']}, {row['metric']})"
        if cid not in rec.index:
            out[cid] = (f"{where} has no recorded ratio (new ratio {new:.4g}); record it with "
                        "python tools/record_validation.py")
            continue
        old = float(rec[cid])
        if not np.isfinite(new) or abs(new / old - 1.0) > tolerance:
            out[cid] = (f"{where}: the recorded ratio of projected to measured speed is {old:.4g}, the engine now "
                        f"gives {new:.4g} ({new / old - 1.0:+.1%}; at most {tolerance:.0%} allowed). If the engine "
                        "changed on purpose, re-record with python tools/record_validation.py and say why")
    for cid in rec.index.difference(results["case_id"]):
        out[cid] = f"case {cid} is recorded (ratio {float(rec[cid]):.4g}) but no longer in measured.csv; re-record"
    return out


def summary_failures(results, recorded_summary, points=POINT):
    """``category -> message`` where a category's geometric-mean error or geometric-mean
    ratio moved more than ``points`` from the record, or its number of cases changed."""
    _, now = record(results)
    now = now.set_index("category")
    out = {}
    for _, old in recorded_summary.iterrows():
        cat = old["category"]
        if cat not in now.index:
            out[cat] = f"category {cat} is recorded ({int(old['cases'])} cases) but has no case now"
            continue
        new = now.loc[cat]
        problems = []
        if int(new["cases"]) != int(old["cases"]):
            problems.append(f"{int(old['cases'])} cases recorded, {int(new['cases'])} now")
        for col, words in (("gm_error", "geometric-mean error"), ("gm_ratio", "geometric-mean ratio")):
            if not abs(new[col] - old[col]) <= points:
                problems.append(f"{words} recorded {old[col]:.2%}, now {new[col]:.2%} (at most {points:.1%} "
                                "apart)" if col == "gm_error" else
                                f"{words} recorded {old[col]:.4f}, now {new[col]:.4f} (at most {points:g} apart)")
        if problems:
            out[cat] = f"category {cat}: " + "; ".join(problems)
    return out


def readme_errors(text):
    """The README's table of geometric-mean errors: ``{'all'|'fit'|'holdout': (cases, error)}``."""
    out = {}
    for label, key in _README_ROWS.items():
        # | label | cases | [sources |] error % |
        m = re.search(rf"^\|\s*{label}\s*\|\s*([\d,]+)\s*\|(?:\s*[\d,]+\s*\|)?\s*([\d.]+)\s*%", text, re.MULTILINE)
        if m:
            out[key] = (int(m.group(1).replace(",", "")), float(m.group(2)) / 100.0)
    return out


def readme_failures(results, readme_text, points=POINT):
    """Messages where the README's errors (all, fit split, holdout split) and the engine's
    now are more than ``points`` apart, or the README's case counts are wrong."""
    shown = readme_errors(readme_text)
    now = summary(results).set_index("category").loc["all"]
    counts = {"all": len(results), "fit": int((results["split"] == "fit").sum()),
              "holdout": int((results["split"] == "holdout").sum())}
    errors = {"all": now["gm_error"], "fit": now["gm_error_fit"], "holdout": now["gm_error_holdout"]}
    out = []
    for key in ("all", "fit", "holdout"):
        if key not in shown:
            out.append(f"README's validation table has no row for {key!r}")
            continue
        cases, error = shown[key]
        if cases != counts[key]:
            out.append(f"README says {cases} cases for {key}, measured.csv has {counts[key]}")
        if not abs(errors[key] - error) <= points:
            out.append(f"README says the geometric-mean error on {key} is {error:.1%}, the engine now gives "
                       f"{errors[key]:.1%} (at most {points:.1%} apart): update the README table")
    return out


def failures(results, ratios_path, summary_path, readme_path=None):
    """Every failing check, as messages: cases, categories, and the README's table."""
    ratios, cats = load_record(ratios_path, summary_path)
    out = list(case_failures(results, ratios).values()) + list(summary_failures(results, cats).values())
    if readme_path is not None:
        out += readme_failures(results, Path(readme_path).read_text(encoding="utf-8"))
    return out
