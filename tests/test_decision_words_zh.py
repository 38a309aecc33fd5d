"""The decision's sentences in Simplified Chinese (issue 27 point 7): the reasons a device
passes, fails or cannot be verified, its configuration, what to buy or rent, where its
efficiencies come from, the nearest feasible changes and the numbers' words.

English stays the source language: the English sentences are pinned by the decision tests
(test_decision_v3, test_configsearch, test_select, ...); these check that a Chinese reader
gets every one of them in Chinese. Names stay as written (devices, models, vendors, the
systems one orders, the titles of the published sources), and so do the sourced sentences of
the data tables a reason quotes (the ecosystem table's ``detail``).
"""

import math
import re

import pytest

from accelkit import i18n, select
from accelkit.catalog import load_catalog
from accelkit.scenario import Scenario
from helpers import english_leftovers

EXAMPLES = ("examples/serve-70b-at-latency-target.yaml", "examples/smart-factory-edge-vision.yaml",
            "examples/finetune-7b-in-a-day.yaml")
#: the columns of select.rank() that people read
TEXT_COLUMNS = ("reason", "excluded_because", "unknown_figure", "would_settle", "configuration", "purchase_unit",
                "efficiency_source")
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _names():
    """Names kept as written: the units one orders and the published sources' titles."""
    from accelkit.projection.efficiency import load_efficiency
    from accelkit.systems import load_systems

    names = set(load_systems()["system"].dropna().astype(str))
    names.update(load_efficiency()["source_title"].dropna().astype(str))
    return names


def _data_sentences():
    """Data, not words of the workbook: the ecosystem table's sourced sentences (``detail``,
    data/ecosystem.csv), which the ecosystem reasons quote in their own words after a
    translated clause ("部署方式：自建机房: 只能在云上使用…。No separate driver install…")."""
    from accelkit.ecosystem import load_ecosystem

    return set(load_ecosystem()["detail"].dropna().astype(str))


@pytest.fixture(scope="module")
def ranked_zh():
    catalog = load_catalog()
    out = {}
    with i18n.using("zh_CN"):
        for path in EXAMPLES:
            scenario = Scenario.load(path)
            ranked = select.rank(scenario, catalog)
            ecosystem = select._ecosystem_scores(scenario, catalog)["ecosystem_reason"].astype(str)
            out[path] = (ranked, set(ecosystem))
    return out


def _without(text, parts):
    for part in sorted((p for p in parts if p), key=len, reverse=True):
        text = text.replace(part, " ")
    return text


@pytest.mark.parametrize("path", EXAMPLES)
def test_the_ranked_words_read_in_chinese(ranked_zh, path):
    ranked, _ecosystem = ranked_zh[path]
    allowed = _names() | _data_sentences()
    for column in TEXT_COLUMNS:
        texts = [t for t in ranked[column].astype(str) if t]
        assert texts or column in ("unknown_figure", "would_settle"), column
        assert all(CHINESE.search(t) for t in texts if not t.startswith(("bf16", "fp16", "int8", "fp8"))), column
        for row, text in zip(ranked.to_dict("records"), ranked[column].astype(str)):
            assert english_leftovers(text, allowed) == [], (column, row["name"], text)


@pytest.mark.parametrize("path", EXAMPLES)
def test_the_configuration_is_in_chinese(ranked_zh, path):
    ranked, _ = ranked_zh[path]
    words = " ".join(ranked["configuration"].astype(str))
    assert "台设备" in words
    for english in ("devices", "tensor parallel", "batch", "pipeline stages", "micro-batch", "in place of"):
        assert english not in words, english


def test_the_shortlist_reasons_say_what_to_buy_in_chinese(ranked_zh):
    ranked, _ = ranked_zh["examples/serve-70b-at-latency-target.yaml"]
    top = ranked[ranked["status"] == "shortlisted"].iloc[0]
    assert top["reason"].startswith("运行配置：") and "购买 " in top["reason"], top["reason"]
    assert "36 个月内共 $" in top["reason"], top["reason"]
    assert "最强项" in top["reason"] or "持平" in top["reason"]
    finetune, _ = ranked_zh["examples/finetune-7b-in-a-day.yaml"]
    rented = finetune[finetune["status"] == "shortlisted"].iloc[0]
    assert "租用 " in rented["reason"] and "整个训练期间共 $" in rented["reason"], rented["reason"]


@pytest.mark.parametrize("path", EXAMPLES)
def test_the_whole_reasons_read_in_chinese(ranked_zh, path):
    """Every reason whole: the ecosystem checklist's clauses, the purchase risks and the cloud
    price basis included; only names and the data's sourced sentences stay as written."""
    ranked, _ = ranked_zh[path]
    allowed = _names() | _data_sentences()
    for column in ("reason", "purchase_risks", "cloud_price_basis"):
        for text in ranked[column].astype(str):
            assert english_leftovers(text, allowed) == [], (column, text)
    assert all(CHINESE.search(t) for t in ranked["purchase_risks"].astype(str) if t)


def test_purchase_risks_market_notes_and_price_basis_in_chinese():
    """device_facts.py's and cloud_pricing.py's words: English as before, Chinese when chosen."""
    from accelkit.cloud_pricing import cloud_rates
    from accelkit.device_facts import FACTS, market_restrictions, purchase_risks

    catalog = load_catalog()
    names = catalog["name"].tolist()
    english = purchase_risks(names, "on-prem", training=True)["purchase_risks"]
    assert "no NVLink: devices talk over PCIe" in english[names.index("GeForce RTX 5090")]
    basis = cloud_rates(catalog)["cloud_price_basis"]
    assert basis.str.fullmatch(r"(median on-demand rate of \d+ provider\(s\))?").all()
    restricted = market_restrictions(names, "china")
    assert restricted.loc[names.index("H100 SXM"), "restriction"].startswith(
        "not sold in china: subject to US export controls (http")
    with i18n.using("zh_CN"):
        for text, _when in FACTS.values():
            assert CHINESE.search(i18n._(text)) and english_leftovers(i18n._(text)) == [], text
        chinese = purchase_risks(names, "on-prem", training=True)["purchase_risks"]
        basis_zh = cloud_rates(catalog, "committed-1y")["cloud_price_basis"]
        restricted_zh = market_restrictions(names, "china")
    assert [bool(t) for t in chinese] == [bool(t) for t in english]  # the same facts, in other words
    geforce = chinese[names.index("GeForce RTX 5090")].split("; ")  # joined as in English: select.summary splits
    assert "无 NVLink：设备之间经 PCIe 通信" in geforce and "显存不带 ECC" in geforce, geforce
    assert all(CHINESE.search(t) and english_leftovers(t) == [] for t in chinese if t)
    assert (basis_zh == "").all() or basis_zh[basis_zh != ""].str.contains("家云服务商").all()
    notes = [t for t in restricted_zh["restriction"] if t]
    assert notes and all(CHINESE.search(t) and english_leftovers(re.sub(r"\(http\S+\)", "", t)) == []
                         for t in notes), notes
    assert restricted_zh.loc[names.index("H100 SXM"), "restriction"].startswith("不在中国销售：受美国出口管制（http")
    assert list(restricted_zh["restricted"]) == list(restricted["restricted"])
    eased = restricted_zh.loc[names.index("H20"), "restriction"]  # a licence requirement eased since: its date
    assert eased.startswith("销往中国需要美国许可证；自") and re.search(r"自\d{4}年\d{1,2}月\d{1,2}日起", eased), eased
    assert re.search(r"since \d{4}-\d{2}-\d{2} \(http", restricted.loc[names.index("H20"), "restriction"])


def test_the_criteria_and_the_sensitivity_assumptions_have_chinese_words():
    from accelkit.i18n import _ as translate
    from accelkit.select.robustness import SENSITIVITY_LABELS, SENSITIVITY_RANGES, assumption_label

    assert set(SENSITIVITY_LABELS) == set(SENSITIVITY_RANGES)
    assert assumption_label("hours_per_day") == "hours of use per day" and assumption_label("other") == "other"
    with i18n.using("zh_CN"):
        for key in SENSITIVITY_RANGES:
            assert CHINESE.search(assumption_label(key)), key
        for key, (measures, _better) in select.CRITERIA.items():
            words = translate(measures)
            assert CHINESE.search(words) and english_leftovers(words) == [], (key, words)


def test_english_is_unchanged_by_a_chinese_ranking(ranked_zh):
    """The language is read when the words are made: a ranking in English after one in
    Chinese has no Chinese in it (nothing cached across languages)."""
    ranked = select.rank(Scenario.load(EXAMPLES[0]))
    for column in TEXT_COLUMNS:
        assert not any(CHINESE.search(t) for t in ranked[column].astype(str)
                       if "新增性能数据" not in t), column  # one source's title is Chinese


@pytest.mark.parametrize("why", [
    "no published dense bf16 peak",
    "no published dense int8 peak, memory bandwidth or link figure",
    "no published memory size or bandwidth",
    "no published link bandwidth for tensor parallelism",
    "no published link or bandwidth figure for this parallel layout",
    "no batch meets the targets: at batch 1 and its best tensor parallel 139 ms per output token > target 50 ms and "
    "812 ms to the first token > target 500 ms",
    "the weights and one sequence's KV cache do not fit on 8 devices (tensor parallel up to 8, 2 pipeline stages, "
    "expert parallel up to 8)",
    "batch_size=64 does not fit: at most 12 sequences fit",
    "the request rate is beyond what the devices sustain (the queue grows without end)",
    "needs 95.2 GB per device, 72 GB usable",
    "training in int8 is not modelled (train in bf16, fp16 or fp8)",
])
def test_every_projection_why_has_chinese_words(why):
    from accelkit.select.reasons import _why_words

    assert _why_words(why) == why
    with i18n.using("zh_CN"):
        words = _why_words(why)
    assert CHINESE.search(words) and english_leftovers(words) == [], words
    for number in re.findall(r"\d+(?:\.\d+)?", why):
        assert number in words, (number, words)


def test_efficiency_sources_in_chinese():
    from accelkit.select.reasons import _efficiency_words

    matmul = ("no published fp16 matmul for this device or its architecture: median of 10 measured NVIDIA devices "
              "(its fp16 figure: no bf16 measurement); peak = half the published 2:4-sparse INT8 figure")
    memory = "no published memory bandwidth for this device or its vendor: median of all 12 measured accelerators"
    english = f"{matmul} | memory: {memory}"
    assert _efficiency_words(matmul, memory) == english
    with i18n.using("zh_CN"):
        words = _efficiency_words(matmul, memory)
    assert english_leftovers(words) == [] and "10" in words and "12" in words and "2:4" in words, words


def test_nearest_feasible_changes_in_chinese():
    from accelkit.select.nearest import _candidate_changes

    scenario = Scenario.load(EXAMPLES[0]).update(budget_usd=100000, power_envelope_w=700, ttft_target_ms=500,
                                                 segments=["datacenter"], exclude_unknown=True)
    english = _candidate_changes(scenario)
    with i18n.using("zh_CN"):
        chinese = _candidate_changes(scenario)
    assert [c[:2] for c in english] == [c[:2] for c in chinese]  # the changes themselves stay the same
    for (_f, _v, before, _s), (_f2, _v2, words, _s2) in zip(english, chinese):
        assert CHINESE.search(words) and english_leftovers(words) == [], (before, words)


def test_robustness_and_numbers_words():
    from accelkit.numbers import DOES_NOT_FIT, UNKNOWN, joined, people

    assert (people(math.inf), people(math.nan), people(None)) == ("does not fit", "unknown", "unknown")
    assert (DOES_NOT_FIT, UNKNOWN) == ("does not fit", "unknown")
    assert people(math.nan, missing="-") == "-" and joined(["a", "b"]) == "a, b"
    with i18n.using("zh_CN"):
        assert (people(math.inf), people(math.nan)) == ("放不下", "未知")
        assert people(12345.6, "tokens") == "12,346 tokens"  # the number itself is the same
        assert joined(["a", "b"]) == "a，b"


def test_purchase_words_in_chinese():
    from accelkit.purchase import purchase_plan

    catalog = load_catalog()
    with i18n.using("zh_CN"):
        plan = purchase_plan(catalog, [3] * len(catalog)).set_index(catalog["name"])
        rented = purchase_plan(catalog, [3] * len(catalog), deployment="cloud").set_index(catalog["name"])
    assert plan.loc["H100 SXM", "purchase_unit"] == "1 × NVIDIA DGX H100 (8 台设备，其中 5 台富余)"
    assert plan.loc["L4", "purchase_unit"] == "3 × L4（仅设备价格；未计主机）"
    assert plan.loc["TPU v5e", "purchase_unit"] == "不单独出售：仅可在云上租用"
    assert rented.loc["L4", "purchase_unit"] == "租用 3 × L4"


def test_custom_model_and_fine_tuning_configuration_in_chinese():
    scenario = Scenario.load(EXAMPLES[2]).update(finetune_method="lora")
    custom = Scenario.load(EXAMPLES[0]).update(model="custom", params=12e9)
    catalog = load_catalog()
    catalog = catalog[catalog["name"].isin(["H100 SXM", "L40S"])]
    with i18n.using("zh_CN"):
        lora = select.rank(scenario, catalog)["configuration"].astype(str)
        shaped = select.rank(custom, catalog)["configuration"].astype(str)
    assert lora.str.contains("LoRA，秩").any(), list(lora)
    assert shaped.str.contains("结构参照").all(), list(shaped)
    for text in [*lora, *shaped]:
        assert english_leftovers(text) == [], text
