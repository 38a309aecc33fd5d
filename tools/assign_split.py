"""Name each validation case's source and split the cases by source.

    python tools/assign_split.py                 # recompute `source` and `split` of measured.csv
    python tools/assign_split.py --add NEW.csv   # append cases (same columns), then recompute
    python tools/assign_split.py --check         # exit 1 if the file is not as this rule gives

The fit / holdout split is by **source**, so the holdout figure of ``accelkit validate``
measures how the engine does on publications it was never fitted or calibrated on.
A source is one publication, whatever copy of it a case cites: the same document at
another commit, in a fork, or in another locale of a vendor page is the same source
(:func:`source_key`). A source is held out when the md5 of its key falls in the last
``HOLDOUT_SHARE`` of the hash range -- a rule no one picks, stable as cases come and go.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

MEASURED = Path(__file__).resolve().parents[1] / "data" / "validation" / "measured.csv"

#: share of sources (by hash, not by case count) held out
HOLDOUT_SHARE = 0.4

_GITHUB = re.compile(r"^/(?P<owner>[^/]+)/(?P<repo>[^/]+)/(?:blob|tree|raw)/[^/]+/(?P<path>.+)$")
_LOCALE = re.compile(r"^/[a-z]{2}(?:-[a-z]{2})?/")


def source_key(url):
    """The publication a URL points into.

    * GitHub files: the repository name (not its owner: a fork copies the document) and the
      path, without the commit -- ``TensorRT-LLM/docs/source/performance/perf-overview.md``.
    * MLPerf results (``mlcommons/inference_results_vX``, or a mirror named
      ``mlperf_inference_results_vX``): one round's submission of one submitter in one
      division -- ``inference_results_v3.1/closed/NVIDIA`` -- not each log file.
    * A folder of one benchmark's result files (``.../sample-results/run_bs8.json``, one file per
      configuration): the repository and the path up to that folder -- the first folder whose name
      holds "results" -- not each file.
    * Vendor pages in several locales: the path without the locale (``/en/``, ``/zh-cn/``).
    * NVIDIA NIM's benchmarking pages (``.../performance.md`` and its ``llms.txt`` copy):
      one source.
    * Anything else: host and path, without query or fragment.
    """
    u = urlparse(str(url).strip())
    host = u.netloc.lower().removeprefix("www.")
    path = u.path.rstrip("/")
    if host == "github.com":
        m = _GITHUB.match(path)
        # a mirror named mlperf_inference_results_vX copies the same round's results
        repo = m["repo"].lower().removeprefix("mlperf_") if m else ""
        if m and repo.startswith(("inference_results_", "training_results_")):
            return "/".join([repo, *m["path"].split("/")[:2]])
        if m:
            folders = m["path"].split("/")[:-1]
            hit = next((i for i, f in enumerate(folders) if "results" in f.lower()), None)
            path = "/".join(folders[:hit + 1]) if hit is not None else m["path"]
            return f"{m['repo'].lower()}/{path}"
        parts = path.strip("/").split("/")
        return "/".join([parts[1].lower(), *parts[2:]]) if len(parts) >= 2 else host + path
    if host == "docs.nvidia.com" and path.startswith("/nim/benchmarking/"):
        return "docs.nvidia.com/nim/benchmarking"
    return host + _LOCALE.sub("/", path + "/").rstrip("/")


def split_of(source):
    """``holdout`` when the md5 of the source key lies in the last ``HOLDOUT_SHARE`` of its range."""
    h = int(hashlib.md5(source.encode("utf-8")).hexdigest(), 16) / float(1 << 128)
    return "holdout" if h >= 1.0 - HOLDOUT_SHARE else "fit"


def assign(frame):
    """``frame`` with ``source`` (after ``split``) and ``split`` recomputed."""
    out = frame.copy()
    out["source"] = out["source_url"].map(source_key)
    out["split"] = out["source"].map(split_of)
    cols = [c for c in out.columns if c != "source"]
    cols.insert(cols.index("split") + 1, "source")
    return out[cols]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--add", nargs="*", default=[], help="CSV files of new cases (measured.csv's columns)")
    ap.add_argument("--check", action="store_true", help="only check; exit 1 if a row would change")
    args = ap.parse_args(argv)
    frame = pd.read_csv(MEASURED, dtype=str, keep_default_na=False)
    for extra in args.add:
        new = pd.read_csv(extra, dtype=str, keep_default_na=False)
        missing = sorted(set(frame.columns) - {"source", "stack"} - set(new.columns))
        if missing:
            sys.exit(f"{extra}: missing columns {', '.join(missing)}")
        clash = sorted(set(new["case_id"]) & set(frame["case_id"]))
        if clash:
            sys.exit(f"{extra}: case_id already in measured.csv: {', '.join(clash[:5])}")
        frame = pd.concat([frame, new.reindex(columns=frame.columns, fill_value="")], ignore_index=True)
    out = assign(frame)
    if args.check:
        same = "source" in frame.columns and out.equals(frame[out.columns])
        print("measured.csv: split by source as the rule gives" if same else
              "measured.csv: source / split differ from tools/assign_split.py's rule")
        return 0 if same else 1
    out.to_csv(MEASURED, index=False, lineterminator="\n")
    counts = out.groupby("split").agg(cases=("case_id", "size"), sources=("source", "nunique"))
    print(counts.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
