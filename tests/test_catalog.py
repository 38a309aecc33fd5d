"""The built-in catalogue: schema, units, provenance, dense figures; the loader's errors."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

import accelkit
from accelkit import catalog as cat
from accelkit.catalog import CatalogError, find, load_catalog

REQUIRED_DEVICES = [
    "V100 SXM2 32GB", "V100 PCIe 32GB", "T4", "A10", "A10G", "A30", "A100 40GB PCIe", "A100 80GB SXM",
    "H100 PCIe", "H100 SXM", "H200 SXM", "H20", "L4", "L40S", "B200", "GB200",
    "GeForce RTX 3090", "GeForce RTX 4090", "GeForce RTX 5090", "RTX 6000 Ada Generation",
    "Instinct MI100", "Instinct MI210", "Instinct MI250X", "Instinct MI300X", "Instinct MI325X",
    "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e", "Gaudi 2", "Gaudi 3", "Ascend 910B", "Ascend 310", "MLU370-X8",
    "Jetson Nano 4GB", "Jetson Xavier NX 8GB", "Jetson Orin Nano 8GB", "Jetson Orin NX 16GB",
    "Jetson AGX Orin 64GB", "Hailo-8", "Coral Edge TPU", "GC200 IPU",
]


def test_catalogue_has_at_least_45_devices(catalog):
    assert len(catalog) >= 45, f"the catalogue should hold at least 45 accelerators, it holds {len(catalog)}"


@pytest.mark.parametrize("name", REQUIRED_DEVICES)
def test_catalogue_covers_required_device(catalog, name):
    assert name in set(catalog["name"]), f"{name} is missing from data/accelerators.csv"


def test_catalogue_has_a_cpu_baseline_with_amx(catalog):
    cpus = catalog[catalog["kind"] == "cpu"]
    assert not cpus.empty and cpus["vendor"].eq("Intel").any(), "an Intel Xeon CPU baseline row is expected"


def test_every_row_has_a_source_url(catalog):
    missing = catalog.loc[~catalog["source_url"].str.match(r"https?://"), "name"].tolist()
    assert not missing, f"rows without a source_url: {missing}"


def test_every_row_has_a_retrieval_date_and_notes(catalog):
    assert catalog["retrieved"].str.match(r"\d{4}-\d{2}-\d{2}").all(), "every row needs a retrieved date"
    assert (catalog["notes"].str.len() > 0).all(), "every row needs notes saying where its figures come from"


def test_secondary_sources_are_marked_for_chinese_accelerators(catalog):
    chinese = catalog[catalog["vendor"].isin(["Huawei", "Cambricon"])]
    assert not chinese.empty
    for _, row in chinese.iterrows():
        official = any(host in row["source_url"] for host in ("huawei.com", "hisilicon.com", "cambricon.com", "hiascend.com"))
        assert official or "secondary source" in row["notes"].lower(), f"{row['name']}: mark secondary sources"


def test_numeric_columns_are_typed_and_positive(catalog):
    for col in cat.NUMERIC_COLUMNS:
        values = catalog[col]
        assert pd.api.types.is_float_dtype(values), f"{col} should be numeric"
        assert (values.dropna() > 0).all(), f"{col} has zero or negative values"


def test_units_are_plausible(catalog):
    # bandwidth in GB/s (not TB/s): every device with memory moves at least 10 GB/s
    assert (catalog["memory_bw_gbs"].dropna() >= 10).all()
    # memory in GB: no device above 1 TB of local memory
    assert (catalog["memory_gb"].dropna() <= 1000).all()
    # TFLOP/s, not FLOP/s
    assert (catalog["bf16_tflops"].dropna() < 20000).all()
    assert catalog["kind"].isin(cat.KINDS).all() and catalog["segment"].isin(cat.SEGMENTS).all()


def test_edge_devices_state_their_power_mode(catalog):
    edge = catalog[(catalog["segment"] == "edge") & catalog["tdp_w"].notna()]
    missing = edge.loc[edge["power_mode"] == "", "name"].tolist()
    assert not missing, f"edge devices without a power mode for their figures: {missing}"


def test_no_sparse_figure_in_a_dense_column(catalog):
    sparse = catalog.dropna(subset=["int8_tops_sparse", "int8_tops"])
    assert (sparse["int8_tops"] < sparse["int8_tops_sparse"]).all()
    # H100 SXM: NVIDIA prints 1,979 TFLOPS bf16 "with sparsity"; the dense figure is half
    assert find("H100 SXM", catalog)["bf16_tflops"] == pytest.approx(989.5, rel=0.01)
    assert find("A100 80GB SXM", catalog)["bf16_tflops"] == pytest.approx(312, rel=0.01)


def test_known_datasheet_figures(catalog):
    # spot checks against vendor datasheets (see each row's source_url)
    assert find("H100 SXM", catalog)["memory_bw_gbs"] == pytest.approx(3350)
    assert find("A100 80GB SXM", catalog)["memory_bw_gbs"] == pytest.approx(2039)
    assert find("T4", catalog)["fp16_tflops"] == pytest.approx(65)
    assert find("MI300X", catalog)["bf16_tflops"] == pytest.approx(1307.4)
    assert find("TPU v5e", catalog)["bf16_tflops"] == pytest.approx(197)


def test_cloud_prices_fill_hourly_cost(catalog):
    h100 = find("H100 SXM", catalog)
    assert h100["cloud_usd_per_hour"] > 0 and h100["cloud_instance"]
    prices = cat.load_cloud_prices()
    assert prices["source_url"].str.match(r"https?://").all()
    assert (prices["usd_per_hour"] > 0).all()


def test_builtin_catalogue_loads_from_the_package_data(catalog):
    """The catalogue is the rows of data_path("accelerators.csv"), read here with the stdlib csv
    module: the same names in the same order, and H100 SXM's bf16 figure as the file gives it."""
    import csv

    path = cat.data_path("accelerators.csv")
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["name"] for r in rows] == list(catalog["name"])
    h100 = next(r for r in rows if r["name"] == "H100 SXM")
    assert find("H100 SXM", catalog)["bf16_tflops"] == float(h100["bf16_tflops"])


# --- find ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "query, expected",
    [
        ("h100 sxm", "H100 SXM"),
        ("H100-SXM", "H100 SXM"),
        ("NVIDIA H100 SXM", "H100 SXM"),
        ("Tesla T4", "T4"),
        ("mi300x", "Instinct MI300X"),
        ("AMD Instinct MI300X", "Instinct MI300X"),
        ("rtx 4090", "GeForce RTX 4090"),
        ("Trillium", "TPU v6e"),
    ],
)
def test_find_matches_names_and_aliases_case_insensitively(catalog, query, expected):
    assert find(query, catalog)["name"] == expected


def test_find_unknown_name_suggests_close_matches(catalog):
    with pytest.raises(CatalogError) as err:
        find("H10O SXM", catalog)
    message = str(err.value)
    assert "unknown device 'H10O SXM'" in message and "H100 SXM" in message


def test_find_ambiguous_name_lists_candidates(catalog):
    with pytest.raises(CatalogError, match="matches several devices") as err:
        find("H100", catalog)
    assert "H100 SXM" in str(err.value) and "H100 PCIe" in str(err.value)


def test_find_rejects_empty_name(catalog):
    with pytest.raises(CatalogError, match="non-empty"):
        find("  ", catalog)


def test_catalog_error_is_a_value_error():
    assert issubclass(CatalogError, ValueError)


# --- a user's own CSV -------------------------------------------------------------------

GOOD = (
    "name,vendor,kind,segment,memory_gb,memory_bw_gbs,bf16_tflops,tdp_w,source_url\n"
    "Lab Card X,Acme,gpu,workstation,48,900,200,300,internal benchmark 2026-11\n"
)


def _write(tmp_path, text, name="mine.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_user_csv_merges_with_builtin(tmp_path):
    path = _write(tmp_path, GOOD)
    merged = load_catalog(path)
    assert "Lab Card X" in set(merged["name"])
    assert len(merged) == len(load_catalog()) + 1
    row = find("lab card x", merged)
    assert row["origin"] == "user file mine.csv" and row["bf16_tflops"] == 200


def test_user_csv_row_replaces_builtin_of_same_name(tmp_path):
    path = _write(tmp_path, GOOD.replace("Lab Card X,Acme", "T4,NVIDIA"))
    merged = load_catalog(path)
    assert (merged["name"] == "T4").sum() == 1
    assert find("T4", merged)["origin"].startswith("user file")


def test_user_csv_is_never_written(tmp_path):
    path = _write(tmp_path, GOOD)
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    load_catalog(path)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


def test_user_csv_missing_column_is_named(tmp_path):
    path = _write(tmp_path, GOOD.replace("segment,", "").replace("workstation,", ""))
    with pytest.raises(CatalogError, match=r"mine.csv: missing column\(s\) segment"):
        load_catalog(path)


def test_user_csv_text_in_number_column_names_file_line_and_column(tmp_path):
    path = _write(tmp_path, GOOD.replace(",900,", ",fast,"))
    with pytest.raises(CatalogError) as err:
        load_catalog(path)
    message = str(err.value)
    assert "mine.csv" in message and "line 2" in message and "memory_bw_gbs" in message
    assert "expected memory bandwidth in GB/s" in message and "'fast'" in message


def test_user_csv_negative_bandwidth_is_rejected(tmp_path):
    path = _write(tmp_path, GOOD.replace(",900,", ",-900,"))
    with pytest.raises(CatalogError, match=r"line 2 \(Lab Card X\), column memory_bw_gbs: expected .*got -900"):
        load_catalog(path)


def test_user_csv_unknown_kind_lists_vocabulary(tmp_path):
    path = _write(tmp_path, GOOD.replace(",gpu,", ",gpgpu,"))
    with pytest.raises(CatalogError, match="column kind: expected one of gpu, tpu"):
        load_catalog(path)


def test_user_csv_sparse_figure_in_dense_column_is_flagged(tmp_path):
    text = GOOD.replace("bf16_tflops,", "tf32_tflops,bf16_tflops,").replace(",200,", ",100,400,")
    path = _write(tmp_path, text)
    with pytest.raises(CatalogError, match="2:4-sparse"):
        load_catalog(path)


def test_user_csv_without_source_is_rejected(tmp_path):
    path = _write(tmp_path, GOOD.replace("internal benchmark 2026-11", ""))
    with pytest.raises(CatalogError, match="every device needs a source"):
        load_catalog(path)


def test_missing_user_file_is_reported(tmp_path):
    with pytest.raises(CatalogError, match="file not found"):
        load_catalog(tmp_path / "nope.csv")


def test_peak_flops_is_in_flop_per_second(catalog):
    peak = cat.peak_flops(catalog, "bf16")
    assert peak[catalog["name"] == "H100 SXM"].iloc[0] == pytest.approx(989.5e12, rel=0.01)
    with pytest.raises(ValueError, match="precision must be one of"):
        cat.peak_flops(catalog, "fp12")
    assert np.isnan(peak[catalog["name"] == "T4"].iloc[0]), "T4 has no bf16 and must stay NaN"


def test_top_level_load_catalog_is_the_catalog_loader(tmp_path):
    """accelkit.load_catalog passes its path and options through: a user's file alone
    (include_builtin=False) is exactly that file's one row."""
    assert accelkit.load_catalog().equals(load_catalog())
    own = accelkit.load_catalog(_write(tmp_path, GOOD), include_builtin=False, prices=False)
    assert list(own["name"]) == ["Lab Card X"] and own["bf16_tflops"].iloc[0] == 200
    assert own.equals(load_catalog(tmp_path / "mine.csv", include_builtin=False, prices=False))


@pytest.mark.parametrize(
    "torch_name, expected",
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-32GB", "V100 SXM2 32GB"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("NVIDIA H200", "H200 SXM"),
    ],
)
def test_find_matches_the_names_torch_reports(catalog, torch_name, expected):
    # what torch.cuda.get_device_name() returns on these boards, so the probes find their datasheet
    assert find(torch_name, catalog)["name"] == expected


# ---- the Chinese-market figures and the export-control facts (issue 25, item 2) ----

def test_ascend_910b_has_the_figures_a_projection_needs_except_its_unsourced_bandwidth(catalog):
    row = catalog.set_index("name").loc["Ascend 910B"]
    # arthurchiao.art's data sheet table (secondary): 400 W, HCCS 392 GB/s one-to-many (7 x 56 GB/s), 2023
    assert row["tdp_w"] == 400 and row["interconnect_gbs"] == 392 and row["year"] == 2023
    assert row["interconnect"] == "HCCS"
    # bandwidth candidates conflict (400 / 768 / 1,200 / 1,228 GB/s) and none is Huawei's: left empty, said why
    assert pd.isna(row["memory_bw_gbs"]) and "memory_bw_gbs left empty" in row["notes"]


def test_h20_bf16_is_filled_only_from_a_page_that_says_bf16(catalog):
    row = catalog.set_index("name").loc["H20"]
    assert row["bf16_tflops"] == 148 and row["fp16_tflops"] == 148
    assert "BFLOAT16" in row["notes"] and "secondary" in row["notes"]


def test_mlu370_fp32_comes_from_the_two_agreeing_sources(catalog):
    row = catalog.set_index("name").loc["MLU370-X8"]
    assert row["fp32_tflops"] == 24 and "outlier" in row["notes"]


def _facts():
    from accelkit.device_facts import load_facts

    return load_facts()


def _targets(facts, fact):
    return set(facts.loc[facts["fact"] == fact, "device"])


def test_every_fact_names_a_catalogue_device_or_a_family_that_matches_one(catalog):
    names = set(catalog["name"])
    for target in set(_facts()["device"]):
        if target.startswith("family:"):
            prefix = target.split(":", 1)[1].lower()
            assert any(n.lower().startswith(prefix) for n in names), f"{target} matches no catalogue device"
        else:
            assert target in names, f"device_facts names {target!r}, not a catalogue device"


@pytest.mark.parametrize("name", [
    "A100 40GB PCIe", "A100 40GB SXM", "A100 80GB SXM", "A100 80GB PCIe", "H100 PCIe", "H100 SXM", "H100 NVL",
    "H200 SXM", "H20", "B200", "GB200", "L40S", "GeForce RTX 4090", "Instinct MI300X", "Instinct MI325X",
    "Gaudi 2", "Gaudi 3",
])
def test_parts_restricted_for_china_carry_a_sourced_export_control_fact(name):
    from accelkit.device_facts import _applies

    facts = _facts()
    rows = facts[(facts["fact"] == "export_control") & facts["device"].map(lambda t: _applies(name, t))]
    assert not rows.empty, f"{name}: no export_control fact"
    assert rows["source_url"].str.match(r"https?://").all() and (rows["quote"].str.len() > 20).all()
    assert (rows["severity"] == "risk").all()


def test_china_market_parts_and_the_dated_h20_history_are_recorded():
    facts = _facts()
    assert {"H20", "Ascend 910B", "Ascend 910", "Atlas 300I Duo", "MLU370-X8"} <= _targets(facts, "china_market")
    h20 = facts[facts["device"] == "H20"].set_index("fact")
    # restricted in April 2025, licences promised again in July 2025: both dated, in that order
    assert h20.loc["export_control", "date"] < h20.loc["export_control_eased", "date"]
    assert "Ascend 910B" in _targets(facts, "foreign_use_restricted")


def test_market_facts_are_listed_not_raised_as_purchase_risks():
    from accelkit.device_facts import FACTS, purchase_risks

    for fact in ("export_control", "china_market", "export_control_eased", "foreign_use_restricted"):
        assert FACTS[fact][1] == "never"
    risks = purchase_risks(["H20", "Ascend 910B"], deployment="on-prem", multi_device=[True, True], training=True)
    assert not risks["purchase_risks"].str.contains("export|China").any()
