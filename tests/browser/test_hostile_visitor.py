"""A careless or hostile visitor of `accelkit app` (issue 26, findings 1, 2, 3, 10, 11).

The app is served with a data folder holding a log, and a link to a planted secret
file; the visitor types the secret's path into every text field there is, uploads an
oversized file, looks for the probe, and opens a user catalogue whose names are HTML.
Nothing of the secret reaches the page, nothing runs, the probe is off, and a killed
kernel leaves a message with a reload button.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from servers import accelkit_app, free_port, serve, wait_for_port

from .conftest import open_page, texts

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SECRET = "TOPSECRET-c0ffee-do-not-leak"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    secret = root / "server-only" / "shadow"
    secret.parent.mkdir()
    secret.write_text(f"root:{SECRET}:19000:0:99999:7:::\n")
    data = root / "data"
    data.mkdir()
    from accelkit import monitor as M

    (data / "gpu.csv").write_bytes(M.example_path(M.EXAMPLE_LOG).read_bytes())
    (data / "leak.csv").symlink_to(secret)
    return {"root": root, "secret": secret, "data": data}


@pytest.fixture(scope="module")
def hostile_app(planted, tmp_path_factory):
    """`accelkit app --data-dir DATA` (probes not allowed), no warm pool (a kernel per visit)."""
    port = free_port()
    log = tmp_path_factory.mktemp("voila") / "hostile-app.log"
    cmd = accelkit_app(port) + ["--data-dir", str(planted["data"]), "--pool-size", "0"]
    with serve(cmd, log) as process:
        wait_for_port(port, process=process)
        yield {"url": f"http://127.0.0.1:{port}/", "process": process, "log": log}


def _open_tab(page, name, ready_text):
    page.get_by_role("tab", name=name).click()
    page.wait_for_function(f"document.body.innerText.includes({ready_text!r})", timeout=90_000)


def _load(page):
    page.locator("button", has_text=re.compile(r"^\s*Load\s*$")).first.click()


def _body(page):
    return page.locator("body").inner_text()


def _no_secret(page):
    assert SECRET not in page.content(), "the planted secret reached the page"


def test_a_visitor_cannot_read_a_server_file_through_any_field(page, hostile_app, planted):
    open_page(page, hostile_app["url"] + "?tab=monitor", ready=".ak-summary", charts=False)
    page.wait_for_function("document.body.innerText.includes('Effective devices')", timeout=90_000)
    # the file fields are choices (built-in, upload, the data folder), not paths
    labels = [t.strip() for t in page.locator(".widget-text label").all_text_contents()]
    assert "log file" not in labels and "topology" not in labels, labels
    log_choice = page.locator(".widget-dropdown", has=page.locator("label", has_text=re.compile(r"^\s*log file\s*$")))
    options = [o.replace("\xa0", " ") for o in log_choice.first.locator("option").all_text_contents()]
    assert "data folder: gpu.csv" in options and not any("leak" in o for o in options), options
    # every text field that remains gets the secret's path; Load; nothing of it comes back
    fields = [box for box in page.locator(".widget-text input[type=text], .widget-text input:not([type])").all()
              if box.is_visible() and box.is_enabled()]
    assert fields, "expected the Prometheus and device fields"
    for box in fields:
        box.fill(str(planted["secret"]))
        box.press("Enter")
    _load(page)
    page.wait_for_timeout(2000)
    _no_secret(page)
    for box in fields:
        box.fill("")
        box.press("Enter")
    # the data folder's own log loads by name
    source = page.locator(".widget-dropdown", has=page.locator("label", has_text=re.compile(r"^\s*source\s*$")))
    source.first.locator("select").select_option(label="nvidia-smi log")
    log_choice.first.locator("select").select_option(label="data folder: gpu.csv")
    _load(page)
    page.wait_for_function("document.body.innerText.includes('Source: gpu.csv')", timeout=60_000)
    # an oversized upload is refused with a message, not a crash
    with page.expect_file_chooser() as chooser:
        page.locator("button.jupyter-widgets", has_text=re.compile(r"upload")).first.click()
    chooser.value.set_files(
        files=[{"name": "long.csv", "mimeType": "text/csv", "buffer": b"timestamp," + b"x" * (200 * 1024)}])
    _load(page)
    page.wait_for_function("document.body.innerText.includes('longer than 128 KiB')", timeout=60_000)
    _no_secret(page)
    # chapter 1's "my cluster" is a choice too
    _open_tab(page, "1 Demand", "Use my cluster")
    assert "my cluster" not in [t.strip() for t in page.locator(".widget-text label").all_text_contents()]
    _no_secret(page)


def test_saving_the_scenario_is_a_download_not_a_server_file(page, hostile_app):
    before = set(os.listdir(Path(__file__).resolve().parents[2] / "notebooks"))
    open_page(page, hostile_app["url"] + "?tab=demand", ready=".ak-summary", charts=False)
    page.get_by_role("button", name="Save scenario").first.click()
    link = page.locator('a.ak-download[download="scenario.json"]').first
    link.wait_for(timeout=30_000)
    assert link.get_attribute("href").startswith("data:application/json;base64,")
    assert "save scenario to" not in _body(page)
    assert set(os.listdir(Path(__file__).resolve().parents[2] / "notebooks")) == before


def test_the_probe_is_off_in_the_app_by_default(page, hostile_app):
    open_page(page, hostile_app["url"] + "?tab=probe", ready=".ak-summary", charts=False)
    page.wait_for_function("document.body.innerText.includes('This machine is the server here')", timeout=90_000)
    assert page.get_by_role("button", name=re.compile("Run probes")).is_disabled()
    assert "accelkit probe --json" in _body(page)


def test_a_killed_kernel_shows_a_reload_button(page, hostile_app):
    open_page(page, hostile_app["url"], ready="text=choose an AI accelerator", charts=False)
    kernel = re.search(r'"kernelId"\s*:\s*"([0-9a-f-]{36})"', page.content())
    assert kernel, "the page names no kernel"
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).find(kernel.group(1)) >= 0]
    assert pids, "the visitor's kernel process was not found"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    page.wait_for_selector("#ak-kernel-lost", timeout=60_000)
    assert "Reload" in page.locator("#ak-reload").inner_text()
    page.locator("#ak-reload").click()
    page.wait_for_selector("text=choose an AI accelerator", timeout=90_000)


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# --- a user catalogue whose names are HTML (chapter 00's panel) -----------------------------------

@pytest.fixture(scope="module")
def evil_catalogue_url(tmp_path_factory):
    import nbformat

    folder = tmp_path_factory.mktemp("evil")
    (folder / "evil.csv").write_text(
        "name,vendor,kind,segment,memory_gb,memory_bw_gbs,bf16_tflops,tdp_w,source_url\n"
        '"<img src=x onerror=""window.__xss=1"">Evil","<script>window.__xss=2</script>",gpu,datacenter,48,900,'
        "9999,300,javascript:window.__xss=3\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from accelkit.ui.catalogue import CataloguePanel\n"
                                          "CataloguePanel(catalog_path='evil.csv').show()")]
    nbformat.write(nb, folder / "evil.ipynb")
    port = free_port()
    voila = shutil.which("voila") or str(Path(sys.executable).with_name("voila"))
    cmd = [voila, str(folder / "evil.ipynb"), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1"]
    with serve(cmd, folder / "voila.log") as process:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/"


def test_html_in_a_user_catalogue_is_shown_as_text_and_runs_nothing(page, evil_catalogue_url):
    open_page(page, evil_catalogue_url, ready=".ak-table")
    page.wait_for_function("document.body.innerText.includes('Evil')", timeout=60_000)
    time.sleep(1)
    assert page.evaluate("window.__xss") is None, "markup from the catalogue ran in the page"
    table = " ".join(texts(page, ".ak-table"))
    assert '<img src=x onerror="window.__xss=1">Evil' in table and "<script>window.__xss=2</script>" in table
    assert page.locator('.ak-table a[href^="javascript"]').count() == 0
    assert "javascript:window.__xss=3" in table
