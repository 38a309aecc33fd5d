"""Every chapter runs headless with papermill, on defaults and with non-default
parameters, and a key printed figure changes accordingly.

(nbval checks the committed outputs separately: ``pytest --nbval notebooks``.)
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

pytestmark = pytest.mark.notebook


def run(tmp_path, notebook, **parameters):
    out = tmp_path / f"{Path(notebook).stem}-out.ipynb"
    pm.execute_notebook(
        str(NOTEBOOKS / notebook), str(out), parameters=parameters, cwd=str(tmp_path),
        kernel_name="python3", progress_bar=False, execution_timeout=180,
    )
    nb = nbformat.read(out, as_version=4)
    text = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text.append(output["text"])
            elif output.get("output_type") == "error":
                raise AssertionError(f"{notebook} raised {output['ename']}: {output['evalue']}")
    return "".join(text), nb


def figure(text, label):
    """The number printed after ``label:`` in a check cell."""
    match = re.search(rf"^{re.escape(label)}: ([^\n]+)$", text, flags=re.M)
    assert match, f"the check cell did not print '{label}:'; it printed:\n{text[:2000]}"
    return match.group(1).strip()


def test_every_notebook_has_a_parameters_cell_and_references():
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, f"{path.name} needs exactly one cell tagged 'parameters'"
        assert "chapter_references" in nb.cells[-1].source, f"{path.name}: the last cell should list the references"
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert not re.search(r"^\s*(def|class) ", code, flags=re.M), f"{path.name}: notebooks stay thin (no def/class)"


def test_committed_notebooks_are_executed_and_small():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        if path.name == "app.ipynb":
            continue
        nb = nbformat.read(path, as_version=4)
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        assert all(counts), f"{path.name} is committed unexecuted: nbval would check nothing"
        assert path.stat().st_size < 300_000, f"{path.name} is {path.stat().st_size} bytes: store outputs without plotly.js"


def test_catalogue_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "00_catalogue.ipynb")
    from accelkit import load_catalog

    assert int(figure(text, "devices shown")) == len(load_catalog())


def test_catalogue_notebook_with_filters_changes_the_figures(tmp_path):
    default, _ = run(tmp_path, "00_catalogue.ipynb")
    text, _ = run(tmp_path, "00_catalogue.ipynb", segments=["edge"], precision="int8", min_memory_gb=4.0)
    assert int(figure(text, "devices shown")) < int(figure(default, "devices shown"))
    assert figure(text, "highest int8").split()[0] != figure(default, "highest bf16").split()[0]


def test_catalogue_notebook_reads_a_user_csv(tmp_path):
    csv = tmp_path / "extra.csv"
    csv.write_text(
        "name,vendor,kind,segment,memory_gb,memory_bw_gbs,bf16_tflops,tdp_w,source_url\n"
        "Lab Card X,Acme,gpu,datacenter,48,900,9999,300,internal benchmark\n"
    )
    text, _ = run(tmp_path, "00_catalogue.ipynb", catalog_path=str(csv))
    assert figure(text, "highest bf16") == "Lab Card X 9999.0"


def test_demand_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "01_demand.ipynb")
    assert figure(text, "total compute [FLOP]") == "8.09e+20"  # 6 × 6.74e9 × 2e10
    assert figure(text, "source-text formula [FLOP/s]") == "9.6e+10"


def test_demand_notebook_with_other_model_and_target(tmp_path):
    text, _ = run(tmp_path, "01_demand.ipynb", model="Llama-2 13B", tokens=1e11, time_target_days=10,
                  utilization=0.5, devices=["H100 SXM", "A100 80GB SXM"])
    assert figure(text, "total compute [FLOP]") == "7.8e+21"  # 6 × 13e9 × 1e11
    # 7.8e21 FLOP in 10 days = 9028 TFLOP/s
    assert float(figure(text, "compute needed [TFLOP/s]")) == pytest.approx(9027.8, rel=1e-3)
    assert int(figure(text, "devices needed on H100 SXM")) >= 19  # 9028 / (989.5 × 0.5) = 18.2 -> 19


def test_demand_notebook_rejects_a_bad_parameter_with_the_field_name(tmp_path):
    with pytest.raises(Exception) as err:
        run(tmp_path, "01_demand.ipynb", batch_size=0)
    assert "batch_size" in str(err.value)


def test_roofline_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "02_bandwidth_roofline.ipynb")
    assert figure(text, "ridge point H100 SXM [FLOP/B]") == "295"  # 989.5e12 / 3.35e12
    assert figure(text, "ridge point A100 80GB SXM [FLOP/B]") == "153"  # 312e12 / 2.039e12
    assert figure(text, "BERT claim, T4 faster than V100 at some batch") == "no"


def test_roofline_notebook_batch_and_precision_change_the_intensity(tmp_path):
    default, _ = run(tmp_path, "02_bandwidth_roofline.ipynb")
    text, _ = run(tmp_path, "02_bandwidth_roofline.ipynb", model="Llama-2 70B", batch_size=64,
                  precision="fp8", devices=["H100 SXM", "Instinct MI300X"])
    label = "LLM decode step (batch 64) intensity [FLOP/B]"
    # fp8 weights (1 byte) double the FLOP per byte; GQA keeps the KV cache small
    assert float(figure(text, label)) > 2 * float(figure(default, "LLM decode step (batch 16) intensity [FLOP/B]"))
    assert figure(text, "precision") == "fp8"


def test_precision_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "03_precision.ipynb")
    assert figure(text, "T4 fp16 speed-up over fp32") == "8.0"  # 65 / 8.1 TFLOP/s (T4 datasheet)
    assert figure(text, "fp16 gradients lost without loss scaling") != "0.0%"
    assert figure(text, "bf16 gradients lost without loss scaling") == "0.0%"


def test_precision_notebook_assumptions_change_the_loss_scaling_result(tmp_path):
    text, _ = run(tmp_path, "03_precision.ipynb", median_log2=-12.0, spread_log2=1.0, workload="inference",
                  model="Llama-2 70B")
    # gradients around 2^-12 are well inside fp16's range: nothing underflows
    assert figure(text, "fp16 gradients lost without loss scaling") == "0.0%"
    assert figure(text, "memory in int4 [GB]") == "35.0"


def test_energy_tco_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "05_energy_tco.ipynb")
    assert figure(text, "A100 TFLOP/s per W (article 0.78)") == "0.78"  # 312 / 400 W, datasheet
    # one $249 Jetson Orin Nano Super: 249 + 36 × (25 W × 24 h × 30.44 d × $0.15/kWh + 10 %/yr of 249)
    assert figure(text, "edge total [USD]") == "422"
    # one T4 instance at $0.526/h around the clock for 36 months
    assert figure(text, "cloud total [USD]") == "13,833"


def test_energy_tco_notebook_assumptions_move_the_verdict(tmp_path):
    text, _ = run(tmp_path, "05_energy_tco.ipynb", streams=200, edge_device="Jetson AGX Orin 64GB",
                  edge_unit_price_usd=5000.0, maintenance_per_year=0.25, horizon_months=24, uplink_mbps=4.0)
    assert figure(text, "streams") == "200"
    assert int(figure(text, "edge units")) == 5
    assert figure(text, "edge saving (article 62%)") != "97%"
    # a 150 kB frame over 4 Mbit/s alone takes 300 ms
    assert int(figure(text, "cloud latency [ms]")) > 300


def test_scenario_saved_in_chapter_01_is_used_in_chapter_05(tmp_path):
    saved = tmp_path / "scenario.json"
    run(tmp_path, "01_demand.ipynb", model="Llama-2 13B", deployment="edge", save_scenario_to=str(saved))
    assert saved.exists()
    text, _ = run(tmp_path, "05_energy_tco.ipynb", scenario_path=str(saved))
    assert figure(text, "model") == "Llama-2 13B (1.3e+10 parameters)"
    assert figure(text, "deployment") == "edge"


def test_cluster_notebook_defaults_rebuild_the_source_texts_cluster(tmp_path):
    text, _ = run(tmp_path, "06_training_cluster.ipynb")
    assert figure(text, "devices") == "64 in 8 servers"
    # 13.5 GB of bf16 gradients, hierarchical all-reduce (Jia et al. 2018): inside the server
    # 2·7/8·13.5e9 B over NVLink's 300 GB/s at the published 77.7 % bus efficiency (233 GB/s) = 101 ms,
    # across servers 2·7/8·(13.5e9/8) B over 200 Gb/s = 25 GB/s = 118 ms: 219 ms before overlap
    total = float(figure(text, "all-reduce per step [s]"))
    assert 0.215 <= total <= 0.225, total
    assert float(figure(text, "all-reduce exposed after overlap [s]")) < total


def test_cluster_notebook_slower_network_lowers_efficiency(tmp_path):
    default, _ = run(tmp_path, "06_training_cluster.ipynb")
    text, _ = run(tmp_path, "06_training_cluster.ipynb", network_gbps=10.0, n_devices=256, device="L40S")
    assert figure(text, "devices") == "256 in 32 servers"
    eff = float(figure(text, "scaling efficiency").rstrip("%"))
    assert eff < float(figure(default, "scaling efficiency").rstrip("%"))


def test_edge_notebook_defaults(tmp_path):
    text, _ = run(tmp_path, "07_edge_inference.ipynb")
    from accelkit.projection.constants import constants

    k = constants()
    # one YOLOv8s frame (28.8 GFLOP, 11.17 MB int8 weights) on an Orin Nano Super at 0.3 of 33 TOP/s:
    # 2.909 ms compute + the unhidden share of 0.138 ms weights (80.95 GB/s) + a fused ResNet-50-deep net's 56 kernels,
    # each vision_kernel_cycles_fused cycles at its MAXN_SUPER mode's 1,020 MHz (data/edge_power_modes.csv)
    ms = 2.909091 + (1 - k["roofline_overlap"]) * 0.137943 + 56 * k["vision_kernel_cycles_fused"] / 1020e6 * 1e3
    # -> about 286 frames/s; 10 × 30 = 300 frames/s -> 2 units
    assert figure(text, "Jetson Orin Nano Super 8GB") == f"2 unit(s), {ms:.2f} ms per frame (meets every target)"
    # over the 30 W envelope at its top mode, it runs in its 30W nvpmodel mode (4 of 8 TPCs at 612 of 1,300 MHz,
    # the DLAs at 1,369.6 of 1,600): the chapter prints the mode's units, frame time and verdict
    agx = figure(text, "Jetson AGX Orin 64GB")
    from accelkit import load_catalog, sizing

    mode = sizing.edge_fit(load_catalog(), streams=10, fps=30, utilization=0.3, power_w=30, budget_usd=5000,
                           devices=["Jetson AGX Orin 64GB"]).iloc[0]
    assert mode["run_mode"] == "30W"
    verdict = "meets every target in its 30W power mode" if mode["meets"] else mode["reason"]
    assert agx == f"{mode['units']:.0f} unit(s), {mode['frame_ms']:.2f} ms per frame ({verdict})", agx


def test_edge_notebook_more_cameras_and_a_bigger_model_need_more_units(tmp_path):
    text, _ = run(tmp_path, "07_edge_inference.ipynb", streams=40, model="YOLOv8m", power_w=80.0)
    from accelkit.projection.constants import constants

    k = constants()
    # YOLOv8m on the AGX Orin: 79.3e9 / (137.5e12 × 0.3) = 1.922 ms + the unhidden share of 0.159 ms weights
    # + 56 fused kernels at MAXN's 1,300 MHz -> about 390 frames/s; 40 × 30 = 1,200 frames/s -> ceil(3.1) = 4 units,
    # and now fits 80 W
    ms = 1.922 + (1 - k["roofline_overlap"]) * 0.159 + 56 * k["vision_kernel_cycles_fused"] / 1300e6 * 1e3
    assert figure(text, "Jetson AGX Orin 64GB").startswith(f"4 unit(s), {ms:.2f} ms per frame")
    assert "60 W per box" not in figure(text, "Jetson AGX Orin 64GB")


def test_demand_notebook_uses_my_measurements(tmp_path):
    """Calibration: a measured matmul rate replaces the published efficiency of that device."""
    import pandas as pd

    from accelkit import probes

    # a synthetic results file as `accelkit probe --json` would write it on an H100 (values made up for the test)
    frame = pd.DataFrame([{c: "" for c in probes.COLUMNS}])
    frame.loc[0, ["probe", "dtype", "shape", "unit", "device", "device_name"]] = [
        "matmul", "bf16", "8192x8192x8192", "FLOP/s", "cuda:0", "NVIDIA H100 80GB HBM3"]
    frame["measured"], frame["datasheet"], frame["ratio"] = 600e12, 989.5e12, 600 / 989.5
    path = probes.save_results(frame, tmp_path / "h100.json")
    text, _ = run(tmp_path, "01_demand.ipynb", measured_results=str(path), use_measurements=True)
    default, _ = run(tmp_path, "01_demand.ipynb")
    days = lambda t: float(figure(t, "days on 8 × H100 SXM").split()[0])  # noqa: E731
    # the published H100 figure is 792 TFLOP/s; this "probe" measured 600: the job takes longer
    assert days(text) > 1.15 * days(default), (days(text), days(default))
    assert "Using your measurements" in text


def test_roofline_notebook_uses_my_measurements(tmp_path):
    import pandas as pd

    from accelkit import probes

    # synthetic results as `accelkit probe --json` writes them on an H100 (values made up for the test)
    rows = [{c: "" for c in probes.COLUMNS} for _ in range(2)]
    frame = pd.DataFrame(rows)
    frame.loc[0, ["probe", "dtype", "shape", "unit", "device", "device_name"]] = [
        "matmul", "bf16", "8192x8192x8192", "FLOP/s", "cuda:0", "NVIDIA H100 80GB HBM3"]
    frame.loc[1, ["probe", "dtype", "shape", "unit", "device", "device_name"]] = [
        "memory_read", "fp32", "1 GiB", "bytes/s", "cuda:0", "NVIDIA H100 80GB HBM3"]
    frame["measured"] = [600e12, 1.675e12]
    frame["datasheet"] = [989.5e12, 3.35e12]
    frame["ratio"] = frame["measured"] / frame["datasheet"]
    path = probes.save_results(frame, tmp_path / "h100.json")
    default, _ = run(tmp_path, "02_bandwidth_roofline.ipynb", devices=["H100 SXM"])
    measured, _ = run(tmp_path, "02_bandwidth_roofline.ipynb", devices=["H100 SXM"], measured_results=str(path),
                      use_measurements=True)
    before = float(figure(default, "decode projected [tokens/s per device]").split()[0].replace(",", ""))
    after = float(figure(measured, "decode projected [tokens/s per device]").split()[0].replace(",", ""))
    # memory-bound decode follows the measured bandwidth (1.675 TB/s instead of the published 2.97 TB/s),
    # less than proportionally because of the fixed per-step overheads
    assert 0.5 * before < after < 0.75 * before, (before, after)


def test_validation_notebook_defaults_and_filters(tmp_path):
    text, _ = run(tmp_path, "10_validation.ipynb")
    assert int(figure(text, "published measurements")) >= 40
    # per kind, as README's validation table states them (848 cases, 86 sources, split by source): batch-1
    # decode and TTFT within 22 % (12.7 / 8.5 % on the fit sources; the held-out NIM GenAI-Perf course table's
    # one-request figures sit at 1.0-2.2x: a fixed cost per request the engine does not model), training
    # 15 %, fixed-batch 20 %, maximum throughput 40 % (36 %: AMD's and Gaudi's tables and GPUStack's H100
    # runs, 1.4-2.2x below the engine -- test_validation's known source gaps), TPOT under load 22 % (the course
    # table's long prompts, 0.9-2.1x), image models 25 / 25 % (21 / 20 % since the clock and the L2 entered:
    # the L4 at 0.67-1.05x, the L40S at 0.61-0.90x), encoders 30 % (29 % at batch 1: the
    # TensorRT demo's BERT on A100 and A30 runs 1.4-1.7x fast); TTFT under load is the
    # engine's known miss (issue 24) and is shown, not hidden, in the overall figure
    errors = {kind: float(err) for kind, err in re.findall(r"^(\w+): \d+ cases, error ([\d.]+)$", text, flags=re.M)}
    limits = {"decode_batch1": 0.22, "fixed_batch_throughput": 0.20, "max_throughput": 0.40, "ttft": 0.22,
              "training": 0.15, "serving_load_tpot": 0.22, "vision_single_stream": 0.25, "vision_offline": 0.25,
              "encoder_single_stream": 0.30, "encoder_offline": 0.30}
    assert set(limits) <= set(errors), f"the chapter should print every kind's error; it printed {sorted(errors)}"
    for kind, limit in limits.items():
        assert errors[kind] <= limit, f"{kind}: error {errors[kind]:.3f} above {limit:.2f}"
    assert "serving_load_ttft" in errors
    assert float(figure(text, "geometric-mean error, all")) >= errors["training"], "the overall error hides a kind"
    filtered, _ = run(tmp_path, "10_validation.ipynb", categories=["training"], device="H100 SXM")
    shown = int(figure(filtered, "cases shown"))
    assert 0 < shown < int(figure(text, "cases shown"))


def test_decision_notebook_prices_the_software_stack_it_is_given(tmp_path):
    """papermill with a non-default ``stack``: every figure of the decision assumes eager PyTorch, not TensorRT."""
    example = Path(__file__).resolve().parents[1] / "examples" / "bert-inference-small-team.yaml"
    _, nb = run(tmp_path, "09_decision.ipynb", scenario_path=str(example), stack="pytorch-eager",
                run_sensitivity=False, static=True)
    shown = "".join(str(v) for cell in nb.cells for output in cell.get("outputs", [])
                    for k, v in output.get("data", {}).items() if k in ("text/html", "text/plain"))
    assert "run op by op by PyTorch (eager)" in shown, "the decision should name the stack it was given"
    assert "compiled by TensorRT" not in shown, "no figure should assume TensorRT when eager PyTorch is asked for"
