"""`accelkit validate`: every published measurement, projected and compared.

Each case of ``data/validation/measured.csv`` is its own test: the projection must
land within a factor of 2 of what was measured (the acceptance of the projection
issue), and the whole set within a 15 % geometric-mean error. A failure names the
case, the source and both numbers.

Those bounds alone let a wrong engine pass (a fitted constant 30 % off still lands
within 2x), so the engine is also pinned to its record: each case's ratio within 10 %
of ``tests/data/validation_ratios.csv``, each category's geometric-mean error and
geometric-mean ratio within half a point of ``tests/data/validation_summary.csv``, and
the README's table of errors within half a point of the engine's. The record is
regenerated **deliberately** -- ``python tools/record_validation.py`` -- only when the
engine is changed on purpose, with the reason in the commit; ``python -m benchmarks
mutations`` shows which fitted constants these checks guard.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accelkit.projection import recorded as R
from accelkit.projection import intervals as I
from accelkit.projection import validation as V

CASES = V.load_measured()
HERE = Path(__file__).resolve().parent
RATIOS, SUMMARY = HERE / "data" / "validation_ratios.csv", HERE / "data" / "validation_summary.csv"
README = HERE.parent / "README.md"


@pytest.fixture(scope="module")
def results():
    return V.validate()


def test_the_validation_set_is_broad():
    assert len(CASES) >= 300, "issue 24: at least 300 published cases"
    counts = CASES["category"].value_counts()
    for category in ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft", "training",
                     "serving_load_ttft", "serving_load_tpot", "vision_single_stream", "vision_offline",
                     "encoder_single_stream", "encoder_offline"):
        assert counts.get(category, 0) >= 5, f"too few {category} cases"
    vendors = set(CASES["device"])
    assert {"H100 SXM", "Instinct MI300X", "Gaudi 3", "Jetson AGX Orin 64GB"} <= vendors
    assert vendors & {"TPU v5e", "TPU v5p", "TPU v6e"}
    assert set(CASES["split"]) == {"fit", "holdout"}
    assert CASES["source_url"].str.startswith("http").all()


def test_whole_sources_are_held_out_by_the_hash_rule():
    """The split is by source (a publication, whatever copy or commit a case cites), so the
    holdout error is the engine's on publications it never saw; tools/assign_split.py gives it."""
    assert (CASES.groupby("source")["split"].nunique() == 1).all()
    assert CASES.loc[CASES["split"] == "holdout", "source"].nunique() >= 8
    out = subprocess.run([sys.executable, "tools/assign_split.py", "--check"], capture_output=True, text=True,
                         cwd=HERE.parent, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def _load_two_cases_of_one_source(tmp_path, column, first, second):
    """measured.csv's first source cut to two cases whose ``column`` reads ``first`` and ``second``, loaded."""
    frame = pd.read_csv(V.data_path("validation/measured.csv"), dtype=str, keep_default_na=False)
    one = frame[frame["source"] == frame["source"].iloc[0]].head(2).copy()
    one.iloc[0, one.columns.get_loc(column)], one.iloc[1, one.columns.get_loc(column)] = first, second
    path = tmp_path / "measured.csv"
    one.to_csv(path, index=False)
    V._read.cache_clear()
    return V.load_measured(path)


def test_a_source_split_across_fit_and_holdout_is_refused(tmp_path):
    with pytest.raises(ValueError, match="both fit and holdout"):
        _load_two_cases_of_one_source(tmp_path, "split", "fit", "holdout")


def test_a_known_gap_given_to_part_of_a_source_is_refused(tmp_path):
    """A known gap is a whole publication's (the engine misses it for one reason): two reasons within one
    source are a transcription slip, refused naming the column."""
    with pytest.raises(ValueError, match="known_gap"):
        _load_two_cases_of_one_source(tmp_path, "known_gap", "a reason", "another reason")


def test_a_token_budget_on_a_case_that_is_not_a_load_test_is_refused(tmp_path):
    """The scheduler's tokens per step only shape serving under load; on a batch-1 decode case it is a
    transcription slip, refused naming the column and what it applies to."""
    frame = pd.read_csv(V.data_path("validation/measured.csv"), dtype=str, keep_default_na=False)
    one = frame[frame["category"] == "decode_batch1"].head(1).copy()
    one["token_budget"] = "512"
    path = tmp_path / "measured.csv"
    one.to_csv(path, index=False)
    V._read.cache_clear()
    with pytest.raises(ValueError, match=r"token_budget.*apply to a load test.*decode_batch1"):
        V.load_measured(path)
    V._read.cache_clear()


def test_a_load_test_is_projected_at_the_token_budget_it_states():
    """The TPU recipe serves with --max-num-batched-tokens 512: its cases carry that budget, and the
    validation projects them with it, not the engine's default of 8,192 (a wave of 64 prompts of 1,000
    tokens then spans 125 steps, not 8)."""
    from accelkit import projection as P

    case = CASES[CASES["case_id"] == "tpurec-l33-70b-v6e8-bf16-c64-1000-1000-ttft"].iloc[0]
    assert case["token_budget"] == 512
    got = float(V.predict_case(case, V.load_validation_models()))
    kwargs = dict(precision="bf16", n_devices=8, tensor_parallel=8, input_tokens=1000, output_tokens=1000,
                  concurrency=64, requests_per_client=46, synchronized=True, check_memory=False,
                  serving_reserve_fraction=0.02)
    stated = P.inference("TPU v6e", "Llama-3.1 70B", token_budget=512, **kwargs)["ttft_mean_s"]
    default = P.inference("TPU v6e", "Llama-3.1 70B", **kwargs)["ttft_mean_s"]
    assert got == pytest.approx(stated, rel=1e-9), "the case must be projected at the budget it states"
    assert stated > 1.5 * default, "a 512-token budget must lengthen the in-step wave against 8,192"


def test_first_wave_floor_by_hand():
    """Nine clients of three requests each, 1,000-token prompts of Llama-3.1 8B on one H100 at FP8:
    the first nine prompts need 9 · t1 at the dense peak, their mean is at least 5 · t1, a third of the
    requests: 5/3 · t1."""
    from accelkit.projection import ceilings
    from accelkit.projection.shapes import resolve_model

    case = {"metric": "ttft_mean_s", "model": "Llama-3.1 8B", "device": "H100 SXM", "precision": "fp8",
            "input_tokens": 1000, "n_devices": 1, "concurrency": 9, "requests_per_client": 3}
    peak = float(ceilings.device_ceilings().set_index("name").loc["H100 SXM", "peak_fp8"])
    t1 = 2.0 * resolve_model("Llama-3.1 8B").active_params * 1000 / peak
    assert V.first_wave_floor_s(case) == pytest.approx(5.0 / 3.0 * t1, rel=1e-12)
    assert math.isnan(V.first_wave_floor_s({**case, "requests_per_client": float("nan")}))


def test_a_mean_ttft_faster_than_its_first_waves_prefill_is_refused(tmp_path):
    """NIM's 70B table at 25 clients of 5,000-token prompts reports a 0.69 s mean TTFT; had a third of its
    requests been the 25 prompts sent at once, their prefill alone at the two H100s' dense peak would
    average more than that. The file is refused, naming the column and what it expected."""
    frame = pd.read_csv(V.data_path("validation/measured.csv"), dtype=str, keep_default_na=False)
    one = frame[frame["case_id"] == "nim180-70b-h100-fp8-c25-5000-500-ttft"].copy()
    assert len(one) == 1 and one["requests_per_client"].iloc[0] == ""
    V._read.cache_clear()
    path = tmp_path / "measured.csv"
    one.to_csv(path, index=False)
    assert len(V.load_measured(path)) == 1  # as published: its steady state
    one["requests_per_client"] = "3"
    one.to_csv(path, index=False)
    V._read.cache_clear()
    with pytest.raises(ValueError, match=r"requests_per_client.*below .* s, the least a run of 25 clients.*expected it "
                                         r"empty"):
        V.load_measured(path)
    V._read.cache_clear()


def test_the_summary_leaves_the_known_gaps_out_of_one_figure_only(results):
    """``gm_error`` counts every case; ``gm_error_without_gaps`` the same cases less the known-gap sources."""
    gap = V.known_gap_cases(results)
    whole = V.summary(results).set_index("category").loc["all"]
    assert gap.sum() == whole["known_gap_cases"] > 0
    assert whole["gm_error"] == pytest.approx(V.geometric_mean_error(results["ratio"]))
    assert whole["gm_error_without_gaps"] == pytest.approx(V.geometric_mean_error(results.loc[~gap, "ratio"]))
    assert whole["gm_error_without_gaps"] < whole["gm_error"]


def test_source_keys_merge_copies_of_one_publication():
    sys.path.insert(0, str(HERE.parent / "tools"))
    from assign_split import source_key

    a = source_key("https://github.com/NVIDIA/TensorRT-LLM/blob/00f3768/docs/source/performance/perf-overview.md")
    b = source_key("https://github.com/WhiteD2125/TensorRT-LLM/blob/6ad7cf1/docs/source/performance/perf-overview.md")
    assert a == b == "tensorrt-llm/docs/source/performance/perf-overview.md"
    assert (source_key("https://www.amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html")
            == source_key("https://www.amd.com/zh-cn/developer/resources/rocm-hub/dev-ai/performance-results.html"))
    mlperf = "https://github.com/mlcommons/inference_results_v3.1/blob/eaf622a/closed/NVIDIA/results/{}/resnet50/" \
             "Offline/performance/run_1/mlperf_log_summary.txt"
    assert source_key(mlperf.format("L4x1_TRT")) == source_key(mlperf.format("Orin_TRT")) == \
        "inference_results_v3.1/closed/NVIDIA"
    # a mirror named mlperf_inference_results_vX holds the same round: one submitter is one source
    mirror = "https://github.com/ntuhpc/mlperf_inference_results_v5.0/blob/cf35411/closed/Lenovo/results/{}/rgat/" \
             "Offline/performance/run_1/mlperf_log_summary.txt"
    assert source_key(mirror.format("H200-SXM-141GBx8_TRT")) == source_key(mirror.format("SR780a_V3_H200SXMx8")) == \
        "inference_results_v5.0/closed/Lenovo"
    # one benchmark's folder of result files, one file per configuration, is one publication
    run = "https://github.com/cmontemuino/amd-mi300x-ml-benchmarks/blob/2536e68/datasets/sample-results/{}"
    assert source_key(run.format("Llama-3.1-8B_latency_bs1.json")) == \
        source_key(run.format("containerized/Llama-3.1-8B_latency_bs8.json")) == \
        "amd-mi300x-ml-benchmarks/datasets/sample-results"


_H100_LAB = ("GPUStack's H100 runs come 1.4-2.2× below the engine under vLLM, SGLang and TensorRT-LLM alike, while "
             "its A100 runs of the same models sit within 0.74-1.17× (128-token prompts aside); the pages state no clocks "
             "or power limit")
_SHORT_REQUESTS = ("1,000 requests of 128 prompt and 4 output tokens: the serving process's own work per request "
                   "(HTTP, chat template, tokenising), which the engine does not model, sets the rate; on this lab's H100 "
                   "as well the shortfall above")

_NIM_FP8_DECODES = ("Llama-3 8B on one H100 at FP8 with the 8-bit KV cache its own figures require (96.8 sequences "
                    "of 7,000+ tokens resident): 14.9-73.7 ms per output token at 10-100 clients of 2,000-7,000-token "
                    "prompts, 2.0-2.2x the engine's; the same table's time per token is 1.1-1.7x the engine's with "
                    "200-token prompts: long prompts slow the decodes beside them more than the engine's shared steps "
                    "say (the scheduler's settings are not stated)")

#: cases further than 2× from their measurement, each for a reason the engine does not model yet (issue 24);
#: strict: the test fails once a case comes within 2×, so the list cannot go stale
KNOWN_BEYOND_TWO = {
    "dle-pt2103-rn50-t4-amp-bs1": "the same README's 19.10 edition gives 6.05 ms for this run, the 21.03 edition "
                                  "12.96 ms; the engine sits near the first",
    "dle-pt1910-rn50-t4-amp-bs128": "the same README's 19.10 edition measures 2,084 images/s at batch 128, its 21.03 "
                                    "edition 1,198 at batch 256 (1.74x apart); the engine sits near the second",
    **{c: _H100_LAB for c in ("gpustack-qwen3-14b-h100-sglang-fp8-2000-100", "gpustack-qwen3-32b-h100-trtllm-fp8-4000-200",
                              "gpustack-qwen3-32b-h100-trtllm-fp8-2000-100")},
    **{c: _SHORT_REQUESTS for c in ("gpustack-qwen3-14b-h100-vllm-bf16-128-4", "gpustack-qwen3-14b-h100-sglang-fp8-128-4",
                                    "gpustack-qwen3-32b-h100-vllm-bf16-128-4", "gpustack-qwen3-32b-h100-trtllm-fp8-128-4")},
    **{c: _NIM_FP8_DECODES for c in ("dli-nim-l3-8b-h100-fp8-tp1-c10-7000-1000-itl",
                                     "dli-nim-l3-8b-h100-fp8-tp1-c100-2000-2000-itl",
                                     "dli-nim-l3-8b-h100-fp8-tp1-c100-7000-1000-itl")},
}


# TTFT under load is not within a factor of two of every published load test (issue 24: NIM 1.8.0's 70B
# tables sit at 2-3.4x of the steady state, its 8B tables and the GenAI-Perf course table near the in-step
# first wave; long prompts with many clients fall partly out of step, and the engine holds fewer sequences
# than NIM where memory binds); the recorded ratios below still pin it
@pytest.mark.parametrize("case_id", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BEYOND_TWO[c])) if c in KNOWN_BEYOND_TWO else c
    for c in CASES.loc[CASES["category"] != "serving_load_ttft", "case_id"].tolist()])
def test_case_within_a_factor_of_two(results, case_id):
    row = results.set_index("case_id").loc[case_id]
    assert not row["problem"], f"{case_id} could not be projected: {row['problem']}"
    assert 0.5 < row["ratio"] < 2.0, (
        f"{case_id} ({row['device']}, {row['model']}): measured {row['value']:.4g} {row['unit']}, projected "
        f"{row['predicted']:.4g} -- off by {row['ratio']:.2f}x in speed (source: {row['source_url']})")


@pytest.fixture(scope="module")
def recorded_ratios():
    return R.load_record(RATIOS, SUMMARY)


@pytest.fixture(scope="module")
def moved_cases(results, recorded_ratios):
    return R.case_failures(results, recorded_ratios[0])


@pytest.mark.parametrize("case_id", sorted(set(CASES["case_id"]) | set(pd.read_csv(RATIOS)["case_id"])))
def test_case_ratio_as_recorded(moved_cases, case_id):
    """Each case's projected / measured ratio within 10 % of the one recorded in
    tests/data/validation_ratios.csv (regenerate it deliberately: python tools/record_validation.py)."""
    assert case_id not in moved_cases, moved_cases[case_id]


def test_category_errors_as_recorded(results, recorded_ratios):
    """Each category's geometric-mean error and ratio within half a point of
    tests/data/validation_summary.csv (regenerate it deliberately: python tools/record_validation.py)."""
    failures = R.summary_failures(results, recorded_ratios[1])
    assert not failures, "\n".join(failures.values())


def test_the_stored_track_record_is_what_the_validation_gives_today(results):
    """data/validation/track_record.csv (the engine's record per workload, vendor and device, shown beside each
    decision's figure) agrees with the validation now: same rows, counts exact, errors within half a point."""
    from accelkit.projection.track_record import load_track_record, track_record_table

    now = track_record_table(results)
    stored = load_track_record()
    keys = set(zip(now["kind"], now["vendor"], now["device"]))
    assert keys == set(stored), (f"the stored track record lacks {sorted(keys - set(stored))[:3]} and has "
                                 f"{sorted(set(stored) - keys)[:3]} the validation no longer gives: "
                                 "python tools/record_validation.py")
    for row in now.to_dict("records"):
        old = stored[(row["kind"], row["vendor"], row["device"])]
        where = f"{row['kind']} on {row['device'] or row['vendor'] + ' parts'}"
        assert (old["cases"], old["sources"], old["holdout_cases"]) == (row["cases"], row["sources"],
                                                                        row["holdout_cases"]), where
        for col in ("gm_error", "gm_error_holdout", "coverage"):
            assert old[col] == pytest.approx(row[col], abs=R.POINT, nan_ok=True), \
                f"{where}: stored {col} {old[col]:.3f}, the validation gives {row[col]:.3f}; re-record"


def test_readme_table_of_errors_is_the_engines(results):
    """README's "| all | 142 | 12.0 % |", fit and holdout rows: case counts exact, errors within half a point."""
    assert set(R.readme_errors(README.read_text(encoding="utf-8"))) == {"all", "fit", "holdout"}
    failures = R.readme_failures(results, README.read_text(encoding="utf-8"))
    assert not failures, "\n".join(failures)


def test_a_category_moved_by_more_than_half_a_point_is_named_with_the_limit(results, recorded_ratios):
    moved = recorded_ratios[1].copy()
    moved.loc[moved["category"] == "ttft", "gm_error"] += 0.006
    failures = R.summary_failures(results, moved)
    assert list(failures) == ["ttft"], f"only the moved category should fail, got {list(failures)}"
    assert "at most 0.5% apart" in failures["ttft"], failures["ttft"]
    nudged = recorded_ratios[1].copy()
    nudged.loc[nudged["category"] == "ttft", "gm_error"] += 0.004
    assert not R.summary_failures(results, nudged), "0.4 points is within the half point allowed"


def test_a_moved_case_is_named_with_both_ratios(results, recorded_ratios):
    moved = recorded_ratios[0].copy()
    moved.loc[moved["case_id"] == "gptfast-l2-7b-bf16-a100-tp1", "ratio"] *= 1.2
    failures = R.case_failures(results, moved)
    assert list(failures) == ["gptfast-l2-7b-bf16-a100-tp1"]
    message = failures["gptfast-l2-7b-bf16-a100-tp1"]
    old = float(moved.set_index("case_id").loc["gptfast-l2-7b-bf16-a100-tp1", "ratio"])
    new = float(results.set_index("case_id").loc["gptfast-l2-7b-bf16-a100-tp1", "ratio"])
    assert f"recorded ratio of projected to measured speed is {old:.4g}" in message
    assert f"now gives {new:.4g}" in message and "record_validation.py" in message


@pytest.mark.slow
def test_thirty_percent_changes_to_fitted_constants_fail_a_check():
    """Issue 28's acceptance: at least 80 % of the +-30 % changes to the fitted constants
    fail one of the checks above (the same function, in-process)."""
    from benchmarks.mutations import mutations

    table = mutations()
    caught = table["caught"].mean()
    assert caught >= 0.80, f"only {caught:.0%} of the changes are caught:\n{table.to_string(index=False)}"
    # only a share (a dimensionless constant in [0, 1]) is capped at 1: a count such as gnn_rows_per_fanout_bound
    # (10.2) must move by the whole +-30 %, not be cut to 1 both ways
    above_one = table[table["base"] > 1.0]
    assert not above_one.empty and (above_one["value"] == above_one["base"] * above_one["factor"]).all(), (
        f"a constant above 1 was capped instead of changed by +-30 %:\n{above_one.to_string(index=False)}")


#: the LLM kinds measured one request or one fixed batch at a time (the engine's first scope)
LLM_KINDS = ("decode_batch1", "fixed_batch_throughput", "max_throughput", "ttft", "training")


#: whole sources the engine misses for a reason it does not model: measured.csv's known_gap column names the
#: reason; strict: a source listed there must still sit beyond 1.3x in every kind it has (test below), so the
#: list cannot go stale
KNOWN_SOURCE_GAPS = CASES.loc[V.known_gap_cases(CASES)].groupby("source")["known_gap"].first().to_dict()


def test_llm_error_within_15_percent_and_holdout_within_25(results):
    # issue 24's target is 15 % on the held-out sources of every kind; today the held-out LLM sources
    # (AMD's pages, Oracle's MI300X blog, gpt-fast, NIM's tables, the NIM GenAI-Perf course table,
    # GPUStack's A100 Qwen3 32B) give about 24 %: the course table's one-request TTFT and time per token
    # sit at 1.0-2.2x (a fixed cost per request the engine does not model), and it brings 72 cases
    llm = results[results["category"].isin(LLM_KINDS)]
    summary = V.summary(llm[~llm["source"].isin(KNOWN_SOURCE_GAPS)]).set_index("category")
    with_gaps = V.summary(llm).set_index("category").loc["all"]
    assert summary.loc["all", "gm_error_fit"] <= 0.15, summary.to_string()
    # the summary's own figure without the gaps is the same number
    assert with_gaps["gm_error_without_gaps"] == pytest.approx(summary.loc["all", "gm_error"])
    assert summary.loc["all", "gm_error_holdout"] <= 0.25, summary.to_string()
    # the known gaps count too: with them the LLM kinds stay within 21 %
    assert with_gaps["gm_error"] <= 0.21


def test_each_known_source_gap_is_still_a_gap(results):
    assert KNOWN_SOURCE_GAPS, "measured.csv lists no known gap: drop this test or the column"
    for source, why in KNOWN_SOURCE_GAPS.items():
        cases = results[results["source"] == source]
        assert len(cases), f"{source} is listed as a known gap but has no case in measured.csv"
        medians = cases.groupby("category")["ratio"].median()
        assert (medians > 1.3).all(), (f"{source} now sits within 1.3x of the engine in some kind "
                                        f"({medians.round(2).to_dict()}): clear its known_gap in measured.csv ({why})")


def test_image_model_and_encoder_error_within_35_percent(results):
    summary = V.summary(results[results["category"].isin(V.VISION_CATEGORIES)]).set_index("category")
    assert summary.loc["all", "gm_error"] <= 0.35, summary.to_string()


def test_time_per_output_token_under_load_within_25_percent(results):
    summary = V.summary(results).set_index("category")
    assert summary.loc["serving_load_tpot", "gm_error"] <= 0.25, summary.to_string()
    assert summary.loc["serving_load_tpot", "gm_error_holdout"] <= 0.25


def test_ranges_hold_about_the_stated_share_of_the_fit_sources(results):
    """The model terms are calibrated for a new source (calibrate_errors: the within-source spread
    with a new source's offset drawn from the fit sources'), so on the fit sources too each kind's range holds about
    INTERVAL_LEVEL of the measurements: not more than 10 points less, the tolerance issue 24 gives
    the held-out ones. Far below means the kind's source offsets are not the spread the interval
    assumes (image models sit at 73 %: the Ada parts' MLPerf runs, 0.4-0.6x, are one cluster, not a
    normal spread). More is allowed: a kind whose sources agree is pulled towards the spread pooled
    over every kind (training holds 92 %)."""
    fit = results[(results["split"] == "fit") & results["in_range"].notna()]
    for name, cats in I.ERROR_CONSTANTS.items():
        sel = fit[fit["category"].isin(cats)]
        if len(sel) >= 10:
            share = sel["in_range"].mean()
            if name in FIT_COVERAGE_SHORT:  # strict: fails once the kind holds its level again
                assert 0.5 <= share < I.INTERVAL_LEVEL - 0.10, (
                    f"{name}: the range holds {share:.0%} of {len(sel)} fit measurements; listed as short of "
                    f"{I.INTERVAL_LEVEL - 0.10:.0%} ({FIT_COVERAGE_SHORT[name]}) -- update the list")
                continue
            assert share >= I.INTERVAL_LEVEL - 0.10, (
                f"{name}: the range holds {share:.0%} of {len(sel)} fit measurements, stated {I.INTERVAL_LEVEL:.0%}")


#: kinds whose range holds less than 70 % of their own fit measurements, and why
#: (empty since the vLLM-on-TPU load test joined the fit sources: TTFT under load, 0.08x there at the recipe's
#: 512 tokens per step, holds 90 % of its fit measurements with a term of 2.62 -- a range of x/÷ 3.6, wide
#: because the sources disagree)
FIT_COVERAGE_SHORT = {}


def test_stored_model_terms_are_what_the_calibration_gives_today():
    """data/projection_constants.csv's model terms are calibrate_errors() on today's measured.csv:
    a case added or a projection changed without `accelkit validate --write-errors` leaves every
    range stating a level it was not calibrated for."""
    from accelkit.projection.constants import constants_table

    stored = constants_table().set_index("name")["value"].astype(float)
    for name, value in I.calibrate_errors().items():
        assert stored[name] == pytest.approx(value, rel=2e-3), (
            f"{name}: stored {stored[name]}, the calibration gives {value:.4g}; run accelkit validate --write-errors")


def test_calibration_sets_each_kinds_term_from_its_fit_cases_only(tmp_path):
    frame = pd.read_csv(V.data_path("validation/measured.csv"), dtype=str, keep_default_na=False)
    path = tmp_path / "measured.csv"
    frame[frame["category"] == "ttft"].to_csv(path, index=False)
    V._read.cache_clear()
    terms = I.calibrate_errors(path)
    assert terms["model_error_ttft"] > 0
    # no other kind has a fit case here: each takes the largest calibrated term
    assert terms["model_error_training"] == terms["model_error_ttft"]


def test_summary_counts_every_category(results):
    summary = V.summary(results)
    assert set(summary["category"]) >= {"all", "training", "ttft"}
    assert summary.loc[summary["category"] == "all", "cases"].iloc[0] == len(CASES)


def test_fitted_constants_say_how_they_were_set():
    from accelkit.projection.constants import FITTED, constants_table

    table = constants_table().set_index("name")
    for name in FITTED:
        assert "fit split" in table.loc[name, "how_set"], f"{name}: how_set should say it was fitted on the fit split"


def test_bad_measured_file_names_line_and_column(tmp_path):
    path = tmp_path / "measured.csv"
    frame = pd.read_csv(V.data_path("validation/measured.csv"), dtype=str, keep_default_na=False).head(3)
    frame.loc[1, "metric"] = "furlongs"
    frame.to_csv(path, index=False)
    V._read.cache_clear()
    with pytest.raises(ValueError, match="line 3, column metric"):
        V.load_measured(path)


def test_validate_command_prints_the_summary_and_writes_a_chart(tmp_path):
    chart = tmp_path / "validation.html"
    out = subprocess.run([sys.executable, "-m", "accelkit.cli", "validate", "--category", "ttft",
                          "--chart", str(chart)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "geometric-mean error" in out.stdout and "training" in out.stdout
    assert "leave one source out" in out.stdout
    # the held-out error with each source weighted once is the function's figure, not a copy
    from accelkit.projection.source_errors import source_weighted_error

    line = next(x for x in out.stdout.splitlines() if x.startswith("held out, each source weighted once"))
    assert line.split(": ", 1)[1].startswith(f"{source_weighted_error(V.validate(), 'holdout'):.1%}"), line
    from accelkit.projection.source_errors import error_within_sources

    within = next(x for x in out.stdout.splitlines() if x.startswith("held out, each source's own level"))
    assert f": {error_within_sources(V.validate(), 'holdout')[0]:.1%} " in within, within
    # the per-kind leave-one-source-out shares are the function's, kind by kind
    kinds = next(x for x in out.stdout.splitlines() if x.startswith("  by kind (fit cases): ")).split(": ", 1)[1]
    loso = I.leave_one_source_out().groupby("category")["inside"]
    assert kinds.split(", ")[0] == f"{loso.mean().index[0]} {loso.mean().iloc[0]:.0%} ({loso.size().iloc[0]})", kinds
    assert len(kinds.split(", ")) == loso.ngroups, "one share per kind"
    assert chart.exists() and chart.stat().st_size > 100_000
    again = subprocess.run([sys.executable, "-m", "accelkit.cli", "validate", "--chart", str(chart)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--force" in again.stderr


def test_a_sources_own_level_is_split_from_the_spread_within_it():
    """Worked by hand: source "a" measures 2x, 2x, 4x of the engine (its level: the median, 2x), source
    "b" 0.5x on its one case. Within sources the cases are 1, 1, 2, 1 of their level: exp(ln 2 / 4) - 1
    = 18.9 %; the levels alone, one per case, 2, 2, 2, 0.5: exp(ln 2) - 1 = 100 %."""
    from accelkit.projection.source_errors import error_within_sources

    frame = pd.DataFrame({"source": ["a", "a", "a", "b"], "category": "ttft", "split": "holdout",
                          "ratio": [2.0, 2.0, 4.0, 0.5]})
    within, between = error_within_sources(frame)
    assert within == pytest.approx(2 ** 0.25 - 1, rel=1e-12)
    assert between == pytest.approx(1.0, rel=1e-12)
    # a source's level is per kind: the same source at 2x on one kind and 0.5x on another has no spread
    two_kinds = pd.DataFrame({"source": "a", "category": ["ttft", "ttft", "training"], "ratio": [2.0, 2.0, 0.5]})
    assert error_within_sources(two_kinds)[0] == pytest.approx(0.0, abs=1e-12)
    assert all(np.isnan(x) for x in error_within_sources(frame, split="fit")), "no fit cases: no figure"


def test_each_source_weighs_once_in_the_source_weighted_error():
    """Worked by hand: a source of 3 cases all 2x off and one of 1 case on the mark. Per case the
    error is exp(3 ln 2 / 4) - 1 = 68.2 %; per source, exp((ln 2 + 0) / 2) - 1 = 41.4 %."""
    from accelkit.projection.source_errors import error_by_source, source_weighted_error

    frame = pd.DataFrame({"source": ["big"] * 3 + ["small"], "split": "holdout",
                          "ratio": [2.0, 0.5, 2.0, 1.0]})
    assert V.geometric_mean_error(frame["ratio"]) == pytest.approx(2 ** 0.75 - 1, rel=1e-12)
    assert source_weighted_error(frame) == pytest.approx(2 ** 0.5 - 1, rel=1e-12)
    per = error_by_source(frame)
    assert per["source"].tolist() == ["big", "small"] and per["cases"].tolist() == [3, 1]
    assert per["gm_error"].tolist() == pytest.approx([1.0, 0.0])
    assert np.isnan(source_weighted_error(frame, split="fit")), "no fit cases: no figure"
    # a case without a projection (NaN ratio) is left out, not counted as on the mark
    with_gap = pd.concat([frame, pd.DataFrame({"source": ["small"], "split": "holdout", "ratio": [np.nan]})])
    assert source_weighted_error(with_gap) == source_weighted_error(frame)


def test_validation_chart_draws_every_projected_case(results):
    from accelkit.plots import validation_chart

    fig = validation_chart(results)
    points = sum(len(t.x) for t in fig.data if t.mode == "markers")
    assert points == int(np.isfinite(results["predicted"]).sum())


def _point_cases(rows):
    """Fit cases with ranges of no width (predicted_low = predicted_high = predicted): (source,
    category, unit, ratio) each, the measured value set from the ratio."""
    frame = pd.DataFrame(rows, columns=["source", "category", "unit", "ratio"])
    frame["split"], frame["predicted"] = "fit", 1.0
    is_time = frame["unit"].isin(["s", "h"])
    # ratio = projected / measured speed: a time is measured at ratio x the projection, a rate at 1/ratio
    frame["value"] = np.where(is_time, frame["ratio"], 1.0 / frame["ratio"])
    frame["predicted_low"] = frame["predicted_high"] = frame["predicted"]
    return frame


def test_a_new_sources_offset_is_drawn_from_the_kinds_sources_and_the_pool():
    """Worked by hand. TTFT: three sources at 1x, 2x and 0.5x of the engine (offsets 0, +-ln 2); training:
    one source at 4x. TTFT's own three weigh 1 each and the pool (PRIOR_SOURCES = 1) 1, the pool's kinds
    once each: 0, +-ln 2 get 7/24 each, ln 4 3/24, so x/÷2 holds 21/24 >= 80 % and less holds 7/24: e = 1.
    Training's one source weighs 1 and the pool 1: ln 4 gets 3/4, so only x/÷4 holds 80 %: e = 3."""
    frame = _point_cases([("a", "ttft", "s", 1.0), ("b", "ttft", "s", 2.0), ("c", "ttft", "s", 0.5),
                          ("e", "training", "h", 4.0)])
    d, w = I._offset_mixture(I.source_offsets(frame), ("ttft",))
    mix = pd.Series(w).groupby(np.round(d, 9)).sum()
    assert mix.to_dict() == pytest.approx({round(-math.log(2), 9): 7 / 24, 0.0: 7 / 24, round(math.log(2), 9): 7 / 24,
                                           round(math.log(4), 9): 3 / 24})
    terms = I._terms(frame, I.INTERVAL_LEVEL)
    assert terms["model_error_ttft"] == pytest.approx(1.0, rel=1e-9)
    assert terms["model_error_training"] == pytest.approx(3.0, rel=1e-9)
    # the sources agree with the engine: no widening beyond the ranges
    agree = _point_cases([("a", "ttft", "s", 1.0), ("b", "ttft", "s", 1.0)])
    assert I._terms(agree, I.INTERVAL_LEVEL)["model_error_ttft"] == 0.0


def test_an_optimistic_source_is_covered_below_a_rates_range_and_above_a_times():
    """A source whose measurements sit at half the projected speed (ratio 2) needs the range to reach
    down to half a rate and up to twice a time. Two sources, one on the mark: a range of 1 .. 4 (the
    measurement at its bottom) must widen by 2x below for a rate (e = 1); for a time the same range
    already holds twice the value, so no widening (e = 0). A sign slip swaps the two."""
    for unit, expected in (("tokens/s", 1.0), ("s", 0.0)):
        frame = _point_cases([("a", "fixed_batch_throughput", unit, 1.0), ("b", "fixed_batch_throughput", unit, 2.0)])
        centred = frame["value"] * np.exp(-I._needed_shift(frame))  # each source's offset taken out
        frame["predicted_low"], frame["predicted_high"] = centred, centred * 4.0
        assert I._terms(frame, I.INTERVAL_LEVEL)["model_error_decode"] == pytest.approx(expected, abs=1e-9), unit


def test_an_offline_case_without_a_batch_is_read_at_the_devices_fastest_batch():
    """MLPerf Offline submitters tune the batch: a case that states none is projected at the batch of
    1 .. 2048 the engine finds fastest. For the L40S that is a small batch whose maps stay in its L2,
    well above the figure at 256 that every such case used to get."""
    from accelkit.projection.vision import vision

    cases = V.load_measured()
    case = cases[cases["case_id"] == "mlperf40-supermicro-resnet50-offline-sys521getnrt-l40sx8"].iloc[0]
    assert pd.isna(pd.to_numeric(case["batch_size"], errors="coerce")), "the case states no batch"
    by_batch = {b: float(vision("L40S", "ResNet-50", precision="int8", batch_size=b, stack="tensorrt")["frames_per_s"])
                for b in V.OFFLINE_BATCHES}
    assert V.predict_case(case) == pytest.approx(max(by_batch.values()), rel=1e-9)
    assert max(by_batch, key=by_batch.get) < 256 and V.predict_case(case) > 1.2 * by_batch[256]


def test_the_within_source_spread_leaves_a_sources_offset_to_the_between_source_term():
    """A source whose times are all half the engine's (the same offset on every case) has no spread
    within it: its ranges of 0.9-1.1 × the projection need widening only to reach that offset once,
    ×/÷ 1.8 (0.5 = 0.9 / 1.8). Left in the within-source part as well, the offset would be counted
    twice and the term would be ×/÷ 3.6 (0.5 / 2 = 0.9 / 3.6)."""
    frame = pd.DataFrame({"source": ["a"] * 3, "category": ["ttft"] * 3, "unit": ["s", "s", "s"], "split": "fit",
                          "value": [0.5, 1.0, 2.0], "predicted": [1.0, 2.0, 4.0],
                          "predicted_low": [0.9, 1.8, 3.6], "predicted_high": [1.1, 2.2, 4.4]})
    frame["ratio"] = frame["value"] / frame["predicted"]
    assert I._terms(frame, I.INTERVAL_LEVEL)["model_error_ttft"] == pytest.approx(0.8, abs=1e-9)


def test_a_range_calibrated_without_a_source_holds_about_the_stated_share_of_it(results):
    """Leave one source out: every fit source in turn plays a source the intervals never saw (the model
    terms recalibrated on the others); over all of them the range holds the stated share within 10 points."""
    loso = I.leave_one_source_out()
    fit_sources = set(results.loc[(results["split"] == "fit") & results["in_range"].notna(), "source"])
    assert set(loso["source"]) == fit_sources, "every fit source with a stated range is left out once"
    assert loso["inside"].notna().all()
    share = loso["inside"].mean()
    assert abs(share - I.INTERVAL_LEVEL) <= 0.10, (
        f"a range calibrated without its source holds {share:.1%} of the measurements, stated {I.INTERVAL_LEVEL:.0%}")


def test_held_out_sources_coverage_is_within_ten_points_of_the_stated_level(results):
    """Issue 24's acceptance: the stated 80 % range holds 70-90 % of the held-out sources' measurements."""
    row = V.summary(results).set_index("category").loc["all"]
    assert abs(row["coverage_holdout"] - I.INTERVAL_LEVEL) <= 0.10, (
        f"the stated {I.INTERVAL_LEVEL:.0%} range holds {row['coverage_holdout']:.1%} of the held-out measurements")
