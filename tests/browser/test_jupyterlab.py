"""The same panels live in JupyterLab: open a chapter, run it, change a control."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from servers import ROOT, free_port, serve, wait_for_port

from .conftest import snapshot, type_number, wait_for_change, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """JupyterLab on 127.0.0.1 with a throw-away copy of the notebooks (no token: tests only)."""
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    port = free_port()
    jupyter = shutil.which("jupyter") or str(Path(sys.executable).with_name("jupyter"))
    cmd = [jupyter, "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
           "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={work}",
           "--ServerApp.disable_check_xsrf=True", "--allow-root", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate"]
    with serve(cmd, work / "lab.log") as process:
        wait_for_port(port, timeout=90, process=process)
        yield f"http://127.0.0.1:{port}"


def test_demand_chapter_runs_and_updates_in_jupyterlab(page, lab_url):
    page.goto(f"{lab_url}/lab/tree/notebooks/01_demand.ipynb", timeout=120_000)
    page.wait_for_selector(".jp-Notebook", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-Toolbar", timeout=120_000)
    page.wait_for_timeout(2000)
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_selector(".ak-summary", timeout=120_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
    page.wait_for_timeout(1000)
    assert "Traceback" not in page.locator(".jp-Notebook").inner_text()
    before = snapshot(page)
    type_number(page, "finish within [days]", 3)
    wait_for_change(page, before, "titles")
    # the summary sentence is redrawn after the charts' titles (as in Voila's test_chapters): wait for both
    wait_until(page, lambda now: any("in 3 days" in t for t in now["titles"]) and "Finishing in 3 days" in now["summary"],
               "the charts' titles and the summary saying 'in 3 days'")
