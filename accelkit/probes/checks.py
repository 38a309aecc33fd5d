"""The engine against a person's own probe runs (``accelkit probe --llm`` / ``--train`` files).

Each run is projected again by the engine as it is now, so a change of constants or
formulas shows at once. Here, in the probes, because the probes call the engine and
never the reverse; chapter 10 shows both tables.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .llm import example_llm_results, load_llm_results

__all__ = ["local_checks", "local_training_checks"]


def local_checks(paths=None):
    """The engine against the serving measurements of ``accelkit probe --llm`` files.

    Each row of a file (default: the shipped H200 runs, ``data/probe_results/llm/``)
    is projected again by the engine as it is now -- static batch, the file's device,
    model, precision, batch and prompt -- so a change of constants or formulas shows
    here at once; the projection stored in the file is ignored. These are not
    published measurements and take no part in fitting.

    Returns
    -------
    pandas.DataFrame
        ``file, device, model, metric, batch_size, input_tokens, measured, projected,
        projected_low, projected_high`` [s], ``ratio`` (speed ratio, projected over
        measured speed: above 1 the projection is too optimistic) and
        ``inside_range``.
    """
    from ..projection.inference import inference

    rows = []
    for path in (example_llm_results() if paths is None else [Path(p) for p in paths]):
        frame = load_llm_results(path)
        for _, r in frame.iterrows():
            p = inference(r["catalogue_device"], r["model"], precision=r["precision"], batch_size=int(r["batch_size"]),
                          input_tokens=int(r["input_tokens"]), output_tokens=int(r["output_tokens"]),
                          schedule="static")
            metric = r["metric"]
            rows.append({"file": path.name, "device": r["catalogue_device"], "model": r["model"], "metric": metric,
                         "batch_size": int(r["batch_size"]), "input_tokens": int(r["input_tokens"]),
                         "measured": r["measured"], "projected": p[metric], "projected_low": p[f"{metric}_low"],
                         "projected_high": p[f"{metric}_high"]})
    out = pd.DataFrame(rows, columns=["file", "device", "model", "metric", "batch_size", "input_tokens", "measured",
                                      "projected", "projected_low", "projected_high"])
    out["ratio"] = out["measured"] / out["projected"]  # times: a short projected time is a fast projection
    out["inside_range"] = out["measured"].between(out["projected_low"], out["projected_high"])
    return out


def local_training_checks(paths=None):
    """The engine against the training steps of ``accelkit probe --train`` files.

    Each row (default: the shipped H200 runs, ``data/probe_results/train/``) is
    projected again by :func:`~accelkit.projection.training` as it is now: one device,
    the file's micro-batch, sequence and step, ZeRO 0, no recomputation. The probe is
    plain eager PyTorch while the engine's constants come from tuned frameworks, so
    a measured step longer than the range says what the unfused stack costs.

    Returns
    -------
    pandas.DataFrame
        ``file, device, model, micro_batch_size, seq_len, accumulation_steps,
        measured, projected, projected_low, projected_high`` [s, per optimizer step],
        ``ratio`` (measured over projected time), ``inside_range``, ``mfu`` (measured)
        and ``projected_mfu``.
    """
    from ..projection.training import training
    from .training_step import TRAIN_FORMAT

    rows = []
    for path in (example_llm_results("train") if paths is None else [Path(p) for p in paths]):
        for _, r in load_llm_results(path, TRAIN_FORMAT).iterrows():
            b, seq, acc = int(r["micro_batch_size"]), int(r["seq_len"]), int(r["accumulation_steps"])
            p = training(r["catalogue_device"], r["model"], tokens=1e9, precision=r["precision"], n_devices=1,
                         seq_len=seq, micro_batch_size=b, zero_stage=0, recompute="none",
                         global_batch_tokens=acc * b * seq, check_memory=False)
            rows.append({"file": path.name, "device": r["catalogue_device"], "model": r["model"],
                         "micro_batch_size": b, "seq_len": seq, "accumulation_steps": acc, "measured": r["step_s"],
                         "projected": p["step_s"], "projected_low": p["step_s_low"],
                         "projected_high": p["step_s_high"], "projected_mfu": p["mfu"]})
    out = pd.DataFrame(rows, columns=["file", "device", "model", "micro_batch_size", "seq_len", "accumulation_steps",
                                      "measured", "projected", "projected_low", "projected_high", "projected_mfu"])
    out["ratio"] = out["measured"] / out["projected"]
    out["inside_range"] = out["measured"].between(out["projected_low"], out["projected_high"])
    out["mfu"] = out["projected_mfu"] / out["ratio"]
    return out
