"""Chapters 00 (catalogue), 02 (bandwidth), 03 (precision) and 04 (ecosystem) in Simplified Chinese.

Under ``i18n.using("zh_CN")`` each panel is built for a default and an LLM-serving scenario, and
everything a person reads -- HTML, control labels, tooltips, figure and axis titles -- must read
as Chinese: no run of four English words left (:func:`helpers.english_leftovers`), with two
kinds of text allowed to stay as their source wrote them: the sourced sentences of
``data/ecosystem.csv`` (the ``detail`` a checklist reason quotes) and the projection's note on
where an efficiency comes from. Under English the same panels say what they always said.
"""

from __future__ import annotations

import html
import re

import pytest

from accelkit import glossary, i18n
from accelkit.ecosystem import load_ecosystem, to_markdown
from accelkit.scenario import Scenario
from helpers import english_leftovers

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _scenarios():
    return {
        "default": Scenario(),
        "llm-serving": Scenario(model="Llama-2 70B", workload="inference", precision="fp8", batch_size=8,
                                n_devices=8),
    }


def _panels(scenario):
    from accelkit.ui.catalogue import CataloguePanel
    from accelkit.ui.ecosystem import EcosystemPanel
    from accelkit.ui.precision import PrecisionPanel
    from accelkit.ui.roofline import RooflinePanel

    return {
        "catalogue": CataloguePanel(),
        "roofline": RooflinePanel(scenario.copy()),
        "precision": PrecisionPanel(scenario.copy()),
        "ecosystem": EcosystemPanel(scenario.copy(), audit=False),
    }


def _readable(value):
    """The text a person reads in an HTML value: no styles, no code, no tags, entities decoded."""
    text = re.sub(r"<style>.*?</style>", " ", value, flags=re.S)
    text = re.sub(r"<code>.*?</code>", " ", text, flags=re.S)
    text = re.sub(r"</?(abbr|b|i|span|a)\b[^>]*>", "", text)  # inline: part of the sentence
    text = re.sub(r"<[^>]+>", " ", text)
    return html.unescape(text)


def _figure_titles(spec):
    layout = spec.get("layout", {})
    out = []
    for key, part in layout.items():
        if key == "title" or key.startswith(("xaxis", "yaxis")):
            title = part.get("title", part) if key != "title" else part
            if isinstance(title, dict):
                title = title.get("text")
            if title:
                out.append(str(title))
    for trace in spec.get("data", []):
        bar = trace.get("colorbar", {}).get("title", {})
        if isinstance(bar, dict) and bar.get("text"):
            out.append(bar["text"])
    return out


def _visible(widget, skip_tooltips=()):
    """Every text of a widget tree a person reads: labels, tooltips, placeholders, HTML, options, figures."""
    texts = []
    for attr in ("description", "placeholder"):
        value = getattr(widget, attr, None)
        if isinstance(value, str) and value:
            texts.append(value)
    tooltip = getattr(widget, "tooltip", None)
    if isinstance(tooltip, str) and tooltip and tooltip not in skip_tooltips:
        texts.append(tooltip)
    value = getattr(widget, "value", None)
    if type(widget).__name__ in ("HTML", "HTMLOutput") and isinstance(value, str):
        texts.append(_readable(value))
    labels = getattr(widget, "_options_labels", None)
    if labels:
        texts.extend(str(label) for label in labels)
    for output in getattr(widget, "outputs", ()) or ():
        spec = output.get("data", {}).get("application/vnd.plotly.v1+json")
        if spec:
            texts.extend(_figure_titles(spec))
    for child in getattr(widget, "children", ()) or ():
        texts.extend(_visible(child, skip_tooltips))
    return texts


def _shared_control_tooltips(catalog):
    """The tooltips the shared control builders (accelkit/ui/controls.py, another part of the app)
    write by default: not this chapter's text, so not judged here."""
    from accelkit.ui import controls as C

    return {C.model_picker("Llama-2 7B", include_custom=False).tooltip, C.precision_picker("bf16").tooltip,
            C.device_picker(catalog, ()).tooltip}


def _allowed(panel):
    """Text quoted from a source, kept in the source's words: the ecosystem table's details, the
    projection's note on an efficiency's source."""
    allowed = [d for d in load_ecosystem()["detail"] if d]
    if getattr(panel, "_decode_source", None):
        allowed.append(_readable(panel._decode_source))
    return allowed


@pytest.fixture(scope="module")
def chinese_panels():
    with i18n.using("zh_CN"):
        built = {name: _panels(s) for name, s in _scenarios().items()}
        texts = {}
        for scenario, panels in built.items():
            for chapter, panel in panels.items():
                assert panel.error is None, (scenario, chapter, panel.error)
                skip = _shared_control_tooltips(panel.catalog)
                texts[scenario, chapter] = (panel, _visible(panel.widget, skip))
    return texts


@pytest.mark.parametrize("scenario", ["default", "llm-serving"])
@pytest.mark.parametrize("chapter", ["catalogue", "roofline", "precision", "ecosystem"])
def test_every_chapter_reads_in_chinese(chinese_panels, scenario, chapter):
    panel, texts = chinese_panels[scenario, chapter]
    allowed = _allowed(panel)
    text = "\n".join(texts)
    for quoted in sorted(allowed, key=len, reverse=True):
        text = text.replace(quoted, " ")
    assert english_leftovers(text) == []
    assert len(CHINESE.findall(text)) > 50
    assert CHINESE.search(panel.summary.value)


def test_chinese_keeps_names_units_and_figures():
    with i18n.using("zh_CN"):
        from accelkit.ui.catalogue import CataloguePanel
        from accelkit.ui.roofline import RooflinePanel

        catalogue = CataloguePanel()
        roofline = RooflinePanel(Scenario())
    assert "款设备中有" in catalogue.summary.value and "TFLOP/s" in catalogue.summary.value
    verdict = roofline.claim_summary.value
    # the BERT claim told again in Chinese, with the claim's own figures
    assert "V100 PCIe 32GB" in verdict and "ms" in verdict and "就速度而言" in verdict
    with i18n.using("en"):
        english = RooflinePanel(Scenario())
    numbers = re.findall(r"\d+\.\d\d", english.claim_summary.value)
    assert numbers and all(n in verdict for n in numbers)


def test_english_is_unchanged():
    with i18n.using("en"):
        panels = _panels(Scenario())
    catalogue, roofline, precision, ecosystem = (panels[k] for k in ("catalogue", "roofline", "precision",
                                                                     "ecosystem"))
    assert re.match(r"\d+ of \d+ devices match the filters\.", catalogue.result["summary"][0])
    assert catalogue.result["figures"]["scatter"].layout.xaxis.title.text == "memory bandwidth [GB/s]"
    assert catalogue.result["figures"]["efficiency"].layout.title.text == "BF16 peak per watt of TDP"
    assert "<th>memory [GB]</th>" in catalogue.result["tables"]["devices"]
    assert roofline.result["figures"]["roofline"].layout.title.text == (
        "Roofline at bf16: attainable = min(peak, bandwidth × intensity); dashed: the achievable ceilings")
    assert roofline.result["summary"][0].startswith("Ridge points of the selected devices at bf16: ")
    assert roofline.claim_summary.value.startswith('<div class="ak-summary">On speed the claim does not hold')
    assert "LLM decode step (batch 16)" in roofline.result["tables"]["attainable"]
    assert roofline.controls["batch_size"].description == "batch [sequences]"
    assert roofline.controls["devices"].description == "devices"
    assert precision.controls["workload"].options == ("training", "fine-tuning", "inference")
    assert any(getattr(c, "value", None) == "<h4>Guidance: which format for which job</h4>"
               for c in precision.widget.children)
    assert "Needed where rounding error accumulates" in precision.result["tables"]["guidance"]
    assert precision.result["summary"][0].startswith("Mixed precision does not shrink Adam's model state")
    assert ecosystem.result["summary"][0] == "Requirements: PyTorch; team knows NVIDIA CUDA; cloud deployment."
    assert ecosystem.result["figures"]["scores"].layout.xaxis.title.text == "score [0-100] (weighted checklist points)"
    frame = ecosystem.result["checklist"]
    assert "framework: PyTorch" in set(frame["item"])
    reason = frame[(frame["stack"] == "cuda") & (frame["item"] == "framework: PyTorch")]["reason"].iloc[0]
    assert reason.startswith("PyTorch built in. ")
    assert to_markdown(frame).startswith("# Software-ecosystem checklist\n")
    assert "| ✅ pass |" in to_markdown(frame)


def test_the_checklist_export_reads_in_chinese():
    from accelkit.ecosystem import Requirements, checklist

    with i18n.using("zh_CN"):
        frame = checklist(Requirements(custom_cuda_kernels=True, deployment="edge"))
        text = to_markdown(frame, requirements=Requirements(custom_cuda_kernels=True, deployment="edge"))
    assert text.startswith("# 软件生态检查清单\n")
    assert "需求：PyTorch; 有自有 CUDA 内核; 团队熟悉 NVIDIA CUDA; 边缘部署" in text
    assert "✅ 通过" in text and "自有 CUDA 内核" in text
    # the ids the scores and the decision use stay English
    assert set(frame["status"]) <= {"pass", "risk", "fail"} and "custom_ops" in set(frame["group"])


def test_tap_to_open_terms_speak_the_language_in_use():
    from accelkit.ui import terms as T

    with i18n.using("zh_CN"):
        assert glossary.define("TTFT") == glossary.define("TTFT", "zh")
        assert glossary.define("TTFT", lang="en") == glossary.define("TTFT", "en")  # an explicit lang wins
        assert glossary.define("TTFT") in html.unescape(T.term("TTFT"))
        assert "本页术语" in T.words_html(["roofline"])
        box = T.WordsBox(["roofline", "TTFT"])
        assert box.lang.value == "zh" and "本页术语" in box.box.value
        assert box.full.description == "完整术语表"
        assert '<div class="ak-glossary" lang="zh">' in glossary.glossary_html()
        # a term written in English inside a Chinese sentence is still marked
        marked = T.summary_html(["首 token 延迟（TTFT）很短"], ["TTFT"])
        assert ">TTFT</abbr>" in marked and glossary.define("TTFT", "zh") in html.unescape(marked)
        # and a term written in Chinese too, once per term however many of its spellings are listed
        marked = T.summary_html(["拐点为 153 FLOP/byte；低于拐点的计算核受限于显存带宽。"],
                                ["ridge point", "Ridge point", "memory bandwidth"])
        assert marked.count(">拐点</abbr>") == 1 and ">显存带宽</abbr>" in marked
        assert glossary.define("ridge point", "zh") in html.unescape(marked)
        assert "<b>拐点（ridge point）</b>" in T.words_html(["ridge point"])
        assert "<b>拐点（ridge point）</b>" in glossary.glossary_html()
    assert all(glossary.lookup(term)["term"] == term for term in glossary.ZH_FORMS)
    with i18n.using("en"):
        assert T.summary_html(["拐点"], ["ridge point"]).count("<abbr") == 0  # English pages: English words only
        assert "<b>ridge point</b>" in T.words_html(["ridge point"])
        assert glossary.define("TTFT") == glossary.define("TTFT", "en")
        box = T.WordsBox(["roofline"])
        assert box.lang.value == "en" and "Words on this page" in box.box.value
        assert box.full.description == "Full glossary"
        assert glossary.define("TTFT", "en") in html.unescape(T.term("TTFT"))
        assert glossary.define("TTFT", "zh") in html.unescape(T.term("TTFT", lang="zh"))
