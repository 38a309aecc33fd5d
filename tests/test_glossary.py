"""Plain words (issue 27, point 3): the glossary as data, terms explained on tap, numbers for people."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from accelkit import glossary
from accelkit.numbers import people

ROOT = Path(__file__).resolve().parents[1]
UI = ROOT / "accelkit" / "ui"
HEADER = "term,aliases,short_en,long_en,short_zh,long_zh,source_url\n"


def _write(tmp_path, text, name="glossary.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- schema errors name the line and the column -----------------------------------------------

def test_an_empty_definition_names_its_line_and_column(tmp_path):
    path = _write(tmp_path, HEADER + "MFU,,share of peak,longer,占比,更长,\n"
                                     "TTFT,,first token wait,longer,,更长,\n")
    with pytest.raises(glossary.GlossaryError) as err:
        glossary.load_glossary(path)
    assert "line 3 (TTFT), column short_zh" in str(err.value)
    assert len(err.value.problems) == 1


def test_a_missing_column_is_named(tmp_path):
    path = _write(tmp_path, "term,aliases,short_en,long_en,short_zh,source_url\nMFU,,a,b,c,\n")
    with pytest.raises(glossary.GlossaryError, match="missing column.*long_zh"):
        glossary.load_glossary(path)


def test_every_problem_is_reported_at_once(tmp_path):
    path = _write(tmp_path, HEADER
                  + "MFU,utilisation,a,b,c,d,ftp://example.org/x\n"   # line 2: not an http(s) URL
                  + "mfu,,a,b,c,d,\n"                                  # line 3: the term again
                  + "TPOT,utilisation,a,b,c,d,\n"                      # line 4: an alias of MFU
                  + "KV cache,,a,,c,d,\n")                             # line 5: empty long_en
    with pytest.raises(glossary.GlossaryError) as err:
        glossary.load_glossary(path)
    text = str(err.value)
    assert "4 problem(s)" in text
    assert "line 2 (MFU), column source_url" in text
    assert "line 3: term 'mfu' appears twice" in text
    assert "line 4 (TPOT), column aliases: 'utilisation' already names the term 'MFU'" in text
    assert "line 5 (KV cache), column long_en" in text


def test_a_stray_comma_and_a_long_short_definition(tmp_path):
    path = _write(tmp_path, HEADER + "MFU,,a,b,c,d,,extra\nTTFT,,"
                  + "x" * 250 + ",b,c,d,\n")
    with pytest.raises(glossary.GlossaryError, match=r"line 2: 8 cells, but the header has 7 columns"):
        glossary.load_glossary(path)
    path = _write(tmp_path, HEADER + "TTFT,," + "x" * 250 + ",b,c,d,\n")
    with pytest.raises(glossary.GlossaryError, match=r"line 2 \(TTFT\), column short_en: expected one sentence"):
        glossary.load_glossary(path)


# --- the shipped glossary ----------------------------------------------------------------------

REQUIRED = ["MFU", "ZeRO", "ZeRO-1", "ZeRO-2", "ZeRO-3", "FSDP", "tensor parallel", "pipeline parallel",
            "expert parallel", "data parallel", "micro-batch", "gradient accumulation", "headroom", "ridge point",
            "roofline", "arithmetic intensity", "binade", "all-reduce", "all-to-all", "TTFT", "TPOT", "KV cache",
            "batch size", "concurrency", "bf16", "fp16", "fp8", "int8", "nvfp4", "W8A8", "W4A16", "TDP", "PUE", "TCO",
            "right-sizing", "cannot verify", "LoRA", "QLoRA", "HBM", "NVLink", "tokens per second", "prefill",
            "decode"]


def test_the_shipped_glossary_loads_and_covers_the_issue_list():
    frame = glossary.load_glossary()
    assert len(frame) >= len(REQUIRED)
    for name in REQUIRED:
        assert glossary.define(name), name


def test_every_row_has_english_and_chinese_and_a_short_definition():
    frame = glossary.load_glossary()
    for _, row in frame.iterrows():
        for column in ("short_en", "long_en", "short_zh", "long_zh"):
            assert row[column].strip(), f"{row['term']}: empty {column}"
        assert len(row["short_en"]) < len(row["long_en"]) + 1, row["term"]
        # the Chinese text is Chinese (CJK characters), not a copy of the English
        assert any("\u4e00" <= ch <= "\u9fff" for ch in row["short_zh"]), f"{row['term']}: short_zh has no Chinese"
        assert any("\u4e00" <= ch <= "\u9fff" for ch in row["long_zh"]), f"{row['term']}: long_zh has no Chinese"
        assert row["short_zh"] != row["short_en"]
        assert not row["source_url"] or row["source_url"].startswith("https://"), row["term"]


def test_define_languages_lengths_and_suggestions():
    assert glossary.define("ttft") == glossary.define("time to first token")
    assert glossary.define("TTFT", lang="zh_CN") == glossary.define("TTFT", "zh")
    assert "首 token" in glossary.define("TTFT", "zh", long=True)
    assert len(glossary.define("MFU", long=True)) > len(glossary.define("MFU"))
    with pytest.raises(KeyError, match="did you mean 'TTFT'"):
        glossary.define("TTTF")
    with pytest.raises(ValueError, match="lang must be one of en, zh"):
        glossary.define("MFU", lang="fr")


def test_glossary_page_lists_every_term_in_both_languages():
    for lang, title in (("en", "Glossary"), ("zh", "术语表")):
        page = glossary.glossary_html(lang)
        assert f"<h3>{title}</h3>" in page
        assert page.count("<dt ") == len(glossary.terms())
    assert "&lt;" not in glossary.glossary_html(only=["MFU"]) and glossary.glossary_html(only=["MFU"]).count("<dt ") == 1


# --- every word a panel explains is in the glossary ---------------------------------------------

def _helper_words(path):
    """String literals passed to ``terms`` helpers (``T.x(...)``) or assigned to ``*TERMS`` in one ui file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    words = []

    def strings(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [s for e in node.elts for s in strings(e)]
        return []

    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               for a in n.names if a.name == "terms"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("TERMS")
                                                for t in node.targets):
            words += strings(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            value = node.func.value
            if isinstance(value, ast.Name) and value.id in aliases and node.func.attr in (
                    "term", "mark", "summary_html", "words_html", "WordsBox"):
                for arg in node.args[1:] if node.func.attr in ("summary_html", "mark") else node.args[:1]:
                    words += strings(arg)
    return words


def test_every_word_the_panels_explain_is_in_the_glossary():
    used = {}
    for path in sorted(UI.glob("*.py")):
        for word in _helper_words(path):
            used.setdefault(word, path.name)
    for panel in ("cluster.py", "precision.py", "roofline.py", "demand.py", "energy_tco.py", "edge.py"):
        assert panel in used.values(), f"{panel} explains no words"
    missing = []
    for word, where in used.items():
        try:
            glossary.lookup(word)
        except KeyError as exc:
            missing.append(f"{where}: {exc}")
    assert not missing, "\n".join(missing)


def test_the_scanner_sees_an_unknown_word(tmp_path):
    path = tmp_path / "fake.py"
    path.write_text('from . import terms as T\nTERMS = ("MFU", "Frobnication")\nx = T.term("TTFT")\n')
    words = _helper_words(path)
    assert words == ["MFU", "Frobnication", "TTFT"]
    with pytest.raises(KeyError):
        glossary.lookup("Frobnication")


def test_tap_to_open_markup():
    from accelkit.ui import terms as T

    html = T.summary_html(["The all-reduces take 2 s at an MFU of 40 % <b>.", "MFU again."], ("MFU", "all-reduce"))
    assert html.count('class="ak-term" tabindex="0"') == 2  # the first use of each word only
    assert ">all-reduces</abbr>" in html and "&lt;b&gt;" in html and "MFU again." in html
    assert ".ak-term:focus::after" in html  # the definition opens on tap (focus), not only on hover
    words = T.words_html(["MFU", "utilisation", "PUE"], "zh")
    assert words.count("<details>") == 2 and "本页术语" in words  # an alias of a listed term is not repeated


def test_the_panels_mark_their_summaries():
    from accelkit.ui.cluster import ClusterPanel

    panel = ClusterPanel()
    assert panel.error is None
    assert '>MFU</abbr>' in panel.summary.value and ">all-reduces</abbr>" in panel.summary.value
    panel.words.lang.value = "zh"
    assert "本页术语" in panel.words.box.value
    panel.words.full.value = True
    assert panel.words.page.value.count("<dt ") == len(glossary.terms())


# --- numbers for people -------------------------------------------------------------------------

@pytest.mark.parametrize("value, unit, expected", [
    (math.inf, "", "does not fit"),
    (-math.inf, "GB", "does not fit"),
    (math.nan, "", "unknown"),
    (None, "", "unknown"),
    (8.09e20, "", "809 E"),
    (8.09e20, "FLOP", "809 EFLOP"),
    (1234567, "", "1.23 M"),
    (1234567, "tokens", "1.23 M tokens"),
    (0.000123, "", "0.000123"),
    (12345.6, "", "12,346"),
    (999.6, "", "1,000"),
    (999_600_000, "", "1 G"),
    (1.5e-9, "s", "1.5 × 10⁻⁹ s"),
    (-2.5e9, "W", "-2.5 GW"),
    (0, "", "0"),
    (3.14159, "", "3.14"),
])
def test_people(value, unit, expected):
    assert people(value, unit) == expected


def test_people_never_prints_e_notation_or_inf():
    for exponent in range(-12, 27):
        for mantissa in (1.0, 2.345, 9.999):
            text = people(mantissa * 10.0 ** exponent, "FLOP")
            assert "e+" not in text and "e-" not in text and "inf" not in text and "nan" not in text, text


def test_the_docs_page_is_the_glossary():
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert page == glossary.glossary_markdown(), "docs/glossary.md is stale: python -m accelkit.glossary > docs/glossary.md"
