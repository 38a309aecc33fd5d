"""The engine's track record beside each figure: where it was checked, and where it never was."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from accelkit import i18n, select
from accelkit.decision_page import summary_html
from accelkit.projection.track_record import track_record_table, track_record_words
from accelkit.scenario import Scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _results(rows):
    base = {"split": "fit", "source": "a", "in_range": 1.0}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_the_table_counts_cases_sources_and_errors_per_vendor_and_device():
    results = _results([
        {"category": "decode_batch1", "device": "H100 SXM", "ratio": 1.2},
        {"category": "ttft", "device": "H100 SXM", "ratio": 1 / 1.2, "source": "b", "split": "holdout",
         "in_range": 0.0},
        {"category": "decode_batch1", "device": "A100 80GB SXM", "ratio": 1.0},
        {"category": "vision_offline", "device": "T4", "ratio": float("nan")},  # not projected: left out
    ])
    t = track_record_table(results).set_index(["kind", "vendor", "device"])
    h100 = t.loc[("llm", "NVIDIA", "H100 SXM")]
    assert (h100["cases"], h100["sources"], h100["holdout_cases"]) == (2, 2, 1)
    assert abs(h100["gm_error"] - 0.2) < 1e-9 and abs(h100["coverage"] - 0.5) < 1e-9
    parts = t.loc[("llm", "NVIDIA", "")]
    assert parts["cases"] == 3, "the vendor's row counts every device of the vendor"
    assert ("vision", "NVIDIA", "T4") not in t.index, "a case the engine could not project has no error to show"


def test_the_words_say_this_device_else_the_vendors_parts_else_never_checked():
    said = track_record_words("llm", ["NVIDIA", "AMD", "Huawei"], ["H200 SXM", "Instinct MI325X", "Ascend 910B"])
    assert said[0].startswith("checked on ") and "on this device" in said[0]
    assert said[1].startswith("not checked on this device; on ") and "on AMD parts" in said[1]
    assert said[2].startswith("never checked on published measurements of LLM serving on Huawei parts")


def test_the_decision_page_shows_the_winners_track_record_in_english_and_chinese():
    scenario = Scenario.load(EXAMPLES / "serve-70b-at-latency-target.yaml")
    summary = select.decision_summary(scenario)
    ranked = select.rank(scenario).set_index("name")
    assert summary["checked"] == ranked.loc[summary["device"], "engine_track_record"] != ""
    assert 'data-field="checked"' in summary_html(summary, css=False)
    with i18n.using("zh_CN"):
        zh = select.decision_summary(scenario)
    assert "公开实测" in zh["checked"], zh["checked"]


def test_the_vendor_is_named_in_the_readers_language():
    with i18n.using("zh_CN"):
        said = track_record_words("llm", ["Huawei", "AMD"], ["Ascend 910B", "Instinct MI325X"])
    assert "华为（Huawei）器件" in said[0], "a Chinese name runs on with the text: " + said[0]
    assert " AMD 器件" in said[1], "a Latin name is set apart by spaces: " + said[1]


def test_recommender_training_is_read_from_the_recommender_runs_not_the_llm_runs():
    from accelkit.projection.track_record import record_kind

    dlrm = Scenario(workload="training", model="DLRM-v2")
    llm = Scenario(workload="training", model="Llama-3.1 8B")
    assert (record_kind(dlrm), record_kind(llm)) == ("recommender_training", "training")
    said = track_record_words(record_kind(dlrm), ["NVIDIA"], ["H100 SXM"])[0]
    assert "recommender training" in said and "LLM training" not in said, said
    assert "LLM training" in track_record_words("training", ["NVIDIA"], ["H100 SXM"])[0]
    table = track_record_table(_results([
        {"category": "recommender_training", "device": "H100 SXM", "ratio": 1.1},
        {"category": "training", "device": "H100 SXM", "ratio": 1.3}])).set_index(["kind", "vendor", "device"])
    assert table.loc[("recommender_training", "NVIDIA", "H100 SXM"), "cases"] == 1
    assert table.loc[("training", "NVIDIA", "H100 SXM"), "cases"] == 1, "the DLRM run must not count as LLM training"
