"""`accelkit report`: HTML per chapter with an index, interactive charts, clear errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from accelkit.report import CHAPTERS, ReportError, build_report

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

pytestmark = pytest.mark.slow


def test_there_are_five_example_scenarios():
    names = {p.stem for p in EXAMPLES}
    assert {"finetune-7b-in-a-day", "serve-70b-at-latency-target", "recsys-8xa100-overbought",
            "smart-factory-edge-vision", "bert-inference-small-team"} <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_report_for_each_example_links_every_chapter_with_interactive_charts(example, tmp_path):
    index = build_report(example, out_dir=tmp_path / "report", progress=False)
    page = index.read_text()
    for _, stem, title in CHAPTERS:
        assert f'href="{stem}.html"' in page, f"the index does not link {stem}"
        html = (index.parent / f"{stem}.html").read_text()
        assert "Traceback" not in html and "ERROR:" not in html.split("</style>")[-1], f"{stem} shows an error"
        assert "hl-ipython3" not in html and "from accelkit" not in html, f"{stem} shows code"
    decision = (index.parent / "09_decision.html").read_text()
    assert decision.count("Plotly.newPlot") >= 2, "the decision chapter should carry interactive charts"
    assert (index.parent / "plotly.min.js").stat().st_size > 1_000_000, "plotly.js must ship with the report (offline)"
    assert "cdnjs.cloudflare.com/ajax/libs/require.js" not in decision
    assert "Shortlist for this scenario:" in page or "No device passes" in page


def test_seventy_b_report_never_recommends_a_24gb_card(tmp_path):
    index = build_report(ROOT / "examples" / "serve-70b-at-latency-target.yaml", out_dir=tmp_path / "r",
                         chapters=["09"], progress=False)
    rec = re.search(r'<p class="rec">(.*?)</p>', index.read_text()).group(1)
    for small in ("RTX 4090", "RTX 3090", "L4,", "A10G", "T4,"):
        assert small not in rec, f"a 24 GB card on the 70B shortlist: {rec}"


def test_bad_scenario_names_the_field_and_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("workload: inference\nbatch_size: -3\n")
    with pytest.raises(ReportError) as err:
        build_report(bad, out_dir=tmp_path / "out", progress=False)
    assert err.value.exit_code == 2 and "batch_size" in str(err.value)
    assert not (tmp_path / "out").exists()
    out = subprocess.run([sys.executable, "-m", "accelkit.cli", "report", "--scenario", str(bad), "--quiet"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2 and "batch_size" in out.stderr and "Traceback" not in out.stderr


def test_failing_chapter_is_named_and_leaves_nothing_behind(tmp_path):
    import nbformat

    broken = tmp_path / "notebooks"
    broken.mkdir()
    nb = nbformat.read(ROOT / "notebooks" / "00_catalogue.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("the GPU caught fire")'))
    nbformat.write(nb, broken / "00_catalogue.ipynb")
    with pytest.raises(ReportError) as err:
        build_report(ROOT / "examples" / "bert-inference-small-team.yaml", out_dir=tmp_path / "out", chapters=["00"],
                     progress=False, notebooks_dir=broken)
    assert err.value.exit_code == 1
    assert "chapter 00 (00_catalogue) failed: RuntimeError: the GPU caught fire" in str(err.value)
    assert not list(tmp_path.glob("out*")), "a failed report must not leave a folder behind"


@pytest.fixture
def port_taken_by_another_process(monkeypatch):
    """A port something else listens on, and a way to hand it to the next kernels as if it were free.

    jupyter_client picks a free port, closes it and passes it to the kernel; a process that binds it in between
    makes the kernel die at start-up with "Address already in use" (jupyter_client issue 487). ``give(n)`` makes
    the next ``n`` kernels receive that port for their shell channel; it returns the list of kernels that got it."""
    import socket

    from jupyter_client.connect import LocalPortCache

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    real = LocalPortCache.find_available_port
    handed = []
    left = [0]
    calls = [0]

    def find_available_port(self, ip):
        # a kernel asks for five ports in a row, its shell port first (one chapter at a time here); the held
        # port replaces the shell port while any are left to give
        first_of_five = calls[0] % 5 == 0
        calls[0] += 1
        if first_of_five and left[0] > 0:
            left[0] -= 1
            handed.append(taken)
            return taken
        return real(self, ip)

    def give(n):
        left[0] = n
        return handed

    monkeypatch.setattr(LocalPortCache, "find_available_port", find_available_port)
    yield give
    holder.close()


def test_a_chapter_whose_kernel_dies_at_start_up_runs_in_a_new_kernel(tmp_path, port_taken_by_another_process):
    handed = port_taken_by_another_process(1)
    index = build_report(ROOT / "examples" / "bert-inference-small-team.yaml", out_dir=tmp_path / "out",
                         chapters=["00"], progress=False)
    assert handed, "the test never gave a kernel the taken port, so it tried nothing"
    assert index.exists() and (tmp_path / "out" / "00_catalogue.html").exists(), (
        "a chapter whose first kernel could not bind its port must run in a second kernel, not fail the report")


def test_a_chapter_whose_kernel_never_starts_fails_naming_the_chapter(tmp_path, port_taken_by_another_process,
                                                                      monkeypatch):
    import accelkit.report as report

    monkeypatch.setattr(report, "_KERNEL_START_TRIES", 2)
    handed = port_taken_by_another_process(2)
    with pytest.raises(ReportError) as err:
        build_report(ROOT / "examples" / "bert-inference-small-team.yaml", out_dir=tmp_path / "out",
                     chapters=["00"], progress=False)
    assert len(handed) == 2, f"two kernels should have been tried, {len(handed)} were"
    assert "chapter 00 (00_catalogue): its kernel did not start in 2 tries" in str(err.value)
    assert not list(tmp_path.glob("out*")), "a failed report must not leave a folder behind"


def test_only_a_kernel_that_died_before_its_first_reply_is_started_again():
    from nbclient.exceptions import DeadKernelError

    from accelkit.report import _kernel_did_not_start

    assert _kernel_did_not_start(RuntimeError("Kernel died before replying to kernel_info"))
    assert not _kernel_did_not_start(DeadKernelError("Kernel died")), (
        "a kernel that died while running a chapter may have run part of it: that is a failure, not a retry")
    assert not _kernel_did_not_start(RuntimeError("the GPU caught fire"))


def test_input_error_inside_a_chapter_fails_the_report(tmp_path):
    bad = tmp_path / "tiny.yaml"
    bad.write_text("workload: inference\nmodel: Llama-2 7B\n")
    # chapter 07 with a zero latency target is an input error: the report fails and names it (an LLM
    # scenario: chapter 07 then runs its own camera example on the notebook's parameters; a vision
    # scenario's own latency target would replace the notebook's)
    with pytest.raises(ReportError, match="chapter 07 .*latency ms must be > 0"):
        build_report(bad, out_dir=tmp_path / "out", chapters=["07"], progress=False,
                     notebooks_dir=_with_parameter(tmp_path, "07_edge_inference", "latency_ms = 33.0", "latency_ms = 0.0"))


def _with_parameter(tmp_path, stem, old, new):
    import nbformat

    folder = tmp_path / "nb"
    folder.mkdir(exist_ok=True)
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            assert old in cell.source
            cell.source = cell.source.replace(old, new)
    nbformat.write(nb, folder / f"{stem}.ipynb")
    return folder


def test_unknown_model_in_a_scenario_is_a_bad_scenario(tmp_path):
    bad = tmp_path / "unknown-model.yaml"
    bad.write_text("model: Llama-9 1B\n")
    with pytest.raises(ReportError, match="scenario field 'model': unknown model 'Llama-9 1B'") as err:
        build_report(bad, out_dir=tmp_path / "out", chapters=["01"], progress=False)
    assert err.value.exit_code == 2


def test_report_folder_is_not_overwritten_without_force(tmp_path):
    example = ROOT / "examples" / "bert-inference-small-team.yaml"
    out = tmp_path / "r"
    build_report(example, out_dir=out, chapters=["00"], progress=False)
    with pytest.raises(ReportError, match="exists; choose another --out or pass --force"):
        build_report(example, out_dir=out, chapters=["00"], progress=False)
    build_report(example, out_dir=out, chapters=["00"], progress=False, force=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ReportError, match="not an accelkit report"):
        build_report(example, out_dir=mine, chapters=["00"], progress=False, force=True)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_unknown_chapter_is_rejected(tmp_path):
    with pytest.raises(ReportError, match="unknown chapter 'quantum'") as err:
        build_report(ROOT / "examples" / "bert-inference-small-team.yaml", out_dir=tmp_path / "x",
                     chapters=["quantum"], progress=False)
    assert err.value.exit_code == 2


def test_app_download_button_builds_the_report_and_offers_a_zip(tmp_path):
    import ipywidgets  # noqa: F401 (required: a missing one fails, never skips)
    from accelkit.scenario import Scenario
    from accelkit.ui.app import App

    app = App(Scenario.load(ROOT / "examples" / "bert-inference-small-team.yaml"))
    index = app.download_report(out_dir=tmp_path / "from-app")
    assert index.exists() and (index.parent / "09_decision.html").exists()
    assert 'href="data:application/zip;base64,' in app.report_status.value
    assert "Save the report" in app.report_status.value


def test_a_report_sized_for_the_measured_pace_says_so_and_keeps_the_new_target(tmp_path):
    """`--measured-demand`: the 8 × A100 at 30 % example sets the time target before any chapter runs."""
    example = ROOT / "examples" / "finetune-7b-in-a-day.yaml"
    index = build_report(example, out_dir=tmp_path / "r", chapters=["01"], progress=False, measured_demand="example")
    page = index.read_text()
    assert "Demand from your cluster" in page and "did the work of 2.40" in page, "the index must say the target came from the measurement"
    import json

    from accelkit.scenario import load

    saved = json.loads((index.parent / "scenario.json").read_text())
    assert saved["time_target_days"] != load(example).time_target_days, "the measured pace should replace the time target"


def test_a_bad_measured_demand_file_is_a_bad_input_exit_2(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(ReportError, match="field 'format'") as err:
        build_report(ROOT / "examples" / "finetune-7b-in-a-day.yaml", out_dir=tmp_path / "out", chapters=["01"],
                     progress=False, measured_demand=bad)
    assert err.value.exit_code == 2
    assert not (tmp_path / "out").exists()
