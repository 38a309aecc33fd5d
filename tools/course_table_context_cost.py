"""What one more token of context costs a decode step in the GenAI-Perf course table:
``python tools/course_table_context_cost.py``.

The course table (``dataset/nim.csv`` of the ``inference_gpu_cluster_sizing`` course, a held-out source of
``data/validation/measured.csv``) runs every setup with one client at prompts of 200, 2,000 and 7,000 tokens.
The time per output token grows linearly with the mean context (prompt + half the output); its slope, per
layer, is what the attention of one decode step pays per token of context. Printed per setup, three ways:

- microseconds per layer per 1,000 tokens of context, measured and projected (the engine prices the KV cache
  read at the device's bandwidth, split over the tensor-parallel group, as a kernel that splits each sequence
  over the whole GPU does: FlashDecoding, TensorRT-LLM's multi-block mode);
- the measured slope in cycles of the device's boost clock (``data/clocks_caches.csv``) per token per layer.

A slope that stays the same when tensor parallelism halves each device's heads and cache, and that an 8-bit
cache (half the bytes) does not shorten, is not the cache's bandwidth: it is the time of one thread block
walking one head's cache token by token, an attention kernel that does not split a sequence over the GPU.
NIM 1.8.0's tables (the ``llm-guesstimator`` CSVs, five clients) are printed beside it for contrast: a step there
attends five sequences, so compare its microseconds with the engine's, not its cycles with one client's.
Measured only: nothing here changes the engine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_table_requests import COURSE  # noqa: E402  (the sibling tool's one definition of the source)

NIM_180 = "llm-guesstimator/tested_benchmarks/"
SETUP = ["model", "device", "precision", "tensor_parallel"]


def _mean_context(cases):
    """Tokens of context a decode step attends to, on average over the output: prompt + output / 2."""
    return cases["input_tokens"] + cases["output_tokens"] / 2.0


def context_slopes(cases, value="value"):
    """Per setup: the least-squares slope of ``value`` (s per output token) on the mean context [s/token].

    Also ``n_layers`` (from the model preset), ``us_per_layer_per_1k`` (the slope per layer per 1,000
    tokens, microseconds), ``cycles_per_token_per_layer`` (the slope per layer times the device's GPU
    clock, :func:`accelkit.projection.clocks_caches.gpu_clocks`) and ``linearity`` (Pearson's r of the points).
    """
    from accelkit.projection.clocks_caches import gpu_clocks
    from accelkit.projection.shapes import resolve_model

    rows = []
    for setup, points in cases.groupby(SETUP, sort=True):
        x, y = _mean_context(points).to_numpy(float), points[value].to_numpy(float)
        slope = np.polyfit(x, y, 1)[0]
        layers = resolve_model(setup[0]).n_layers
        rows.append(dict(zip(SETUP, setup), points=len(points), n_layers=layers, slope_s_per_token=slope,
                         us_per_layer_per_1k=slope / layers * 1e9,
                         cycles_per_token_per_layer=slope / layers * gpu_clocks([setup[1]])[0][0],
                         linearity=np.corrcoef(x, y)[0, 1]))
    return pd.DataFrame(rows)


def course_table_one_client(frame):
    """The course table's one-client decode cases (one ``decode_batch1`` case per setup and prompt length)."""
    return frame[frame["source_url"].str.contains(COURSE, regex=False) & (frame["category"] == "decode_batch1")]


def nim_180_five_clients(frame):
    """NIM 1.8.0's TPOT at five clients over every prompt length it ran (the lowest load in its tables)."""
    return frame[frame["source"].fillna("").str.startswith(NIM_180) & (frame["category"] == "serving_load_tpot")
                 & (frame["concurrency"] == 5)]


def compared(cases):
    """:func:`context_slopes` of the measurements with the engine's slope (``predicted``) and their ratio."""
    measured = context_slopes(cases)
    engine = context_slopes(cases, value="predicted")
    measured["engine_us_per_layer_per_1k"] = engine["us_per_layer_per_1k"].to_numpy()
    measured["measured_over_engine"] = measured["slope_s_per_token"] / engine["slope_s_per_token"].to_numpy()
    return measured


def main():
    from accelkit.projection import validation

    frame = validation.validate()
    cols = SETUP + ["us_per_layer_per_1k", "engine_us_per_layer_per_1k", "measured_over_engine",
                    "cycles_per_token_per_layer", "linearity"]
    pd.set_option("display.width", 200)
    course = compared(course_table_one_client(frame))
    print("GenAI-Perf course table, one client, prompts of 200 / 2,000 / 7,000 tokens:")
    print(course[cols].round(3).to_string(index=False))
    print(f"{course['cycles_per_token_per_layer'].min():.1f}-{course['cycles_per_token_per_layer'].max():.1f} "
          f"cycles per token per layer; {course['measured_over_engine'].min():.1f}-"
          f"{course['measured_over_engine'].max():.1f} times the engine's slope")
    nim = compared(nim_180_five_clients(frame))
    print("\nNIM 1.8.0 (llm-guesstimator CSVs), five clients, prompts of 200-20,000 tokens:")
    print(nim[cols].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
