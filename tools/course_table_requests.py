"""The least request count of each load run of the GenAI-Perf course table: ``python tools/course_table_requests.py``.

The course table (``dataset/nim.csv`` of the ``inference_gpu_cluster_sizing`` course, a held-out source of
``data/validation/measured.csv``) states no request count. Its mean output length, quoted on every case,
bounds it from below where it is not whole (:func:`accelkit.projection.load_tests.requests_counted_at_least`).
Prints one line per load run (its TTFT case) with that bound, per client, and the engine's ratio.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accelkit.projection.load_tests import requests_counted_at_least  # noqa: E402

COURSE = "ch10_inference/inference_gpu_cluster_sizing"


def output_mean(quote):
    """The mean output length quoted from a course-table row: the figure after its first ``tokens`` unit."""
    fields = quote.split(",")
    return float(fields[fields.index("tokens") + 1])


def course_table_bounds(frame):
    """Per load run of the course table (its ``serving_load_ttft`` case): the least requests it counted."""
    runs = frame[frame["source_url"].str.contains(COURSE, regex=False)
                 & (frame["category"] == "serving_load_ttft")].copy()
    runs["output_mean"] = runs["quote"].map(output_mean)
    runs["requests_at_least"] = [requests_counted_at_least(m, o) for m, o in
                                 zip(runs["output_mean"], runs["output_tokens"])]
    # a whole mean bounds nothing: no per-client figure rather than a fraction of a request
    runs["per_client_at_least"] = (runs["requests_at_least"] / runs["concurrency"]).where(
        runs["requests_at_least"] > 1)
    return runs


def main():
    from accelkit.projection import validation

    frame = validation.validate()
    runs = course_table_bounds(frame)
    cols = ["case_id", "concurrency", "input_tokens", "output_mean", "requests_at_least", "per_client_at_least",
            "ratio"]
    print(runs[cols].to_string(index=False))
    shown = runs[runs["requests_at_least"] > 1]
    print(f"{len(shown)} of {len(runs)} load runs bound their request count: "
          f"{shown['per_client_at_least'].min():.3g}-{shown['per_client_at_least'].max():.3g} per client")


if __name__ == "__main__":
    main()
