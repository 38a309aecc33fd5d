"""Chapter 00: explore the catalogue (filters, compute vs bandwidth, efficiency)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .. import plots
from ..catalog import PRECISION_COLUMNS, load_catalog
from ..i18n import N_, _, language
from . import controls as C
from ._base import Panel, safe_link, table_html

__all__ = ["CataloguePanel", "filter_catalog", "segment_label", "devices_label"]


def filter_catalog(catalog, segments=(), vendors=(), precision="bf16", min_memory_gb=0.0, require_precision=False):
    """Rows matching the filters (empty selections mean "all").

    Raises ``ValueError`` for a negative memory floor or an unknown segment/vendor.
    """
    if min_memory_gb is None or not np.isfinite(min_memory_gb) or min_memory_gb < 0:
        raise ValueError(f"minimum memory must be a number of GB >= 0; got {min_memory_gb}")
    if precision not in PRECISION_COLUMNS:
        raise ValueError(f"precision must be one of {', '.join(PRECISION_COLUMNS)}; got {precision!r}")
    keep = pd.Series(True, index=catalog.index)
    if segments:
        unknown = set(segments) - set(catalog["segment"])
        if unknown:
            raise ValueError(f"segment {sorted(unknown)[0]!r} is not in the catalogue")
        keep &= catalog["segment"].isin(segments)
    if vendors:
        keep &= catalog["vendor"].isin(vendors)
    if min_memory_gb > 0:
        keep &= catalog["memory_gb"] >= min_memory_gb
    if require_precision:
        keep &= catalog[PRECISION_COLUMNS[precision]].notna()
    return catalog[keep]


#: the catalogue's segments as people read them (the values stay English: they are data)
SEGMENT_LABELS = {"datacenter": N_("datacenter"), "workstation": N_("workstation"), "consumer": N_("consumer"),
                  "edge": N_("edge")}


def segment_label(segment):
    """A segment of the catalogue in the language now in use (unknown segments as they are)."""
    return _(SEGMENT_LABELS[segment]) if segment in SEGMENT_LABELS else segment


def devices_label():
    """The label of a device picker: "devices" in English (as it always was); in another language
    the words for "the devices to compare" ("devices" alone also labels a number of devices)."""
    return "devices" if language() == "en" else _("devices to compare")


def _link(url):
    return safe_link(url)


class CataloguePanel(Panel):
    """Filter the catalogue and compare devices on compute, bandwidth and efficiency."""

    title = N_("Catalogue explorer")

    def __init__(self, segments=(), vendors=(), precision="bf16", min_memory_gb=0.0, catalog=None, catalog_path=None):
        super().__init__()
        self.catalog = catalog if catalog is not None else load_catalog(catalog_path or None)
        self.controls = {
            "segments": C.multi_choice(_("segment"), [(segment_label(x), x) for x in
                                                      sorted(self.catalog["segment"].unique())], segments, rows=4,
                                       tooltip=_("segment (Ctrl/Cmd-click to pick several; none = all)")),
            "vendors": C.multi_choice(_("vendor"), sorted(self.catalog["vendor"].unique()), vendors, rows=4,
                                      tooltip=_("vendor (Ctrl/Cmd-click to pick several; none = all)")),
            "precision": C.precision_picker(precision, description=_("precision")),
            "min_memory_gb": C.number(_("min. memory"), min_memory_gb, "GB",
                                      tooltip=_("devices with at least this much memory")),
        }
        self.start()

    def compute(self):
        v = {k: c.value for k, c in self.controls.items()}
        precision = v["precision"]
        col = PRECISION_COLUMNS[precision]
        data = filter_catalog(self.catalog, v["segments"], v["vendors"], precision, v["min_memory_gb"])
        unit = "TOP/s" if precision.startswith("int") else "TFLOP/s"
        summary = [_("{shown} of {total} devices match the filters.").format(shown=len(data), total=len(self.catalog))]
        known = data.dropna(subset=[col])
        if known.empty:
            summary.append(_("None of them publishes a dense {precision} figure.").format(precision=precision))
        else:
            top = known.loc[known[col].idxmax()]
            summary.append(
                _("Highest dense {precision} peak: {device} at {peak} {unit} ({bandwidth} GB/s of memory "
                  "bandwidth).").format(precision=precision, device=top["name"], peak=f"{top[col]:,.1f}", unit=unit,
                                        bandwidth=f"{top['memory_bw_gbs']:,.0f}")
                if pd.notna(top["memory_bw_gbs"])
                else _("Highest dense {precision} peak: {device} at {peak} {unit}.").format(
                    precision=precision, device=top["name"], peak=f"{top[col]:,.1f}", unit=unit)
            )
            eff = known.dropna(subset=["tdp_w"])
            if not eff.empty:
                per_w = eff[col] / eff["tdp_w"]
                best = eff.loc[per_w.idxmax()]
                summary.append(
                    _("Most {precision} per watt: {device} at {per_watt} {unit}/W ({peak} / {tdp} W).").format(
                        precision=precision, device=best["name"], per_watt=f"{per_w.max():.2f}", unit=unit,
                        peak=f"{best[col]:,.1f}", tdp=f"{best['tdp_w']:.0f}")
                )
            gap = len(data) - len(known)
            if gap:
                summary.append(_("{count} matching devices publish no dense {precision} figure and are left off the "
                                 "charts.").format(count=gap, precision=precision))
        table = data[["name", "vendor", "segment", "memory_gb", "memory_bw_gbs", col, "tdp_w", "cloud_usd_per_hour", "source_url"]].copy()
        table = table.sort_values(col, ascending=False, na_position="last")
        # the table is built with escape=False (for the links): every text cell is escaped here,
        # since a user's catalogue may name a device "<img onerror=...>"
        table["segment"] = table["segment"].map(lambda x: segment_label(x) if isinstance(x, str) else x)
        for column in ("name", "vendor", "segment"):
            table[column] = table[column].fillna("").astype(str).map(html.escape)
        table["source_url"] = table["source_url"].map(_link)
        heads = {"memory": _("memory [GB]"), "bandwidth": _("bandwidth [GB/s]"), "peak": f"{precision} [{unit}]",
                 "tdp": "TDP [W]", "cloud": _("cloud [USD/h]")}
        table.columns = [_("device"), _("vendor"), _("segment"), heads["memory"], heads["bandwidth"], heads["peak"],
                         heads["tdp"], heads["cloud"], _("source")]
        fmt = {heads["memory"]: "{:,.0f}".format, heads["bandwidth"]: "{:,.0f}".format,
               heads["peak"]: "{:,.1f}".format, heads["tdp"]: "{:,.0f}".format, heads["cloud"]: "{:,.2f}".format}
        return {
            "data": data,
            "summary": summary,
            "figures": {
                "scatter": plots.catalogue_scatter(data, precision),
                "efficiency": plots.efficiency_bar(data, precision),
            },
            "tables": {"devices": table_html(table, fmt, escape=False)},
        }

    def key_figures(self):
        """Plain-text figures for check cells."""
        if self.error:
            return f"ERROR: {self.error}"
        data = self.result["data"]
        precision = self.controls["precision"].value
        col = PRECISION_COLUMNS[precision]
        known = data.dropna(subset=[col])
        lines = [f"devices shown: {len(data)}", f"with a dense {precision} figure: {len(known)}"]
        if not known.empty:
            top = known.loc[known[col].idxmax()]
            lines.append(f"highest {precision}: {top['name']} {top[col]:.1f}")
        return "\n".join(lines)
