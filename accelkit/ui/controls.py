"""Shared controls, so every chapter looks and behaves alike.

Each builder returns an ipywidgets control whose ``description`` carries the unit
and whose tooltip carries the help text. Number inputs are unbounded text boxes:
an out-of-range value reaches the formulas, which reject it with a message that
the panel shows in the page (a bounded box would silently clamp it).
"""

from __future__ import annotations

import ipywidgets as W

from ..catalog import PRECISION_COLUMNS
from ..i18n import N_, _

STYLE = {"description_width": "initial"}

#: devices pre-selected where a chapter compares a handful (all are in the catalogue)
DEFAULT_DEVICES = (
    "T4", "L4", "A10G", "L40S", "A100 80GB SXM", "H100 SXM", "H200 SXM", "B200",
    "Instinct MI300X", "Gaudi 3", "TPU v5e", "TPU v5p", "GeForce RTX 4090",
)

#: help texts for terms a buyer may not know (marked for translation: show them as ``_(GLOSSARY[key])``)
GLOSSARY = {
    "roofline": N_("Attainable FLOP/s = min(peak compute, bandwidth × arithmetic intensity)."),
    "mfu": N_("Model FLOPs utilisation: the fraction of the datasheet peak a real job achieves (0.3-0.6 is typical "
              "for large-model training); accelkit projects it from published efficiencies unless you give your own."),
    "tdp": N_("Thermal design power: the board's rated maximum power draw, in watts."),
    "pue": N_("Power usage effectiveness: facility energy / IT energy (1.1 for the best halls, ~1.5 typical)."),
    "intensity": N_("Arithmetic intensity: FLOP done per byte moved to or from memory."),
    "dense": N_("Dense figures: no 2:4 structured sparsity (vendors often print sparse figures, twice as high)."),
}


def number(description, value, unit="", step=None, tooltip="", width="230px"):
    label = f"{description} [{unit}]" if unit else description
    box = W.FloatText(value=value, description=label, style=STYLE, layout=W.Layout(width=width))
    if step is not None:
        box.step = step
    box.tooltip = tooltip or label
    return box


def integer(description, value, unit="", tooltip="", width="200px"):
    label = f"{description} [{unit}]" if unit else description
    box = W.IntText(value=value, description=label, style=STYLE, layout=W.Layout(width=width))
    box.tooltip = tooltip or label
    return box


def slider(description, value, low, high, step, unit="", tooltip="", readout_format=".2f", width="360px"):
    label = f"{description} [{unit}]" if unit else description
    control = W.FloatSlider(
        value=value, min=low, max=high, step=step, description=label, style=STYLE,
        readout_format=readout_format, continuous_update=False, layout=W.Layout(width=width),
    )
    control.tooltip = tooltip or label
    return control


def precision_picker(value="bf16", options=None, description=None):
    options = list(options or PRECISION_COLUMNS)
    # a scenario from another chapter may carry a format this chapter does not offer
    value = value if value in options else ("bf16" if "bf16" in options else options[0])
    control = W.Dropdown(options=options, value=value, description=description or _("precision"), style=STYLE,
                         layout=W.Layout(width="190px"))
    control.tooltip = _("number format of the computation; {dense}").format(dense=_(GLOSSARY["dense"]))
    return control


def choice(description, options, value, width="240px", tooltip=""):
    options = list(options)
    values = [o[1] if isinstance(o, tuple) else o for o in options]
    value = value if value in values else values[0]
    control = W.Dropdown(options=options, value=value, description=description, style=STYLE,
                         layout=W.Layout(width=width))
    control.tooltip = tooltip or description
    return control


def multi_choice(description, options, value=(), rows=5, width="230px", tooltip=""):
    control = W.SelectMultiple(options=list(options), value=tuple(value), description=description, rows=rows,
                               style=STYLE, layout=W.Layout(width=width))
    control.tooltip = tooltip or _("{what} (Ctrl/Cmd-click to pick several; none = all)").format(what=description)
    return control


def device_picker(catalog, value=(), description=None, rows=8, width="300px"):
    """Pick several devices from the catalogue (none picked = all)."""
    names = catalog["name"].tolist()
    value = tuple(v for v in value if v in names)
    return multi_choice(description or _("devices"), names, value, rows=rows, width=width,
                        tooltip=_("devices to compare (Ctrl/Cmd-click for several)"))


def single_device_picker(catalog, value=None, description=None, width="300px"):
    names = catalog["name"].tolist()
    return choice(description or _("device"), names, value if value in names else names[0], width=width)


def model_picker(value="Llama-2 7B", description=None, include_custom=True, kinds=None, width="260px"):
    from ..models import load_models

    models = load_models()
    if kinds is not None:
        models = models[models["kind"].isin(kinds)]
    names = models["name"].tolist()
    # every option a (label, value) pair: ipywidgets reads a list mixing plain names and pairs as
    # labels only, and "custom" (shown translated) was then no value of the dropdown
    options = [(n, n) for n in names] + ([(_("custom"), "custom")] if include_custom else [])
    value = value if value in names or (include_custom and value == "custom") else names[0]
    return choice(description or _("model"), options, value, width=width,
                  tooltip=_("a model preset (sizes from its paper or model card) or a custom size"))


def group(title, children, width=None):
    """A titled box of controls."""
    box = W.VBox([W.HTML(f"<b>{title}</b>"), *children],
                 layout=W.Layout(border="1px solid #e0e0e0", padding="4px 8px", margin="2px", width=width))
    return box


def groups(*boxes):
    """The chapter's control groups side by side, wrapping onto more rows on a narrow page."""
    return W.HBox(list(boxes), layout=W.Layout(flex_flow="row wrap"))


def own_mfu(value):
    """A toggle and a slider: the person's own MFU in place of the projected one.

    Returns ``(toggle, slider)``; the slider is greyed out while the toggle is off.
    Bind both to the scenario's ``utilization`` with :func:`mfu_bindings`.
    """
    on = value is not None
    box = toggle(_("use my own MFU"), on, tooltip=_("off: the engine projects the MFU from published efficiencies; "
                                                    "on: the slider's value replaces it. {mfu}").format(
                                                        mfu=_(GLOSSARY["mfu"])))
    bar = slider(_("my MFU"), value if on else 0.4, 0.05, 1.0, 0.05, tooltip=_(GLOSSARY["mfu"]))
    bar.disabled = not on
    box.observe(lambda change: setattr(bar, "disabled", not change["new"]), names="value")
    return box, bar


def mfu_bindings(panel, toggle_name="own_mfu", slider_name="utilization"):
    """Bind :func:`own_mfu`'s two controls to ``scenario.utilization`` (None when off)."""
    box, bar = panel.controls[toggle_name], panel.controls[slider_name]
    panel.bind(toggle_name, "utilization", lambda on: bar.value if on else None, lambda v: v is not None)
    panel.bind(slider_name, "utilization", lambda v: v if box.value else None,
               lambda v: v if v is not None else bar.value)


def toggle(description, value=False, tooltip=""):
    control = W.Checkbox(value=value, description=description, indent=False, layout=W.Layout(width="auto"))
    control.tooltip = tooltip or description
    return control
