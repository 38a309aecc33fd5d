"""The one table reader: declarative schemas, one error form, every problem at once."""

from __future__ import annotations

import pytest

from accelkit.tables import Column, Schema, TableError, read_table

SCHEMA = Schema("a test CSV", (
    Column("name", required=True, nonempty=True),
    Column("size_gb", "number", unit="GB", low=0, high=1000, required=True),
    Column("count", "integer", low=1, low_inclusive=True),
    Column("kind", choices=("gpu", "tpu"), lower=True, nonempty=True),
    Column("source_url", required=True, nonempty=True, empty_message="every row needs a source"),
), label="name", unique="name")


def _write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_good_file_is_typed_and_vocabulary_lowered(tmp_path):
    path = _write(tmp_path, "name,size_gb,count,kind,source_url\nA,\"1,000\",2,GPU,https://x\nB,,,tpu,https://y\n")
    frame = read_table(path, SCHEMA, "test")
    assert frame["size_gb"].tolist()[0] == 1000.0, "a thousands separator is read as part of the number"
    assert frame["size_gb"].isna().tolist() == [False, True], "an empty number cell is NaN, not 0"
    assert frame["kind"].tolist() == ["gpu", "tpu"]


def test_every_problem_is_reported_at_once_with_line_label_column_and_expectation(tmp_path):
    path = _write(tmp_path, "name,size_gb,count,kind,source_url\n"
                            "A,lots,2,gpu,https://x\n"      # line 2: not a number
                            "B,-5,0.5,npu,\n"                # line 3: range, not whole, vocabulary, no source
                            "a,1,1,gpu,https://z\n")         # line 4: duplicate name (case-insensitive)
    with pytest.raises(TableError) as err:
        read_table(path, SCHEMA, "test file")
    problems = err.value.problems
    expected = [
        "test file, line 2 (A), column size_gb: expected a number in GB > 0 <= 1000, got 'lots'",
        "test file, line 3 (B), column size_gb: expected a number in GB > 0 <= 1000, got -5",
        "test file, line 3 (B), column count: expected a whole number >= 1, got 0.5",
        "test file, line 3 (B), column kind: expected one of gpu, tpu, got 'npu' (did you mean 'tpu'?)",
        "test file, line 3 (B), column source_url: every row needs a source",
        "test file, line 4: name 'a' appears twice",
    ]
    assert sorted(problems) == sorted(expected), "\n".join(problems)
    assert str(err.value).startswith("test file: 6 problem(s):")


def test_a_missing_required_column_names_it_and_what_the_table_needs(tmp_path):
    path = _write(tmp_path, "name,count\nA,1\n")
    with pytest.raises(TableError, match=r"missing column\(s\) size_gb, source_url; a test CSV needs at least "
                                         r"name, size_gb, source_url"):
        read_table(path, SCHEMA, "test")


@pytest.mark.parametrize("name, content, words", [
    ("t.xlsx", "x", "expected a .csv file"),
    ("t.csv", None, "file not found"),
    ("t.csv", b"\xff\xfe\x00garbage\x00", "not a readable CSV file"),
])
def test_unreadable_files_say_why(tmp_path, name, content, words):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(TableError, match=words):
        read_table(path, SCHEMA, "test")


def test_every_data_loader_reports_through_the_one_error_form(tmp_path):
    """The catalogue, prices, facts and projection tables all name file, line and column the same way."""
    from accelkit.catalog import CatalogError, load_cloud_prices, load_purchase_prices
    from accelkit.device_facts import load_facts

    cases = [
        (load_cloud_prices, "provider,instance,accelerator,count,usd_per_hour,source_url\np,i,H100 SXM,8,free,https://x\n",
         ", line 2, column usd_per_hour: expected an hourly price in USD > 0, got 'free'"),
        (load_purchase_prices, "device,price_usd,price_kind,source_url\nH100 SXM,30000,rumour,https://x\n",
         ", line 2, column price_kind: expected one of list, street, reseller, analyst, system_share, got 'rumour'"),
        (load_facts, "device,fact,severity,quote,source_url\nL4,no_nvlink,maybe,q,https://x\n",
         ", line 2, column severity: expected one of risk, info, got 'maybe'"),
    ]
    for loader, text, words in cases:
        path = _write(tmp_path, text, f"{loader.__name__}.csv")
        with pytest.raises(CatalogError) as err:
            loader(path)
        assert any(p.endswith(words) for p in err.value.problems), f"{loader.__name__}: {err.value.problems}"
