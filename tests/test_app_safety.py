"""The app is safe to serve (issue 26, findings 1, 2, 3, 10, 11), without a browser.

A visitor names no server path (uploads, built-in examples, the operator's data folder);
every file is capped; saves and reports leave as downloads; user strings are escaped;
the probes, the audit and live sampling are off in the served app unless its operator
allows them. The browser side is tests/browser/test_hostile_visitor.py.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest

import ipywidgets as W  # noqa: E402

from accelkit import monitor as M  # noqa: E402
from accelkit import userfiles as U  # noqa: E402

SECRET = "TOPSECRET-7f3a9 root:$6$hash:19000:0:99999:7:::"


@pytest.fixture
def secret(tmp_path):
    """A secret file outside the data folder, as /etc/shadow or a .env would be."""
    path = tmp_path / "outside" / "shadow"
    path.parent.mkdir()
    path.write_text(SECRET + "\n")
    return path


@pytest.fixture
def data_dir(tmp_path, secret, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "gpu.csv").write_bytes(M.example_path(M.EXAMPLE_LOG).read_bytes())
    (folder / "topo.txt").write_bytes(M.example_path(M.EXAMPLE_TOPOLOGY).read_bytes())
    (folder / "leak.csv").symlink_to(secret)
    (folder / "zero.csv").symlink_to("/dev/zero")
    (folder / ".hidden.csv").write_text("x")
    monkeypatch.setenv(U.DATA_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def served(monkeypatch):
    monkeypatch.setenv(U.SERVED_ENV, "1")
    monkeypatch.delenv(U.ALLOW_PROBES_ENV, raising=False)


def _widgets(root):
    """Every widget under ``root`` (children of boxes and tabs)."""
    seen, stack = [], [root]
    while stack:
        w = stack.pop()
        seen.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    return seen


PATH_FIELDS = {"log file", "topology", "my cluster", "save scenario to", "save results to"}


# --- finding 1: visitors never name server paths ---------------------------------------------------

def test_no_panel_has_a_text_field_that_takes_a_server_path():
    from accelkit.ui.demand import DemandPanel
    from accelkit.ui.monitor import MonitorPanel
    from accelkit.ui.probe import ProbePanel

    for panel in (DemandPanel(), MonitorPanel(), ProbePanel()):
        texts = [w.description for w in _widgets(panel.widget) if isinstance(w, (W.Text, W.Textarea))]
        assert not PATH_FIELDS & set(texts), f"{type(panel).__name__} still takes a path: {texts}"
        uploads = [w for w in _widgets(panel.widget) if isinstance(w, W.FileUpload)]
        assert uploads, f"{type(panel).__name__} offers no upload"


def test_the_data_folder_resolves_file_names_only_inside_it(data_dir, secret):
    assert U.resolve_data_file("gpu.csv") == (data_dir / "gpu.csv").resolve()
    assert U.data_files() == ["gpu.csv", "topo.txt"], "links out of the folder, devices and hidden files are not listed"
    refused = ["../outside/shadow", str(secret), "/etc/passwd", "leak.csv", "zero.csv", ".hidden.csv", "..", ".",
               "", "sub/gpu.csv", "gpu.csv\x00", "a" * 300]
    messages = set()
    for name in refused:
        with pytest.raises(U.InputError) as err:
            U.read_data_file(name)
        text = str(err.value)
        assert SECRET[:10] not in text and "TOPSECRET" not in text
        assert len(text) < 200
        messages.add(re.sub(r"'[^']*'…?", "NAME", text))
    # a file outside that exists and one that does not read the same
    with pytest.raises(U.InputError) as a:
        U.resolve_data_file("../outside/shadow")
    with pytest.raises(U.InputError) as b:
        U.resolve_data_file("../outside/nothing-here")
    assert str(a.value).replace("shadow", "X") == str(b.value).replace("nothing-here", "X")
    assert messages == {"no file NAME in the app's data folder; choose one of its files or upload one"}


def test_without_a_data_folder_a_name_is_refused_naming_the_operator_switch(monkeypatch):
    monkeypatch.delenv(U.DATA_DIR_ENV, raising=False)
    with pytest.raises(U.InputError, match="--data-dir"):
        U.resolve_data_file("gpu.csv")
    assert U.data_files() == []


def test_a_quoted_bad_value_is_cut_to_40_characters():
    assert U.quote("x" * 100) == repr("x" * 40) + "…"
    assert U.quote("short") == "'short'"


def test_monitor_reads_an_uploaded_log_in_memory_and_a_data_folder_file(data_dir):
    from accelkit.ui.monitor import MonitorPanel

    panel = MonitorPanel()
    panel.source_controls["source"].value = "nvidia-smi log"
    panel.log_picker.give("node1.csv", M.example_path(M.EXAMPLE_LOG).read_bytes())
    panel.load()
    assert panel.error is None, panel.error
    assert "effective devices: 2.40" in panel.key_figures() and "source: node1.csv" in panel.key_figures()
    options = dict((v, k) for k, v in panel.log_picker.choice.options)
    assert ("data", "gpu.csv") in options and ("data", "leak.csv") not in options
    panel.log_picker.choice.value = ("data", "gpu.csv")
    panel.topology_picker.choice.value = ("data", "topo.txt")
    panel.load()
    assert panel.error is None and "topology warnings" in panel.key_figures()


def test_a_bad_upload_quotes_no_server_file_and_a_secret_cannot_be_read(data_dir, secret):
    from accelkit.ui.demand import DemandPanel
    from accelkit.ui.monitor import MonitorPanel

    panel = MonitorPanel()
    with pytest.raises((ValueError, TypeError)):
        panel.log_picker.choice.value = ("data", "leak.csv")  # not offered, so not choosable
    panel.source_controls["source"].value = "nvidia-smi log"
    panel.log_picker.choice.value = ("data", "gpu.csv")
    (data_dir / "gpu.csv").unlink()  # after the list was made, the name turns into a link to the secret
    (data_dir / "gpu.csv").symlink_to(secret)
    panel.load()
    assert panel.error and "TOPSECRET" not in panel.message.value and "no file 'gpu.csv'" in panel.error
    demand = DemandPanel()
    demand.measured_picker.give("mine.json", b'{"format": "something else"}')
    demand.use_measured()
    assert "'mine.json' is not a summary written by `accelkit monitor --json`" in demand.error


def test_chapter_01_takes_an_uploaded_monitor_summary(tmp_path, capsys):
    from accelkit.cli import main
    from accelkit.scenario import Scenario
    from accelkit.ui.demand import DemandPanel

    target = tmp_path / "summary.json"
    assert main(["monitor", "--example", "--json", str(target)]) == 0
    capsys.readouterr()
    panel = DemandPanel(Scenario(workload="training", model="Llama-2 7B", tokens=2e10, time_target_days=30))
    panel.measured_picker.give("summary.json", target.read_bytes())
    assert panel.measured_controls["source"].value == ("upload", "")
    panel.measured_controls["button"].click()
    assert panel.error is None, panel.error
    assert "did the work of 2.40" in panel.measured_note


def test_probe_results_upload_shows_them(tmp_path):
    from accelkit import probes
    from accelkit.ui.probe import ProbePanel

    example = probes.load_example_results()
    panel = ProbePanel()
    panel.results_picker.give("laptop.json", probes.results_json(example))
    assert panel.error is None, panel.error
    assert "results source: laptop.json" in panel.key_figures()
    panel.results_picker.give("bad.json", "{not json")
    assert "&#x27;bad.json&#x27; is not a JSON file of probe results" in panel.message.value


# --- finding 2: limits -------------------------------------------------------------------------------

def test_dev_zero_is_refused_with_a_clear_message_not_a_memory_error():
    with pytest.raises(U.InputError, match="not a regular file"):
        U.read_limited("/dev/zero")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(U.InputError, match="not a regular file"):
        U.read_limited(fifo)


def test_files_over_the_byte_line_and_line_length_caps_are_refused(tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(U.MAX_BYTES + 1)
    with pytest.raises(U.InputError, match="larger than 8 MiB"):
        U.read_limited(big)
    with pytest.raises(U.InputError, match="larger than 8 MiB"):
        U.check_text(b"a" * (U.MAX_BYTES + 1))
    with pytest.raises(U.InputError, match="more than 200,000 lines"):
        U.check_text(b"\n" * (U.MAX_LINES + 1))
    with pytest.raises(U.InputError, match="line 2 is longer than 128 KiB"):
        U.check_text(b"ok\n" + b"x" * (U.MAX_LINE_BYTES + 1))
    with pytest.raises(U.InputError, match="NUL bytes"):
        U.check_text(b"\x00" * 10)
    assert U.check_text(b"a,b\n1,2\n") == "a,b\n1,2\n"


def test_an_upload_over_the_cap_is_a_message_in_the_page():
    from accelkit.ui.monitor import MonitorPanel

    panel = MonitorPanel()
    panel.source_controls["source"].value = "nvidia-smi log"
    panel.log_picker.give("huge.csv", b"0" * (U.MAX_BYTES + 10))
    panel.load()
    assert "upload &#x27;huge.csv&#x27; is larger than 8 MiB" in panel.message.value
    panel.log_picker.give("long.csv", b"timestamp," + b"x" * (U.MAX_LINE_BYTES + 1))
    panel.load()
    assert "line 1 is longer than 128 KiB" in panel.message.value


# --- finding 3: saves and reports leave as downloads ----------------------------------------------

def _link_payload(html_text):
    match = re.search(r'download="([^"]+)" href="data:[^;]+;base64,([^"]+)"', html_text)
    assert match, html_text[:200]
    return match.group(1), base64.b64decode(match.group(2)).decode("utf-8")


def test_save_scenario_hands_a_download_and_writes_no_file(tmp_path, monkeypatch):
    from accelkit.scenario import Scenario
    from accelkit.ui.demand import DemandPanel

    monkeypatch.chdir(tmp_path)
    panel = DemandPanel(Scenario(model="Llama-2 70B"))
    panel.widget  # builds the save box
    panel.save_controls["button"].click()
    name, text = _link_payload(panel.save_controls["status"].value)
    assert name == "scenario.json" and '"model": "Llama-2 70B"' in text
    assert Scenario.from_dict({k: v for k, v in __import__("json").loads(text).items()
                               if k != "accelkit-scenario"}).model == "Llama-2 70B"
    panel.save_controls["format"].value = "yaml"
    panel.save_controls["button"].click()
    name, text = _link_payload(panel.save_controls["status"].value)
    assert name == "scenario.yaml" and "model: Llama-2 70B" in text
    assert list(tmp_path.iterdir()) == [], "nothing may be written on the server"


def test_save_probe_results_hands_a_download(tmp_path, monkeypatch):
    from accelkit import probes
    from accelkit.ui.probe import ProbePanel

    monkeypatch.chdir(tmp_path)
    panel = ProbePanel()
    panel.save_button.click()
    name, text = _link_payload(panel.save_status.value)
    assert name == "my_probe_results.json"
    assert len(probes.results_from_text(text)) == len(panel.results)
    assert list(tmp_path.iterdir()) == []


def test_download_report_renders_in_a_temporary_folder_that_is_removed(tmp_path, monkeypatch):
    import accelkit.report as report
    from accelkit.scenario import Scenario
    from accelkit.ui.app import App

    seen = {}

    def fake_build_report(scenario, out_dir=None, progress=True, **_):
        out = Path(out_dir)
        out.mkdir(parents=True)
        (out / "index.html").write_text("<h1>report</h1>")
        (out / "executed").mkdir()
        (out / "executed" / "01.ipynb").write_text("{}")
        seen["out"] = out
        return out / "index.html"

    monkeypatch.setattr(report, "build_report", fake_build_report)
    monkeypatch.chdir(tmp_path)
    app = App(Scenario())
    app.download_report()
    out = seen["out"]
    assert not out.exists() and not out.parent.exists(), "the visit's temporary folder must be removed"
    assert not (tmp_path / "reports").exists() and list(tmp_path.iterdir()) == []
    assert 'href="data:application/zip;base64,' in app.report_status.value
    assert "also written to" not in app.report_status.value
    import io
    import zipfile

    names = zipfile.ZipFile(io.BytesIO(app.report_zip)).namelist()
    assert names == [f"{out.name}/index.html"]


def test_a_failed_report_removes_its_temporary_folder_too(monkeypatch):
    import accelkit.report as report
    from accelkit.scenario import Scenario
    from accelkit.ui.app import App

    seen = {}

    def failing(scenario, out_dir=None, **_):
        seen["out"] = Path(out_dir)
        Path(out_dir).mkdir(parents=True)
        raise report.ReportError("chapter 09 failed")

    monkeypatch.setattr(report, "build_report", failing)
    app = App(Scenario())
    assert app.download_report() is None
    assert "the report failed" in app.report_status.value and not seen["out"].parent.exists()


# --- finding 10: escaping --------------------------------------------------------------------------

XSS_NAME = '<img src=x onerror="window.__xss=1">Evil'


def test_user_catalogue_names_and_vendors_are_escaped_and_only_http_links_become_links():
    from accelkit.catalog import load_catalog
    from accelkit.ui.catalogue import CataloguePanel

    cat = load_catalog().copy()
    first = cat.index[0]
    cat.loc[first, "name"] = XSS_NAME
    cat.loc[first, "vendor"] = "<script>alert(1)</script>"
    cat.loc[first, "source_url"] = "javascript:alert(document.cookie)"
    panel = CataloguePanel(catalog=cat)
    table = panel.result["tables"]["devices"]
    assert "<img" not in table and "<script" not in table
    assert "&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;Evil" in table
    assert 'href="javascript' not in table and "javascript:alert(document.cookie)" in table


def test_safe_link_makes_links_of_http_urls_only():
    from accelkit.ui._base import safe_link

    assert safe_link("https://example.com/a?b=<c>").startswith('<a href="https://example.com/a?b=&lt;c&gt;"')
    for bad in ("javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<script>", "//evil.example/x"):
        assert "<a" not in safe_link(bad) and "<script" not in safe_link(bad)
    assert safe_link(None) == "" and safe_link(float("nan")) == ""


def test_the_app_template_shows_a_reload_button_when_the_kernel_is_gone():
    from accelkit.appserver import voila_environment

    template = Path(voila_environment({})["JUPYTER_PATH"].split(os.pathsep)[0]) / "voila" / "templates" / "accelkit"
    text = (template / "index.html.j2").read_text()
    assert "ak-kernel-lost" in text and "location.reload()" in text and "execution_state" in text
    assert "https://" not in text.split("html_head_js -%}", 1)[-1], "the page fetches nothing from outside"


# --- finding 11: served, "this machine" is the server ------------------------------------------------

def test_served_the_probe_is_off_unless_allowed(served, monkeypatch):
    from accelkit import probes
    from accelkit.ui.probe import ProbePanel

    monkeypatch.setattr(probes, "run_all", lambda **_: pytest.fail("the probe ran on the server"))
    panel = ProbePanel()
    assert panel.run_button.disabled and panel.controls["device"].disabled
    assert "accelkit probe --json" in panel.install.value and "--allow-probes" in panel.install.value
    assert panel.run() is None and "probing is off in this app" in panel.message.value
    assert ProbePanel(run_now=True).results is not None, "run_now shows the example instead"


def test_served_with_allow_probes_the_probe_says_it_measures_the_server(served, monkeypatch):
    pytest.importorskip("torch")
    from accelkit.ui.probe import ProbePanel

    monkeypatch.setenv(U.ALLOW_PROBES_ENV, "1")
    panel = ProbePanel()
    assert "measures the server" in panel.run_button.description and not panel.run_button.disabled
    assert panel.controls["quick"].value is True and panel.controls["quick"].disabled, "bounded: quick mode only"


def test_served_the_ecosystem_audit_is_off_unless_allowed(served, monkeypatch):
    import accelkit.ui.ecosystem as eco

    monkeypatch.setattr(eco, "audit_local", lambda **_: pytest.fail("the server was audited"))
    panel = eco.EcosystemPanel()
    assert panel.audit is None and "audit" not in panel.result["tables"]
    html_text = " ".join(w.value for w in _widgets(panel.widget) if isinstance(w, W.HTML))
    assert "This machine is the server here" in html_text
    monkeypatch.setenv(U.ALLOW_PROBES_ENV, "1")
    monkeypatch.setattr(eco, "audit_local", lambda **_: {"stub": True})
    monkeypatch.setattr(eco.EcosystemPanel, "_audit_html", lambda self: "<b>This machine: the server</b>")
    assert eco.EcosystemPanel().audit == {"stub": True}


def test_served_live_sampling_is_off_unless_allowed_and_bounded_when_on(served, monkeypatch):
    import accelkit.monitor as monitor
    from accelkit.ui.monitor import MonitorPanel

    monkeypatch.setattr(monitor, "sample", lambda **_: pytest.fail("the server was sampled"), raising=False)
    panel = MonitorPanel()
    values = [v for _, v in panel.source_controls["source"].options]
    assert "sample this machine" not in values and panel.source_controls["seconds"].disabled
    assert "live" not in [v for _, v in panel.topology_picker.choice.options]
    with pytest.raises(ValueError, match="--allow-probes"):
        MonitorPanel(source="sample this machine")
    monkeypatch.setenv(U.ALLOW_PROBES_ENV, "1")
    allowed = MonitorPanel()
    labels = dict((v, k) for k, v in allowed.source_controls["source"].options)
    assert "measures the server" in labels["sample this machine"]
    allowed.source_controls["seconds"].value = 3600
    allowed.source_controls["source"].value = "sample this machine"
    allowed.load()
    assert "expected a number of seconds in (0, 60]" in allowed.message.value


def test_in_a_notebook_the_probes_stay_on(monkeypatch):
    monkeypatch.delenv(U.SERVED_ENV, raising=False)
    assert U.probes_allowed() and not U.served() and U.max_probe_seconds() == 3600


def test_accelkit_app_tells_the_kernels_they_are_served_and_passes_the_switches(tmp_path, monkeypatch):
    from accelkit import cli

    captured = {}
    monkeypatch.setattr(os, "execve", lambda path, argv, env: captured.update(env=env))
    monkeypatch.setenv(U.ALLOW_PROBES_ENV, "1")  # the operator's shell must not switch probes on by itself
    assert cli.main(["app", "--port", "8999"]) in (None, 0)
    env = captured["env"]
    assert env[U.SERVED_ENV] == "1" and env[U.ALLOW_PROBES_ENV] == "" and env[U.DATA_DIR_ENV] == ""
    assert cli.main(["app", "--port", "8999", "--allow-probes", "--data-dir", str(tmp_path)]) in (None, 0)
    env = captured["env"]
    assert env[U.ALLOW_PROBES_ENV] == "1" and env[U.DATA_DIR_ENV] == str(tmp_path.resolve())
    assert cli.main(["app", "--data-dir", str(tmp_path / "missing")]) == 2
