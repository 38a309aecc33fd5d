"""Chapters 08 (this machine), 10 (how far to trust) and 11 (your GPUs) in Simplified Chinese.

Each panel is built under ``i18n.using("zh_CN")`` -- the probe panel without running a probe,
the monitor panel on the shipped example log without a Prometheus -- and the text a person
sees (HTML, widget descriptions, tooltips, dropdown labels, plotly titles, axis titles, legend
names and hover words) must read in Chinese: no run of four or more English words is left but
names, recorded data and citations, which stay as they were written.
"""

from __future__ import annotations

import html
import re

import ipywidgets as W
import pytest
from helpers import english_leftovers

from accelkit import i18n

#: words left in English on purpose: recorded data (a results file's own label), commands and
#: framework names, and what other parts of the workbook show inside these panels and translate
#: in their own catalogues (the file picker, the shared precision picker)
_KEPT = (
    "M x N x K",                        # a matmul shape, as maths
    "nvidia-smi topo -m",               # a command
    "TensorRT-LLM, vLLM, lmdeploy, gpt-fast, NIM, GPUStack, DeepLearningExamples, TensorRT BERT, Megatron-LM, llm-foundry, "
    "torchtitan, MaxText, NeMo",
    "a file from your computer",        # ui/files.py (FilePicker)
    "number format of the computation",  # ui/controls.py (precision picker)
    "vendors often print sparse figures, twice as high",
)


def _figure_texts(fig):
    out = []
    data = fig.to_plotly_json()
    lay = data.get("layout", {})

    def title(value):
        if isinstance(value, dict):
            value = value.get("text")
        if value:
            out.append(str(value))

    title(lay.get("title"))
    for key, value in lay.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            title(value.get("title"))
    for note in lay.get("annotations", []) or []:
        title(note.get("text"))
    for trace in data.get("data", []):
        if trace.get("name"):
            out.append(str(trace["name"]))
        hover = trace.get("hovertemplate")
        if isinstance(hover, str):
            out.append(re.sub(r"%\{[^}]*\}", " ", hover))
        text = trace.get("text")
        if isinstance(text, str):
            out.append(text)
        elif text is not None:
            out.extend(str(t) for t in list(text))
    return out


def _strip_html(text):
    text = re.sub(r"<style.*?</style>|<script.*?</script>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _widget_texts(widget, seen):
    if id(widget) in seen:
        return []
    seen.add(id(widget))
    out = []
    if isinstance(widget, (W.HTML, W.Label, W.HTMLMath)):
        out.append(_strip_html(widget.value or ""))
    for attr in ("description", "tooltip", "placeholder"):
        value = getattr(widget, attr, None)
        if isinstance(value, str) and value:
            out.append(value)
    if isinstance(widget, (W.Dropdown, W.SelectMultiple, W.Select, W.ToggleButtons, W.RadioButtons)):
        out.extend(str(label) for label in widget._options_labels)
    if isinstance(widget, W.Output) and getattr(widget, "figure", None) is not None:
        out.extend(_figure_texts(widget.figure))
    for child in getattr(widget, "children", ()) or ():
        out.extend(_widget_texts(child, seen))
    return out


def visible_text(panel):
    """Everything the panel shows a person, as one text."""
    texts = _widget_texts(panel.widget, set())
    for fig in (panel.result or {}).get("figures", {}).values():
        texts.extend(_figure_texts(fig))
    return "\n".join(texts)


def _has_chinese(text):
    return len(re.findall(r"[\u4e00-\u9fff]", text)) > 50


def _check(text, kept=()):
    left = english_leftovers(text, allowed=_KEPT + tuple(kept))
    assert left == [], sorted(set(left))[:20]
    assert _has_chinese(text)


@pytest.fixture
def zh():
    with i18n.using("zh_CN"):
        yield


def test_probe_panel_reads_in_chinese(zh):
    from accelkit.ui.probe import ProbePanel

    panel = ProbePanel()
    assert panel.error is None and panel.results is not None
    text = visible_text(panel)
    header = panel.results.attrs.get("header", {})
    _check(text, kept=[header.get("label", "")])
    assert "最佳矩阵乘法" in text and "显存带宽" in text and "全部结果" in text


def test_probe_panel_cpu_results_read_in_chinese(zh):
    """The CPU results file: its notes (skipped modes, NVML missing) are worded in Chinese too."""
    from accelkit.ui.probe import ProbePanel
    from accelkit.probes import example_results

    path = next(p for p in example_results() if "cpu" in str(p))
    panel = ProbePanel(results_path=str(path))
    assert panel.error is None
    text = visible_text(panel)
    # "NVML Shared Library Not Found": the NVML library's own error, quoted as it said it
    _check(text, kept=[panel.results.attrs.get("header", {}).get("label", ""), "NVML Shared Library Not Found"])
    assert "CPU 上没有 GPU 利用率" in text and "探测在 CPU 上运行" in text


def test_validation_panel_reads_in_chinese(zh):
    from accelkit.ui.validation import ValidationPanel

    panel = ValidationPanel()
    assert panel.error is None
    text = visible_text(panel)
    # citations keep their titles; the efficiency table's source column is the projection's own
    # account of where each figure comes from (written by accelkit.projection, not this page)
    shown = panel.result["results"]
    kept = set(shown["source_title"]) | set(shown["case_id"])
    effic = panel._efficiency_table()
    kept |= set(effic["bf16 source"]) | set(effic["memory source"])
    _check(text, kept=sorted((k for k in kept if isinstance(k, str) and k), key=len, reverse=True))
    assert "公开测量数据" in text and "全部案例" in text


def test_monitor_panel_reads_in_chinese(zh):
    from accelkit.ui.monitor import MonitorPanel

    panel = MonitorPanel()
    assert panel.error is None
    text = visible_text(panel)
    _check(text)
    assert "等效设备数" in text and "结论：未充分利用" in text and "规模测算" in text


def test_english_is_unchanged():
    """The source language reads as before (a few known sentences)."""
    from accelkit.ui.monitor import MonitorPanel
    from accelkit.ui.probe import ProbePanel

    with i18n.using("en"):
        probe = visible_text(ProbePanel())
        monitor = visible_text(MonitorPanel())
    assert "Best matmul (maximum achievable, best shape): fp32 52.1 TFLOP/s (78% of datasheet)" in probe
    assert "Use my measurements: measured / datasheet" in probe
    assert "cosine similarity of y and y_fp32" in probe
    assert "Verdict: under-used -- mean GPU utilisation 30% < the source text's 70% threshold" in monitor
    assert "Right-size: what the observed work needs" in monitor
