"""The engine's track record: how it did on published measurements of a workload on a vendor's parts.

A projection's range says how far off the engine may be; it does not say whether the engine was ever
checked on anything like the device in front of the buyer. Every figure of the validation
(:func:`accelkit.projection.validation.validate`) is kept here per workload kind (``llm``, ``training`` for
LLMs, ``recommender_training``, ``vision``, ``encoder``, ``recommender``, ``gnn``), vendor and device: the
cases, their sources, the geometric-mean error (all cases and held-out sources only) and the share inside
the stated range. The decision names it beside each projected figure ("checked on 12 published
measurements of LLM serving on this device, 3 sources: 18 % off"), and says plainly where there is none
("never checked on an Intel part for encoders: the figure rests on constants fitted on other parts").

The table is computed from the validation and stored in ``data/validation/track_record.csv`` by
``python tools/record_validation.py`` (with the ratios it records); ``tests/test_validation.py``
fails when the stored table and the validation disagree, so it cannot go stale.

Error measure: ``exp(mean |ln(projected / measured speed)|) − 1`` (:func:`validation.geometric_mean_error`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from ..catalog import data_path
from ..i18n import N_, _, language
from ..names import vendor_name
from .validation import device_vendors, geometric_mean_error, interval_coverage

__all__ = ["CATEGORY_KIND", "KIND_WORDS", "record_kind", "track_record_table", "write_track_record", "load_track_record",
           "track_record_words", "scenario_track_record", "device_track_record", "TRACK_RECORD_COLUMNS"]

#: the workload kind (:func:`accelkit.projection.for_scenario.workload_kind`) each validation category checks
CATEGORY_KIND = {
    "decode_batch1": "llm", "fixed_batch_throughput": "llm", "max_throughput": "llm", "ttft": "llm",
    "serving_load_ttft": "llm", "serving_load_tpot": "llm", "serving_expert_parallel": "llm",
    "training": "training", "recommender_training": "recommender_training",
    "vision_single_stream": "vision", "vision_offline": "vision",
    "encoder_single_stream": "encoder", "encoder_offline": "encoder",
    "recommender_offline": "recommender", "gnn_offline": "gnn",
}

#: each kind in words
KIND_WORDS = {"llm": N_("LLM serving"), "training": N_("LLM training"),
              "recommender_training": N_("recommender training"), "vision_training": N_("image-model training"),
              "vision": N_("image-model inference"), "encoder": N_("encoder inference"),
              "recommender": N_("recommender inference"), "gnn": N_("graph-network inference")}

TRACK_RECORD_COLUMNS = ["kind", "vendor", "device", "cases", "sources", "gm_error", "gm_error_holdout",
                        "holdout_cases", "coverage"]


def _row(kind, vendor, device, g):
    held = g[g["split"] == "holdout"]
    return {"kind": kind, "vendor": vendor, "device": device, "cases": len(g), "sources": g["source"].nunique(),
            "gm_error": geometric_mean_error(g["ratio"]), "gm_error_holdout": geometric_mean_error(held["ratio"]),
            "holdout_cases": len(held), "coverage": interval_coverage(g.get("in_range", pd.Series(dtype=float)))}


def track_record_table(results, catalog=None):
    """Per workload kind and vendor (``device`` empty) and per kind, vendor and device: ``cases``,
    ``sources``, ``gm_error`` [fraction], ``gm_error_holdout`` [fraction, NaN without held-out cases],
    ``holdout_cases`` and ``coverage`` [fraction inside the stated range], from ``results``
    (:func:`accelkit.projection.validation.validate`). Cases the engine could not project are left out."""
    r = results[np.isfinite(results["ratio"]) & (results["ratio"] > 0)]
    r = r.assign(kind=r["category"].map(CATEGORY_KIND).fillna("other"), vendor=device_vendors(r, catalog))
    rows = [_row(k, v, "", g) for (k, v), g in r.groupby(["kind", "vendor"], sort=True)]
    rows += [_row(k, v, d, g) for (k, v, d), g in r.groupby(["kind", "vendor", "device"], sort=True)]
    return pd.DataFrame(rows, columns=TRACK_RECORD_COLUMNS).sort_values(["kind", "vendor", "device"],
                                                                        ignore_index=True)


def write_track_record(results, path=None, catalog=None):
    """Store :func:`track_record_table` (errors to 4 significant figures) and return the path."""
    path = data_path("validation/track_record.csv") if path is None else path
    track_record_table(results, catalog).to_csv(path, index=False, float_format="%.4g", lineterminator="\n")
    return path


@lru_cache(maxsize=2)
def _stored(path):
    table = pd.read_csv(path, keep_default_na=False, na_values=[""],
                        dtype={"kind": str, "vendor": str, "device": str})
    table["device"] = table["device"].fillna("")
    return {(k, v, d): row for (k, v, d), row in zip(zip(table["kind"], table["vendor"], table["device"]),
                                                      table.to_dict("records"))}


def load_track_record(path=None):
    """``(kind, vendor, device) -> row`` of the stored table (``device`` "" for the vendor's parts together)."""
    return _stored(str(data_path("validation/track_record.csv") if path is None else path))


def _vendor_words(vendor):
    """The vendor as the reader knows it (``names.vendor_name``); in Chinese a Latin name is set apart by
    spaces and a Chinese one runs on with the text (在 AMD 器件上, 在华为（Huawei）器件上)."""
    name = vendor_name(vendor)
    return f" {name} " if language().startswith("zh") and name.isascii() else name


def _pct(x):
    return f"{x:.0%}"


def _measurements(n):
    return (_("{count} published measurement") if n == 1 else _("{count} published measurements")).format(count=n)


def _sources(n):
    return (_("{count} source") if n == 1 else _("{count} sources")).format(count=n)


def _record_words(row, on_device):
    text = (_("checked on {measurements} of {kind} on this device ({sources}): {error} off") if on_device else
            _("not checked on this device; on {measurements} of {kind} on {vendor} parts ({sources}): {error} off"))
    text = text.format(measurements=_measurements(int(row["cases"])), kind=_(KIND_WORDS.get(row["kind"], row["kind"])),
                       vendor=_vendor_words(row["vendor"]), sources=_sources(int(row["sources"])), error=_pct(row["gm_error"]))
    if row["holdout_cases"] and row["gm_error_holdout"] == row["gm_error_holdout"]:
        text += _(" ({error} on the {cases} from sources never fitted)").format(
            error=_pct(row["gm_error_holdout"]), cases=int(row["holdout_cases"]))
    if row["coverage"] == row["coverage"]:
        text += _(", {share} inside the stated range").format(share=_pct(row["coverage"]))
    return text


def track_record_words(kind, vendors, names, path=None):
    """Per device of ``names`` (vendors ``vendors``): how the engine did on published measurements of
    workload ``kind`` on that device, else on its vendor's parts, else that it was never checked there."""
    table = load_track_record(path)
    out = []
    for vendor, name in zip(vendors, names):
        device, parts = table.get((kind, vendor, name)), table.get((kind, vendor, ""))
        if device is not None:
            out.append(_record_words(device, True))
        elif parts is not None:
            out.append(_record_words(parts, False))
        else:
            out.append(_("never checked on published measurements of {kind} on {vendor} parts: the figure rests on "
                         "constants fitted on other parts").format(kind=_(KIND_WORDS.get(kind, kind)),
                                                                  vendor=_vendor_words(vendor)))
    return np.array(out, dtype=object)


def record_kind(scenario):
    """The kind of the track record that speaks for ``scenario``: its workload kind
    (:func:`accelkit.projection.for_scenario.workload_kind`), with training split by what is trained --
    ``recommender_training`` (DLRM: embedding traffic and all-to-all), ``vision_training`` and ``training``
    (LLMs) are different physics, and a DLRM buyer should not read the LLM runs' record."""
    from .for_scenario import is_recommender_model, is_vision_model, workload_kind

    kind = workload_kind(scenario)
    if kind == "training" and is_recommender_model(scenario):
        return "recommender_training"
    if kind == "training" and is_vision_model(scenario):
        return "vision_training"
    return kind


def scenario_track_record(scenario, vendors, names, path=None):
    """:func:`track_record_words` for the scenario's record kind (:func:`record_kind`)."""
    return track_record_words(record_kind(scenario), vendors, names, path)


def device_track_record(kind, name, catalog=None, path=None):
    """:func:`track_record_words` for one catalogue device (its vendor looked up): the line ``accelkit project``
    prints under a figure."""
    from ..catalog import load_catalog

    vendor = (load_catalog() if catalog is None else catalog).set_index("name")["vendor"].get(name, "?")
    return str(track_record_words(kind, [vendor], [name], path)[0])
