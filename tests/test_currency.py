"""Money for people: USD, and CNY beside it for a Chinese reader at a dated, sourced rate that is
data (``data/exchange_rates.csv``), never guessed (issue 27, point 7)."""

from __future__ import annotations

import math

import pytest

from accelkit import currency, i18n
from accelkit.errors import CatalogError


@pytest.fixture
def fresh_rate():
    currency.usd_to_cny_rate.cache_clear()
    yield
    currency.usd_to_cny_rate.cache_clear()


def test_the_shipped_table_has_a_dated_sourced_rate(fresh_rate):
    table = currency.load_exchange_rates()
    assert not table.empty
    for row in table.itertuples():
        assert 5 < row.usd_to_cny < 10, row  # yuan per dollar, not dollars per yuan
        assert row.source_url.startswith("https://"), row
        # a published day's rate (YYYY-MM-DD) or a published monthly average (YYYY-MM)
        assert len(row.date) in (7, 10) and row.date[4] == "-" and (len(row.date) == 7 or row.date[7] == "-"), row
    rate = currency.usd_to_cny_rate()
    assert rate.date == max(table["date"])  # the newest row is the one used


def test_money_in_english_is_dollars_only(fresh_rate):
    with i18n.using("en"):
        assert currency.money(1234) == "$1,234"
        assert currency.money(1.5e6) == "$1.5 M"
        assert currency.money(0.14) == "$0.14"
        assert currency.money(-20) == "-$20"
        assert currency.rate_note() == ""


def test_money_in_chinese_puts_the_yuan_beside_the_dollars(fresh_rate):
    rate = currency.usd_to_cny_rate().usd_to_cny
    with i18n.using("zh_CN"):
        text = currency.money(1000)
    assert text.startswith("$1,000（¥") and text.endswith("）")
    assert text == f"$1,000（¥{1000 * rate:,.0f}）"
    with i18n.using("zh_CN"):
        assert currency.money(1.5e6).startswith("$1.5 M（¥")


def test_missing_or_infinite_amounts_are_words_not_yuan(fresh_rate):
    with i18n.using("zh_CN"):
        assert "¥" not in currency.money(math.inf)
        assert "¥" not in currency.money(None)


def test_the_rate_note_names_the_rate_its_date_and_its_source(fresh_rate):
    rate = currency.usd_to_cny_rate()
    with i18n.using("zh_CN"):
        note = currency.rate_note()
    assert f"{rate.usd_to_cny:.4f}" in note
    assert rate.date in note
    assert rate.source in note


def test_without_a_rate_only_dollars_are_shown(fresh_rate, monkeypatch, tmp_path):
    monkeypatch.setattr(currency, "data_path", lambda name: tmp_path / name)  # no file there
    currency.usd_to_cny_rate.cache_clear()
    with i18n.using("zh_CN"):
        assert currency.money(1234) == "$1,234"
        assert currency.rate_note() == ""


@pytest.mark.parametrize("row, column", [
    ("2024-02-02,-7.19,Fed H.10,https://www.federalreserve.gov/releases/h10/20240205", "usd_to_cny"),
    ("2024-02-02,seven,Fed H.10,https://www.federalreserve.gov/releases/h10/20240205", "usd_to_cny"),
    ("2024-02-02,7.19,Fed H.10,", "source_url"),
    (",7.19,Fed H.10,https://www.federalreserve.gov/releases/h10/20240205", "date"),
])
def test_a_bad_row_is_refused_naming_the_column(tmp_path, row, column):
    path = tmp_path / "exchange_rates.csv"
    path.write_text("date,usd_to_cny,source,source_url\n" + row + "\n", encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        currency.load_exchange_rates(path)
    assert f"column {column}" in str(info.value)
    assert "line 2" in str(info.value)
