"""The checklist summarised: one row per stack (:func:`stack_scores`), per device (:func:`device_scores`).

The decision engine (:mod:`accelkit.select`) filters and ranks on
:func:`device_scores`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..i18n import _
from .checklist import checklist
from .vocabulary import STATUSES

__all__ = ["stack_scores", "device_scores"]

#: a device listing both stacks is scored on the second: JetPack bundles CUDA, cuDNN
#: and TensorRT (jetpack/driver_toolkit row), and stock CUDA wheels do not apply there
_COMPONENT_OF = {"cuda": "jetpack"}


def _stack_devices(catalog):
    """Catalogue rows exploded to one row per (device, stack)."""
    stacks = catalog["software_stack"].fillna("").str.lower().str.split("|")
    frame = catalog.assign(stack=stacks).explode("stack")
    frame["stack"] = frame["stack"].str.strip()
    return frame[frame["stack"] != ""]



def stack_scores(requirements=None, stacks=None, *, ecosystem=None, catalog=None, checklist_frame=None):
    """One row per stack: score, counts of pass/risk/fail, worst item and its reason.

    Parameters as :func:`checklist`; ``checklist_frame`` reuses a computed checklist.

    Returns
    -------
    pandas.DataFrame
        Indexed by stack id: ``label, score`` (0-100), ``n_pass, n_risk, n_fail,
        worst_status, worst_item, worst_reason``; best first (score, then fewer
        fails, then fewer risks, then table order). The worst item is the one with
        the worst status that costs the most score (weight × (100 - points)).
    """
    frame = checklist(requirements, stacks, ecosystem=ecosystem, catalog=catalog) if checklist_frame is None \
        else checklist_frame
    order = {s: i for i, s in enumerate(dict.fromkeys(frame["stack"]))}
    rank = frame["status"].map({"fail": 0, "risk": 1, "pass": 2}).to_numpy()
    position = frame["stack"].map(order).to_numpy()
    # worst item first within each stack: status rank, then the score it costs (weight × lost points)
    lost = (frame["weight"] * (100.0 - frame["points"])).to_numpy()
    sorted_rows = np.lexsort((-lost, rank, position))
    worst = frame.iloc[sorted_rows].drop_duplicates("stack").set_index("stack")
    bad = worst["status"] != "pass"
    out = pd.DataFrame({
        "label": worst["label"],
        "score": worst["score"],
        "n_pass": 0, "n_risk": 0, "n_fail": 0,
        "worst_status": worst["status"],
        "worst_item": worst["item"].where(bad, ""),
        "worst_reason": (worst["item"] + ": " + worst["reason"]).where(bad, ""),
    })
    for status in STATUSES:
        out[f"n_{status}"] = (frame["status"] == status).groupby(frame["stack"]).sum().reindex(out.index).astype(int)
    out["_order"] = out.index.map(order)
    out = out.sort_values(["score", "n_fail", "n_risk", "_order"], ascending=[False, True, True, True])
    out.index.name = "stack"
    return out.drop(columns="_order")


def device_scores(catalog=None, requirements=None, *, ecosystem=None, scores=None):
    """Ecosystem score of every catalogue device: the best over its software stacks.

    Parameters
    ----------
    catalog : DataFrame, optional
        The accelerator catalogue (default :func:`accelkit.load_catalog`); its
        ``software_stack`` column lists stack ids separated by ``|``.
    requirements : Requirements, optional
    scores : DataFrame, optional
        :func:`stack_scores` output to reuse.

    Returns
    -------
    pandas.DataFrame
        Same index and order as ``catalog``: ``name, software_stack,
        ecosystem_stack`` (the stack the score comes from), ``ecosystem_score``
        (0-100; NaN where no listed stack is in the ecosystem table),
        ``ecosystem_fails, ecosystem_risks, ecosystem_reason``. Join it to the
        catalogue on the index (or ``name``).

    Notes
    -----
    A device listing several stacks runs any of them (Xeon: oneAPI or OpenVINO;
    Apple M4: MPS or Core ML), so it gets the best. Exception: a device listing
    both ``cuda`` and ``jetpack`` is scored on JetPack only -- JetPack bundles
    CUDA, cuDNN and TensorRT in one versioned image (jetpack/driver_toolkit row),
    and the stock CUDA wheels the cuda rows describe do not apply on a Jetson.
    """
    if catalog is None:
        from ..catalog import load_catalog

        catalog = load_catalog()
    if scores is None:
        scores = stack_scores(requirements, ecosystem=ecosystem, catalog=catalog)
    pairs = _stack_devices(catalog)[["name", "stack"]].copy()
    pairs["_row"] = pairs.index
    listed = pairs.groupby("_row")["stack"].agg(set)
    dropped = pairs.apply(lambda r: _COMPONENT_OF.get(r["stack"]) in listed[r["_row"]], axis=1) \
        if len(pairs) else pd.Series(dtype=bool)
    pairs = pairs[~dropped.astype(bool)]
    pairs["_pos"] = pairs.groupby("_row").cumcount()
    joined = pairs.join(scores[["score", "n_fail", "n_risk", "worst_reason"]], on="stack")
    best = (joined.dropna(subset=["score"])
            .sort_values(["_row", "score", "n_fail", "_pos"], ascending=[True, False, True, True])
            .groupby("_row").head(1).set_index("_row"))
    out = pd.DataFrame({"name": catalog["name"], "software_stack": catalog["software_stack"].fillna("")},
                       index=catalog.index)
    out["ecosystem_stack"] = best["stack"].reindex(out.index).fillna("")
    out["ecosystem_score"] = best["score"].reindex(out.index).astype(float)
    out["ecosystem_fails"] = best["n_fail"].reindex(out.index)
    out["ecosystem_risks"] = best["n_risk"].reindex(out.index)
    reason = best["worst_reason"].reindex(out.index)
    no_stack = out["software_stack"].str.strip() == ""
    reason = reason.where(~(out["ecosystem_score"].isna() & no_stack), _("no software_stack in the catalogue row"))
    reason = reason.where(~(out["ecosystem_score"].isna() & ~no_stack),
                          _("none of its stacks is in the ecosystem table"))
    out["ecosystem_reason"] = reason.fillna("")
    return out

