"""`accelkit report --lang zh_CN` renders the report in Simplified Chinese, and the CLI speaks the
language of ``--lang`` (issue 27, point 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from accelkit import cli, i18n
from accelkit.report import CHAPTERS, ReportError, build_report

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "serve-70b-at-latency-target.yaml"
CHOSEN = ["00", "09"]


def _run(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "accelkit.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=600)


def _markdown(notebook_path):
    return [c.source for c in nbformat.read(notebook_path, as_version=4).cells if c.cell_type == "markdown"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Two real chapters rendered in Chinese through the command line."""
    out = tmp_path_factory.mktemp("zh") / "report"
    run = _run("report", "--scenario", str(SCENARIO), "--chapters", *CHOSEN, "--out", str(out), "--quiet",
               "--lang", "zh_CN", env={"ACCELKIT_LANG": "en"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "报告已写入" in run.stdout  # the command's own message follows --lang too
    return out


@pytest.mark.slow
def test_the_index_reads_in_chinese(report):
    page = (report / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page
    with i18n.using("zh_CN"):
        headings = [i18n._("Chapters"), i18n._("The scenario")]
        titles = [i18n._(title) for cid, _stem, title in CHAPTERS if cid in CHOSEN]
    for text in headings + titles:
        assert text in page and any("\u4e00" <= ch <= "\u9fff" for ch in text), text
    for english in ("<h2>Chapters</h2>", "<h2>The scenario</h2>", "Prepared ", "reproduces this report"):
        assert english not in page
    assert "年" in page and "月" in page  # the date as Chinese readers write it
    # what the index itself writes (after the decision page) has no English sentence left
    import re

    from helpers import english_leftovers

    with i18n.using("zh_CN"):
        prepared = i18n._("Prepared {when} with accelkit. Each chapter below was run on this scenario; charts are "
                          "interactive\nand work offline.").split("{when}")[0]
    own = page[page.index(prepared):]
    text = re.sub(r"<[^>]+>", " ", own)
    assert not english_leftovers(text, allowed=("accelkit report --scenario scenario.json", "scenario.json")), text


@pytest.mark.slow
def test_every_chapter_page_is_chinese_and_its_markdown_translated(report):
    translated_cells = 0
    for cid, stem, title in CHAPTERS:
        if cid not in CHOSEN:
            continue
        html = (report / f"{stem}.html").read_text(encoding="utf-8")
        assert '<html lang="zh-CN">' in html
        with i18n.using("zh_CN"):
            assert f"<title>{cid} · {i18n._(title)}</title>" in html
            expected = [i18n._(source) if source.strip() else source
                        for source in _markdown(ROOT / "notebooks" / f"{stem}.ipynb")]
        ran = _markdown(report / "executed" / f"{stem}.ipynb")
        assert ran == expected, f"{stem}: a Markdown cell was not replaced by its translation"
        translated_cells += sum(1 for a, b in zip(ran, _markdown(ROOT / "notebooks" / f"{stem}.ipynb")) if a != b)
    if translated_cells == 0:  # notebooks.po has none of these cells yet: the mechanism is pinned below
        pytest.skip("notebooks.po translates none of these chapters' cells yet")
    assert not (report / "translated").exists(), "the translated sources are not part of the report"
    assert json.loads((report / "scenario.json").read_text())["workload"] == "inference"  # values stay English


def _tiny_chapter(folder):
    """A chapter whose Markdown no catalogue translates and whose code says what language it runs in."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("A sentence only this test knows."),
                nbformat.v4.new_code_cell("import os\nfrom accelkit import i18n\n"
                                          "print('LANG=' + os.environ.get('ACCELKIT_LANG', '') + ' ' + i18n.language())")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir()
    nbformat.write(nb, folder / "00_catalogue.ipynb")
    return folder


@pytest.mark.slow
def test_the_markdown_is_replaced_before_the_chapter_runs_in_a_chinese_kernel(tmp_path, monkeypatch):
    real = i18n._translations

    class Fake:
        def __init__(self, lang):
            self.inner = real(lang)

        def gettext(self, message):
            return "只有这个测试认识的一句话。" if message == "A sentence only this test knows." \
                else self.inner.gettext(message)

        def ngettext(self, singular, plural, n):
            return self.inner.ngettext(singular, plural, n)

    monkeypatch.setattr(i18n, "_translations", Fake)
    before_env, before_lang = os.environ.get(i18n.LANG_ENV), i18n.language()
    index = build_report(SCENARIO, out_dir=tmp_path / "r", chapters=["00"], progress=False,
                         notebooks_dir=_tiny_chapter(tmp_path / "nb"), lang="zh-CN")
    executed = nbformat.read(index.parent / "executed" / "00_catalogue.ipynb", as_version=4)
    assert executed.cells[0].source == "只有这个测试认识的一句话。"
    assert "LANG=zh_CN zh_CN" in executed.cells[1].outputs[0]["text"]
    html = (index.parent / "00_catalogue.html").read_text(encoding="utf-8")
    assert "只有这个测试认识的一句话。" in html and '<html lang="zh-CN">' in html
    assert os.environ.get(i18n.LANG_ENV) == before_env and i18n.language() == before_lang  # restored


@pytest.mark.slow
def test_an_english_report_keeps_its_words(tmp_path):
    with i18n.using("en"):
        index = build_report(SCENARIO, out_dir=tmp_path / "r", chapters=["00"], progress=False,
                             notebooks_dir=_tiny_chapter(tmp_path / "nb"))
    page = index.read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "<h2>Chapters</h2>" in page and "Prepared " in page
    executed = nbformat.read(index.parent / "executed" / "00_catalogue.ipynb", as_version=4)
    assert executed.cells[0].source == "A sentence only this test knows."
    assert "LANG=en en" in executed.cells[1].outputs[0]["text"]


def test_an_unknown_report_language_names_the_field(tmp_path):
    with pytest.raises(ReportError) as err:
        build_report(SCENARIO, out_dir=tmp_path / "r", chapters=["00"], progress=False, lang="fr")
    assert err.value.exit_code == 2 and str(err.value).startswith("lang: ") and "zh_CN" in str(err.value)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args, env, field", [
    (["--lang", "xx", "devices"], {}, "--lang"),
    (["report", "--scenario", "s.yaml", "--lang=fr"], {}, "--lang"),
    (["devices"], {"ACCELKIT_LANG": "klingon"}, "ACCELKIT_LANG"),
])
def test_the_command_refuses_an_unknown_language_naming_the_field(args, env, field, tmp_path):
    run = _run(*args, env=env, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert f"{field}: unknown language" in run.stderr and "Traceback" not in run.stderr
    assert not list(tmp_path.iterdir())


def test_the_help_is_chinese_with_lang_and_english_without(tmp_path):
    zh = _run("--lang", "zh_CN", "--help", env={"ACCELKIT_LANG": ""})
    assert zh.returncode == 0
    assert zh.stdout.startswith("用法：accelkit") and "选择 AI 加速器" in zh.stdout and "显示本帮助信息并退出" in zh.stdout
    from_env = _run("report", "--help", env={"ACCELKIT_LANG": "zh_CN"})
    assert "场景文件" in from_env.stdout
    en = _run("--help", env={"ACCELKIT_LANG": ""})
    assert en.stdout.startswith("usage: accelkit") and "Choose AI accelerators" in en.stdout


def test_an_argparse_error_is_chinese_too(tmp_path):
    run = _run("--lang", "zh_CN", "report", cwd=tmp_path)
    assert run.returncode == 2
    assert "缺少以下必需参数：--scenario" in run.stderr and "参见 accelkit report --help" in run.stderr


def test_main_restores_the_language_of_the_process(capsys):
    before = i18n.language()
    import argparse

    saved = argparse._
    assert cli.main(["--lang", "zh_CN", "devices", "H100 SXM"]) == 0
    assert i18n.language() == before and argparse._ is saved
    assert "H100 SXM" in capsys.readouterr().out


def test_command_language_reads_the_option_before_the_environment():
    assert cli.command_language(["--lang", "zh-CN", "devices"], environ={}) == "zh_CN"
    assert cli.command_language(["report", "--lang=zh", "--scenario", "x"], environ={}) == "zh_CN"
    assert cli.command_language(["devices"], environ={"ACCELKIT_LANG": "zh_CN"}) == "zh_CN"
    assert cli.command_language(["devices"], environ={}) == "en"
    # after "--" the words belong to a monitored command
    assert cli.command_language(["monitor", "--", "train.py", "--lang", "zh_CN"], environ={}) == "en"


def test_the_monitor_command_speaks_chinese_with_lang(tmp_path):
    run = _run("--lang", "zh_CN", "monitor", "--example", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for words in ("来源：", "设备：", "结论：", "合理配置（", "功耗/上限"):
        assert words in run.stdout, words
    english = _run("monitor", "--example", env={"ACCELKIT_LANG": ""}, cwd=tmp_path)
    assert english.stdout.startswith("source: ") and "power/limit" in english.stdout
