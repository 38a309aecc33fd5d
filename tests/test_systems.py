"""data/systems.csv -- the units a buyer orders -- and its loader, accelkit.systems.load_systems."""

from __future__ import annotations

import pandas as pd
import pytest

from accelkit import load_catalog
from accelkit.catalog import CatalogError
from accelkit.systems import SYSTEM_COLUMNS, UNIT_KINDS, SYSTEM_PRICE_KINDS, load_systems

HEADER = ",".join(SYSTEM_COLUMNS) + "\n"


@pytest.fixture(scope="module")
def systems():
    return load_systems()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _row(**cells):
    base = dict(system="Box", device="H100 SXM", devices_per_unit="8", unit_kind="server",
                source_url="https://example.org/box", retrieved="2026-12-04")
    base.update(cells)
    return ",".join(f'"{base.get(c, "")}"' for c in SYSTEM_COLUMNS) + "\n"


def _write(tmp_path, *rows):
    path = tmp_path / "systems.csv"
    path.write_text(HEADER + "".join(rows))
    return path


# --- the built-in table -------------------------------------------------------------

def test_schema_columns_and_types(systems):
    assert list(systems.columns[:len(SYSTEM_COLUMNS)]) == SYSTEM_COLUMNS
    assert systems["devices_per_unit"].dtype.kind == "i"
    for col in ("price_usd", "price_low_usd", "price_high_usd", "unit_power_w", "host_power_w"):
        assert systems[col].dtype.kind == "f", col
    assert set(systems["unit_kind"]) <= set(UNIT_KINDS)
    assert set(systems["price_kind"]) - {""} <= set(SYSTEM_PRICE_KINDS)
    assert systems["system"].str.lower().is_unique


def test_every_row_has_a_source_and_every_price_a_kind_and_date(systems):
    assert systems["source_url"].str.startswith("http").all()
    priced = systems[systems["price_usd"].notna()]
    assert not priced.empty
    assert (priced["price_kind"] != "").all()
    undated = priced["notes"].str.lower().str.contains("undated")
    assert ((priced["price_date"] != "") | (undated & (priced["retrieved"] != ""))).all(), \
        "a price carries the date it held, or says its source is undated"
    assert (priced["price_date"][priced["price_date"] != ""].str.match(r"^\d{4}-\d{2}(-\d{2})?$")).all()


def test_devices_exist_in_the_catalogue_exactly(systems, catalog):
    assert set(systems["device"]) <= set(catalog["name"])


def test_devices_per_unit_at_least_one(systems):
    assert (systems["devices_per_unit"] >= 1).all()


def test_cloud_only_units_have_no_purchase_price(systems):
    cloud = systems[systems["unit_kind"] == "cloud_only"]
    assert not cloud.empty, "TPUs are listed, as rent-only units"
    assert cloud[["price_usd", "price_low_usd", "price_high_usd"]].isna().all().all()
    assert set(cloud["device"]) >= {"TPU v4", "TPU v5e", "TPU v5p", "TPU v6e"}


def test_price_ranges_bracket_the_price(systems):
    both = systems.dropna(subset=["price_usd", "price_low_usd"])
    assert (both["price_low_usd"] <= both["price_usd"]).all()
    both = systems.dropna(subset=["price_usd", "price_high_usd"])
    assert (both["price_high_usd"] >= both["price_usd"]).all()


def test_unit_power_covers_at_least_the_accelerators(systems, catalog):
    """A whole unit's maximum power is at least its accelerators' TDPs (sanity of the units)."""
    tdp = catalog.set_index("name")["tdp_w"]
    rows = systems.dropna(subset=["unit_power_w"])
    accel = rows["device"].map(tdp) * rows["devices_per_unit"]
    ok = accel.isna() | (rows["unit_power_w"] >= accel)
    assert ok.all(), rows.loc[~ok, ["system", "unit_power_w"]]


# --- published figures, pinned to what their sources say --------------------------

def _one(systems, name):
    row = systems[systems["system"] == name]
    assert len(row) == 1, name
    return row.iloc[0]


def test_orin_nano_super_devkit_is_249_dollars(systems):
    # brojogopalsapui.com (citing NVIDIA's Dec 2024 datasheet): "NVIDIA's $249 generative-AI edge computer"
    row = _one(systems, "NVIDIA Jetson Orin Nano Super Developer Kit")
    assert row["price_usd"] == 249 and row["price_date"] == "2024-12" and row["unit_kind"] == "devkit"


def test_gaudi3_kit_is_intels_125k_for_eight(systems):
    # y-ic.de: Intel said a kit with eight Gaudi 3 chips costs US$125,000 (about 15,625 per chip)
    row = _one(systems, "Intel Gaudi 3 8-accelerator kit (8 OAM on universal baseboard)")
    assert row["price_usd"] == 125_000 and row["devices_per_unit"] == 8 and row["price_kind"] == "list"
    assert row["price_usd"] / row["devices_per_unit"] == 15_625


def test_dgx_b200_max_power_from_nvidia_user_guide(systems):
    # docs.nvidia.com DGX B200 user guide: power input "14.3 kW max."
    row = _one(systems, "NVIDIA DGX B200")
    assert row["unit_power_w"] == 14_300 and row["devices_per_unit"] == 8 and pd.isna(row["price_usd"])


def test_gb200_nvl72_is_a_72_gpu_rack(systems):
    row = _one(systems, "NVIDIA GB200 NVL72 rack")
    assert row["devices_per_unit"] == 72 and row["unit_kind"] == "rack"


# --- a user's file: every problem at once, clear words ----------------------------

def test_unknown_device_names_the_row_and_suggests_close_matches(tmp_path, catalog):
    path = _write(tmp_path, _row(system="My box", device="H100 SXM5"))
    with pytest.raises(CatalogError) as err:
        load_systems(path, catalog=catalog)
    text = str(err.value)
    assert "line 2 (My box)" in text and "column device" in text and "'H100 SXM5'" in text
    assert "did you mean" in text and "'H100 SXM'" in text


def test_an_alias_is_pointed_to_its_catalogue_name(tmp_path, catalog):
    alias_row = catalog[catalog["aliases"].fillna("") != ""].iloc[0]
    alias = alias_row["aliases"].split("|")[0]
    path = _write(tmp_path, _row(device=alias))
    with pytest.raises(CatalogError) as err:
        load_systems(path, catalog=catalog)
    assert repr(alias_row["name"]) in str(err.value)


def test_every_problem_is_reported_at_once(tmp_path, catalog):
    path = _write(tmp_path,
                  _row(system="A", devices_per_unit="0"),                                    # < 1
                  _row(system="B", unit_kind="cloud_only", price_usd="100", price_kind="list",
                       price_date="2024-01"),                                                # cloud with price
                  _row(system="C", price_usd="100"),                                         # no kind, no date
                  _row(system="D", price_usd="100", price_low_usd="150", price_kind="press",
                       price_date="2024-13"),                                                # range, bad date
                  _row(system="E", unit_kind="pod", source_url=""),                          # vocabulary, source
                  _row(system="F", unit_power_w="1000", host_power_w="2000"))                # host > unit
    with pytest.raises(CatalogError) as err:
        load_systems(path, catalog=catalog)
    problems = err.value.problems
    joined = "\n".join(problems)
    for expected in ("line 2 (A), column devices_per_unit",
                     "line 3 (B), column price_usd: a cloud_only unit cannot be bought",
                     "line 4 (C), column price_kind", "line 4 (C), column price_date",
                     "line 5 (D), column price_low_usd", "line 5 (D), column price_date",
                     "line 6 (E), column unit_kind", "line 6 (E), column source_url",
                     "line 7 (F), column host_power_w"):
        assert expected in joined, expected


def test_a_good_user_file_loads_and_is_not_rewritten(tmp_path, catalog):
    path = _write(tmp_path, _row(price_usd="1,000", price_kind="Reseller", price_date="2025-01-02",
                                 unit_kind="Server"))
    before = path.read_text()
    frame = load_systems(path, catalog=catalog)
    assert frame.loc[0, "price_usd"] == 1000.0 and frame.loc[0, "price_kind"] == "reseller"
    assert frame.loc[0, "unit_kind"] == "server" and frame.loc[0, "devices_per_unit"] == 8
    assert path.read_text() == before


def test_builtin_returns_a_copy():
    first = load_systems()
    first.loc[0, "price_usd"] = -1
    assert load_systems().loc[0, "price_usd"] != -1
