"""The report starts with the decision page a buyer signs, titled with the scenario's own name;
``--pdf`` prints that page on one A4 page (issue 27, point 2)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from accelkit import select
from accelkit.report import build_report, report_title
from accelkit.scenario import Scenario

pytestmark = pytest.mark.slow

SCENARIO = """\
name: Serving desk for the Lyon legal team
workload: inference
model: Llama-3.1 8B
deployment: on-prem
latency_target_ms: 30
requests_per_s: 3
output_tokens: 200
n_devices: 4
horizon_months: 24
electricity_usd_per_kwh: 0.22
"""


def _pages(pdf_bytes):
    """The page objects of a PDF (``/Type /Page``, not ``/Pages``) and their MediaBoxes."""
    pages = re.findall(rb"/Type\s*/Page(?!s)\b", pdf_bytes)
    boxes = [tuple(float(x) for x in m.split()) for m in re.findall(rb"/MediaBox\s*\[([^\]]*)\]", pdf_bytes)]
    return len(pages), boxes


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from accelkit.decision_page import PdfError, chromium_path

    try:
        chromium_path()
    except PdfError as exc:
        from helpers import require

        require(False, str(exc))
    folder = tmp_path_factory.mktemp("summary")
    path = folder / "lyon.yaml"
    path.write_text(SCENARIO)
    index = build_report(path, out_dir=folder / "report", chapters=["09"], progress=False, pdf=True)
    return Scenario.load(path), index


def test_the_index_is_titled_with_the_scenarios_name_and_starts_with_the_decision_page(report):
    scenario, index = report
    page = index.read_text()
    assert "<title>Serving desk for the Lyon legal team: accelkit report</title>" in page
    assert "<h1>Serving desk for the Lyon legal team</h1>" in page
    body = page.split("<body>", 1)[1]
    # the decision page comes first, before the chapters and the scenario
    assert body.index('id="decision-summary"') < body.index("<h2>Chapters</h2>") < body.index("<h2>The scenario</h2>")
    d = select.decision_summary(scenario)
    block = body[body.index('id="decision-summary"'):body.index("</section>")]
    assert f"<b>{d['runners_up'][0]['name']}</b>" in block
    from html import escape

    assert escape(d["order"]) in block and escape(d["total"]["text"]) in block and "over 24 months" in block
    assert "electricity $0.22 per kWh" in block and "Prices dated:" in block


def test_the_index_reads_as_a_document_not_a_dump(report):
    _, index = report
    page = index.read_text()
    scenario_table = page.split("<h2>The scenario</h2>", 1)[1]
    for raw in ("None", "[]", "{}", "params", "segments", "latency_target_ms"):
        assert f"<td>{raw}" not in scenario_table and f">{raw}<" not in scenario_table, raw
    assert "Latency target (per output token or frame)" in scenario_table and "30 ms" in scenario_table
    assert "Training tokens" not in scenario_table  # a serving scenario: training fields are left out
    assert 'href="decision-summary.pdf"' in page


def test_pdf_is_one_a4_page(report):
    _, index = report
    pdf = index.parent / "decision-summary.pdf"
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    count, boxes = _pages(data)
    assert count == 1, f"{count} pages"
    assert boxes and all(b[0] == 0 and b[1] == 0 and abs(b[2] - 595) < 2 and abs(b[3] - 842) < 2 for b in boxes), boxes


def test_pdf_prints_from_inside_a_running_asyncio_loop(tmp_path):
    """A Jupyter kernel (the app's "download report") runs an asyncio loop, where Playwright's sync
    API refuses to start; the PDF is printed from a thread of its own."""
    import asyncio

    from accelkit.decision_page import write_pdf
    from accelkit.select import decision_summary

    summary = decision_summary(Scenario(workload="inference", model="Llama-3.1 8B", deployment="cloud",
                                        latency_target_ms=50))

    async def inside_a_loop():
        return write_pdf(summary, tmp_path / "page.pdf")

    def in_a_thread_of_its_own():  # a fresh loop, whatever the session's main thread has running
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(inside_a_loop())
        finally:
            loop.close()

    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        data = pool.submit(in_a_thread_of_its_own).result().read_bytes()
    assert data.startswith(b"%PDF") and _pages(data)[0] == 1


def test_pdf_without_chromium_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    env = {**os.environ, "ACCELKIT_CHROMIUM": str(tmp_path / "no-chromium"), "PATH": str(Path(sys.executable).parent)}
    out = subprocess.run([sys.executable, "-m", "accelkit.cli", "report", "--scenario", str(path), "--pdf",
                          "--quiet", "--out", str(tmp_path / "r")], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "chromium" in lines[0] and "Traceback" not in out.stderr
    assert not (tmp_path / "r").exists()


def test_the_title_is_the_scenarios_name_else_the_files_stem_and_title_overrides(tmp_path):
    named = Scenario(name="GPU refresh 2027")
    assert report_title(named, "x/anything.yaml") == "GPU refresh 2027"
    assert report_title(named, "x/anything.yaml", title="Board paper") == "Board paper"
    unnamed = tmp_path / "cluster-for-q3.yaml"
    unnamed.write_text("workload: training\n")
    assert report_title(Scenario.load(unnamed), unnamed) == "cluster-for-q3"


def test_chinese_pdf_is_one_a4_page_printed_with_a_chinese_font(tmp_path):
    """``accelkit report --pdf --lang zh_CN``: chromium prints the Chinese page with a CJK font (Debian's
    fonts-noto-cjk, installed by make test); without one every character would be an empty box."""
    import concurrent.futures
    import shutil

    from accelkit import i18n
    from accelkit.decision_page import write_pdf
    from accelkit.select import decision_summary
    from helpers import require

    fonts = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout if shutil.which(
        "fc-list") else ""
    require(fonts.strip(), "a Chinese font (apt-get install -y fonts-noto-cjk)")
    with i18n.using("zh_CN"):
        summary = decision_summary(Scenario.load(Path(__file__).resolve().parents[1] / "examples"
                                                 / "serve-70b-at-latency-target.yaml"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            data = pool.submit(write_pdf, summary, tmp_path / "page.pdf").result().read_bytes()
    count, boxes = _pages(data)
    assert count == 1, f"the Chinese decision page printed on {count} pages, not one"
    assert boxes and all(abs(b[2] - 595) < 2 and abs(b[3] - 842) < 2 for b in boxes), boxes
    font_names = re.findall(rb"/FontName\s*/([^\s/]+)", data)
    assert any(b"CJK" in n or b"Noto" in n and b"SC" in n for n in font_names), (
        f"no Chinese font embedded in the PDF (fonts: {font_names})")
