"""The Chinese names of vendors and devices are data with a source, and appear only in Chinese
(issue 27, point 7)."""

from __future__ import annotations

import pytest

from accelkit import i18n, names
from accelkit.errors import CatalogError


def test_every_chinese_name_belongs_to_the_catalogue_and_has_a_source(catalog):
    table = names.load_names_zh()
    assert not table.empty
    for row in table.itertuples():
        column = "vendor" if row.kind == "vendor" else "name"
        assert row.name in set(catalog[column]), f"{row.kind} {row.name!r} is not in accelerators.csv"
        assert row.source_url.startswith(("https://", "http://")), row
        assert any("\u4e00" <= ch <= "\u9fff" for ch in row.name_zh), f"{row.name_zh!r} has no Chinese"


def test_the_chinese_vendors_and_the_ascend_line_are_named():
    with i18n.using("zh_CN"):
        assert names.vendor_name("Huawei") == "华为（Huawei）"
        assert names.vendor_name("NVIDIA") == "英伟达（NVIDIA）"
        assert names.display_name("Ascend 910B") == "昇腾 910B（Ascend 910B）"


def test_a_chinese_name_that_contains_the_english_one_is_not_repeated():
    with i18n.using("zh_CN"):
        assert names.display_name("Atlas 300I Duo") == "Atlas 300I Duo 推理卡"


def test_without_an_official_chinese_name_the_english_name_stays():
    with i18n.using("zh_CN"):
        assert names.display_name("H100 SXM") == "H100 SXM"
        assert names.vendor_name("AMD") == "AMD"
        assert names.display_name(None) is None


def test_english_readers_see_the_names_unchanged():
    with i18n.using("en"):
        for name in ("Ascend 910B", "Atlas 300I Duo", "H100 SXM"):
            assert names.display_name(name) == name
        assert names.vendor_name("Huawei") == "Huawei"


def test_the_kind_is_checked():
    with pytest.raises(ValueError, match="kind"):
        names.chinese_name("Ascend 910B", kind="model")


@pytest.mark.parametrize("row, column", [
    ("chip,Ascend 910B,昇腾 910B,https://example.org", "kind"),
    ("device,Ascend 910B,,https://example.org", "name_zh"),
    ("device,Ascend 910B,昇腾 910B,", "source_url"),
])
def test_a_bad_row_is_refused_naming_the_column(tmp_path, row, column):
    path = tmp_path / "names_zh.csv"
    path.write_text("kind,name,name_zh,source_url\n" + row + "\n", encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        names.load_names_zh(path)
    assert f"column {column}" in str(info.value)


def test_a_name_given_twice_is_refused(tmp_path):
    path = tmp_path / "names_zh.csv"
    path.write_text("kind,name,name_zh,source_url\n"
                    "device,Ascend 910B,昇腾 910B,https://example.org\n"
                    "device,Ascend 910B,昇腾910B,https://example.org\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="more than one Chinese name"):
        names.load_names_zh(path)
