"""accelkit monitor: nvidia-smi logs, topology, verdicts, throttling, right-sizing, CLI.

The figures pinned here come from the shipped synthetic 8 × A100 log, built to
reproduce the source text's anecdote (003 §2.1: eight A100s never used above 30 %):
8 GPUs at a mean of 30 % are 2.4 GPUs of work.
"""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pandas as pd
import pytest

from accelkit import monitor as M
from accelkit.cli import main
from accelkit.monitor import nvsmi, summary as S, topology as T
from accelkit.monitor.rightsize import measured_demand, right_size, sentence
from accelkit.monitor.samples import MIB, MonitorError

HEADER = ("timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
          "memory.total [MiB], power.draw [W], power.limit [W], temperature.gpu, clocks.sm [MHz], clocks.max.sm [MHz]")


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def _log(util_rows, name="NVIDIA A100-SXM4-80GB", host_comment=""):
    """A log of len(util_rows) ticks, each a list of per-GPU utilisation percentages."""
    lines = ([host_comment] if host_comment else []) + [HEADER]
    for t, utils in enumerate(util_rows):
        for g, u in enumerate(utils):
            lines.append(f"2024/05/06 14:00:{t:02d}.{g:03d}, {g}, {name}, {u} %, 10 %, 1024 MiB, 81920 MiB, "
                         f"120.00 W, 400.00 W, 50, 1410 MHz, 1410 MHz")
    return "\n".join(lines) + "\n"


# --- nvidia-smi logs ------------------------------------------------------------------

def test_a_real_looking_log_with_units_and_not_supported_is_read_in_si_units(tmp_path):
    path = _write(tmp_path, "t4.csv", """
        timestamp, name, pci.bus_id, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, clocks_throttle_reasons.active
        2024/05/06 14:00:00.101, Tesla T4, 00000000:3B:00.0, 45 %, 1500 MiB, 15360 MiB, [Not Supported], [N/A], 1590 MHz, 1590 MHz, 61, 0x0000000000000004
        2024/05/06 14:00:00.103, Tesla T4, 00000000:AF:00.0, 55 %, 2500 MiB, 15360 MiB, 33.12 W, 70.00 W, 1305 MHz, 1590 MHz, 70, [Not Supported]
        2024/05/06 14:00:01.101, Tesla T4, 00000000:3B:00.0, 47 %, 1500 MiB, 15360 MiB, [Not Supported], [N/A], 1590 MHz, 1590 MHz, 61, 0x0000000000000000
        2024/05/06 14:00:01.103, Tesla T4, 00000000:AF:00.0, 57 %, 2500 MiB, 15360 MiB, 34.00 W, 70.00 W, 1305 MHz, 1590 MHz, 71, [Not Supported]
        """)
    frame = M.read_log(path)
    assert len(frame) == 4 and sorted(frame["gpu"].unique()) == [0, 1], "two GPUs told apart by their PCI bus id"
    gpu0 = frame[frame["gpu"] == 0].iloc[0]
    assert gpu0["util_fraction"] == pytest.approx(0.45), "45 % must become the fraction 0.45"
    assert gpu0["memory_used_bytes"] == 1500 * MIB, "MiB must become bytes (2**20 each)"
    assert gpu0["sm_clock_hz"] == pytest.approx(1.59e9), "MHz must become Hz"
    assert math.isnan(gpu0["power_w"]), "[Not Supported] must become NaN, not 0 or an error"
    assert gpu0["throttle_reasons"] == 4, "the hex clock-event mask must be read (0x4 = software power cap)"
    gpu1 = frame[frame["gpu"] == 1]
    assert gpu1["power_w"].tolist() == [33.12, 34.0] and (gpu1["throttle_reasons"] == -1).all()
    assert frame["timestamp_s"].diff().dropna().max() == pytest.approx(1.0, abs=0.01)


def test_a_nounits_log_takes_the_unit_from_the_header(tmp_path):
    path = _write(tmp_path, "nounits.csv", """
        index, utilization.gpu [%], memory.used [MiB], clocks.sm [MHz], power.draw [W]
        0, 30, 2048, 1410, 250.5
        1, 60, 4096, 1200, 300
        """)
    frame = M.read_log(path)
    assert frame["util_fraction"].tolist() == [0.3, 0.6]
    assert frame["memory_used_bytes"].tolist() == [2048 * MIB, 4096 * MIB]
    assert frame["sm_clock_hz"].tolist() == [1.41e9, 1.2e9]


def test_gpus_without_an_index_column_are_taken_round_robin(tmp_path):
    path = _write(tmp_path, "rr.csv", """
        timestamp, utilization.gpu [%]
        2024/05/06 14:00:00.100, 10 %
        2024/05/06 14:00:00.102, 20 %
        2024/05/06 14:00:01.100, 30 %
        2024/05/06 14:00:01.102, 40 %
        """)
    frame = M.read_log(path)
    assert frame.groupby("gpu")["util_fraction"].mean().round(2).to_dict() == {0: 0.2, 1: 0.3}


def test_several_hosts_from_comments_a_host_column_and_several_files(tmp_path):
    text = _log([[20, 40]], host_comment="# host: node1") + _log([[60, 80]], host_comment="# host: node2")
    frame = nvsmi.parse_log_text(text, "two.csv")
    assert sorted(frame["host"].unique()) == ["node1", "node2"], "a '# host:' comment and a repeated header start a new host"
    assert len(frame) == 4
    col = _write(tmp_path, "col.csv", """
        hostname, index, utilization.gpu [%]
        a, 0, 10 %
        b, 0, 90 %
        """)
    assert M.read_log(col).set_index("host")["util_fraction"].to_dict() == {"a": 0.1, "b": 0.9}
    f1, f2 = _write(tmp_path, "nodeA.csv", _log([[10]])), _write(tmp_path, "nodeB.csv", _log([[50]]))
    both = M.read_logs([f1, f2])
    assert sorted(both["host"].unique()) == ["nodeA", "nodeB"], "a file without a host gets its file name"
    assert S.summarize(both).effective_devices == pytest.approx(0.6)


@pytest.mark.parametrize("text, line, column, words", [
    ("", None, None, "no nvidia-smi header"),
    ("hello, world\n1, 2\n", 1, 1, "expected a header line first"),
    ("index, memory.used [MiB]\n0, 10 MiB\n", 1, None, "no utilization.gpu column"),
    ("index, utilization.gpu [%]\n0, 30 %\n1\n", 3, None, "expected 2 comma-separated values"),
    ("index, utilization.gpu [%]\n0, 30 %\n1, lots\n", 3, 2, "expected a percentage"),
    ("index, utilization.gpu [%], memory.used [MiB]\n0, 30 %, 12 W\n", 2, 3, "expected a memory size"),
    ("timestamp, utilization.gpu [%]\nyesterday, 30 %\n", 2, 1, "expected a time"),
    ("index, utilization.gpu [%], clocks_throttle_reasons.active\n0, 30 %, 0xZZ\n", 2, 3, "bitmask"),
    ("index, utilization.gpu [%]\n", None, None, "no samples"),
])
def test_garbage_logs_name_the_line_column_and_what_was_expected(tmp_path, text, line, column, words):
    path = _write(tmp_path, "bad.csv", text) if text else tmp_path / "bad.csv"
    if not text:
        path.write_text("")
    with pytest.raises(MonitorError) as info:
        M.read_log(path)
    message = str(info.value)
    assert "bad.csv" in message and words in message, f"the error should name the file and say {words!r}: {message}"
    assert info.value.line == line and info.value.column == column, f"wrong line/column in: {message}"
    if line:
        assert f"line {line}" in message
    if column:
        assert f"column {column}" in message


def test_a_percentage_above_100_is_refused():
    with pytest.raises(MonitorError, match="fraction in \\[0, 1\\]"):
        nvsmi.parse_log_text("index, utilization.gpu [%]\n0, 250 %\n")


# --- the shipped example: the source text's 8 × A100 at 30 % -----------------------------

@pytest.fixture(scope="module")
def example():
    return S.summarize(M.example_log())


def test_example_8_a100_at_30_percent_is_2_4_devices_of_work_and_under_used(example):
    assert example.n_gpus == 8 and example.device == "A100 80GB SXM", "the log's name column must match the catalogue"
    assert example.effective_devices == pytest.approx(2.4, abs=0.01), "8 GPUs at 30 % are 2.4 GPUs of work"
    assert example.mean_utilization == pytest.approx(0.30, abs=0.005)
    assert example.verdict == "under-used", example.reason
    assert "70%" in example.reason, "the verdict must show the source text's 70 % threshold"
    assert example.devices["util_p95"].between(0.3, 0.6).all() and example.devices["util_p50"].between(0.25, 0.35).all()


def test_example_right_size_says_2_4_a100_and_one_h200(example):
    table = right_size(example)
    a100 = table[table["is_monitored"]].iloc[0]
    assert a100["devices_for_work"] == pytest.approx(2.4, abs=0.05), "the same device needs exactly effective_devices"
    assert a100["devices"] == 3, "2.4 rounds up to 3 whole A100s"
    h200 = table[table["name"] == "H200 SXM"].iloc[0]
    assert h200["devices"] == 1 and h200["devices_for_memory"] < 1
    assert table["rate_basis"].str.startswith("achievable").all(), "achievable ceilings, not peaks, are used"
    text = sentence(table)
    assert "did the work of 2.4" in text and "1 H200 SXM would do it" in text, text
    demand = measured_demand(example)
    assert demand["required_flops_per_s"] == pytest.approx(2.4 * a100["rate"], rel=1e-6)
    assert demand["memory_bytes"] == pytest.approx(example.overall["memory_used_total_bytes"])


def test_example_shows_the_hot_gpu_throttling(example):
    hot = [x for x in example.throttling if x["gpu"].endswith("GPU5")]
    causes = {x["cause"] for x in hot}
    assert causes == {"clocks", "temperature"}, f"GPU5 runs hot with clocks held down: {example.throttling}"
    assert all(not x["gpu"].endswith(("GPU0", "GPU1")) for x in example.throttling), "cool GPUs are not flagged"
    assert "cooling" in " ".join(x["text"] for x in hot)


def test_right_size_uses_memory_bandwidth_when_memory_bound_and_checks_memory_fit():
    rows = []
    for t in range(10):
        for g in range(2):
            rows.append({"host": "h", "gpu": g, "name": "NVIDIA H100 80GB HBM3", "timestamp_s": t,
                         "util_fraction": 0.95, "sm_active_fraction": 0.8, "tensor_active_fraction": 0.15,
                         "dram_active_fraction": 0.85, "memory_used_bytes": 70e9})
    summary = S.summarize(pd.DataFrame(rows))
    assert summary.verdict == "memory-bound", summary.reason
    assert "DRAM active 85%" in summary.reason
    table = right_size(summary, candidates=["H100 SXM", "L4"])
    assert table.attrs["basis"] == "memory" and (table["rate_unit"] == "bytes/s").all()
    l4 = table[table["name"] == "L4"].iloc[0]
    assert l4["devices_for_memory"] == pytest.approx(140e9 / 24e9, rel=0.01)
    assert l4["devices"] >= math.ceil(140e9 / 24e9), "the 140 GB in use must fit in the L4s' memory"


# --- verdicts -------------------------------------------------------------------------------

@pytest.mark.parametrize("utils, expected", [
    ([0.01, 0.02, 0.0, 0.03], "idle"),
    ([0.3, 0.32, 0.28, 0.31, 0.29], "under-used"),
    ([0.9, 0.0, 0.8, 0.0, 0.85, 0.0, 0.7, 0.0], "input-bound"),
    ([0.9, 0.85, 0.95, 0.8], "compute-bound"),
])
def test_verdict_rules_follow_their_stated_thresholds(utils, expected):
    frame = pd.DataFrame({"gpu": 0, "timestamp_s": np.arange(len(utils)), "util_fraction": utils})
    summary = S.summarize(frame)
    assert summary.verdict == expected, f"{utils} should read {expected}: {summary.reason}"
    assert summary.reason, "every verdict comes with a reason in words"


def test_the_70_percent_threshold_is_the_boundary():
    assert S.verdict(0.70, 0.0)[0] == "compute-bound"
    assert S.verdict(0.699, 0.0)[0] == "under-used"
    assert S.THRESHOLDS["compute_bound"] == 0.70


def test_an_unknown_gpu_name_gives_close_matches_and_device_overrides():
    frame = pd.DataFrame({"gpu": 0, "timestamp_s": [0, 1], "util_fraction": [0.5, 0.5], "name": "NVIDIA A100-SXM4-8OGB"})
    with pytest.raises(MonitorError, match="closest") as info:
        S.summarize(frame)
    assert "--device" in str(info.value)
    assert S.summarize(frame, device="A100 80GB SXM").device == "A100 80GB SXM"


# --- topology ------------------------------------------------------------------------------------

TOPO = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n" \
       "GPU0\t X \tNV4\tPHB\tSYS\tPIX\t0-15\t0\t\tN/A\n" \
       "GPU1\tNV4\t X \tPHB\tSYS\tPIX\t0-15\t0\t\tN/A\n" \
       "GPU2\tPHB\tPHB\t X \tSYS\tNODE\t0-15\t0\t\tN/A\n" \
       "GPU3\tSYS\tSYS\tSYS\t X \tSYS\t16-31\t1\t\tN/A\n" \
       "NIC0\tPIX\tPIX\tNODE\tSYS\t X \n\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n"


def test_topology_matrix_codes_affinity_and_nics_are_read():
    topo = T.parse_topology_text(TOPO)
    assert topo.gpus == ["GPU0", "GPU1", "GPU2", "GPU3"] and topo.nic_devices == ["NIC0"]
    assert topo.matrix.loc["GPU0", "GPU1"] == "NV4" and topo.matrix.loc["GPU2", "NIC0"] == "NODE"
    assert topo.affinity.set_index("device").loc["GPU3", "numa_affinity"] == "1"
    assert topo.nics == {"NIC0": "mlx5_0"}
    links = topo.links().set_index(["a", "b"])
    assert links.loc[("GPU0", "GPU1"), "nvlinks"] == 4 and links.loc[("GPU0", "GPU3"), "link"] == "SYS"


def test_topology_warnings_name_the_socket_crossing_pairs_the_far_nic_and_numa_binding():
    warns = T.parse_topology_text(TOPO).warnings()
    text = " | ".join(w["text"] for w in warns)
    assert any(w["severity"] == "warning" and "GPU0-GPU3" in w["text"] and "without NVLink" in w["text"]
               for w in warns), f"SYS pairs must be flagged: {text}"
    # read off TOPO by hand: SYS pairs are exactly GPU0-3, GPU1-3, GPU2-3; PHB/NODE pairs GPU0-2, GPU1-2;
    # GPU0-GPU1 is NV4 and must appear in no warning or note
    assert not any("GPU0-GPU1" in w["text"] for w in warns), f"an NVLink pair is not a warning: {text}"
    assert any("3 GPU pair(s)" in w["text"] and "GPU0-GPU3, GPU1-GPU3, GPU2-GPU3" in w["text"] for w in warns), text
    assert any("2 GPU pair(s)" in w["text"] and "GPU0-GPU2, GPU1-GPU2" in w["text"] for w in warns), text
    assert any("GPU3 is far from every NIC" in w["text"] for w in warns), text
    assert any(w["topic"] == "GPU pairs through the CPU" and "GPU0-GPU2" in w["text"] for w in warns), text
    assert any("numactl --cpunodebind=1" in w["text"] for w in warns), text


def test_the_shipped_topology_example_has_two_nvlink_islands():
    topo = M.example_topology()
    links = topo.links()
    assert set(links["link"]) == {"NV12", "SYS"} and (links["link"] == "SYS").sum() == 16
    assert {"PIX", "PXB", "PHB", "NODE"} <= set(topo.matrix.to_numpy().ravel())


@pytest.mark.parametrize("text, line, column, words", [
    ("nothing here\n", 1, None, "no topology header"),
    ("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \tQQQ\nGPU2\tNV2\t X\n", 4, 1, "expected a row for one of the devices"),
    ("\tGPU0\tGPU1\nGPU0\t X \tFAST\nGPU1\tNV2\t X \n", 2, 3, "expected a link code"),
    ("\tGPU0\tGPU1\nGPU0\t X\nGPU1\tNV2\t X \n", 2, None, "expected 2 link codes"),
    ("\tGPU0\tGPU1\nGPU0\tNV2\t X \nGPU1\tNV2\t X \n", 2, 2, "expected 'X' exactly where"),
])
def test_garbage_topology_names_line_column_and_expectation(tmp_path, text, line, column, words):
    path = _write(tmp_path, "topo.txt", text)
    with pytest.raises(MonitorError) as info:
        T.read_topology(path)
    message = str(info.value)
    assert words in message and "topo.txt" in message, message
    assert (info.value.line, info.value.column) == (line, column), message


# --- the command ------------------------------------------------------------------------------------

def test_cli_example_prints_the_verdict_and_right_size(capsys):
    assert main(["monitor", "--example"]) == 0
    out = capsys.readouterr().out
    assert "effective_devices = 2.40" in out and "verdict: under-used" in out
    assert "did the work of 2.4" in out and "H200" in out


def test_cli_json_has_the_promised_keys_and_is_never_overwritten_without_force(tmp_path, capsys):
    log = _write(tmp_path, "gpu.csv", _log([[30, 30], [30, 30]]))
    target = tmp_path / "summary.json"
    assert main(["monitor", "--log", str(log), "--json", str(target)]) == 0
    data = json.loads(target.read_text())
    for key in ("effective_devices", "mean_utilization", "verdict", "source", "devices"):
        assert key in data, f"the JSON summary lacks {key}"
    assert data["effective_devices"] == pytest.approx(0.6) and data["mean_utilization"] == pytest.approx(0.3)
    assert len(data["devices"]) == 2 and data["verdict"] == "under-used"
    assert data["right_size"] and "required_flops_per_s" in data["demand"]
    target.write_text("{}")
    capsys.readouterr()
    assert main(["monitor", "--log", str(log), "--json", str(target)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--force" in err and target.read_text() == "{}", "never overwrite silently"
    assert main(["monitor", "--log", str(log), "--json", str(target), "--force"]) == 0
    assert json.loads(target.read_text())["n_gpus"] == 2


@pytest.mark.parametrize("args, words", [
    (["--log", "{missing}"], "cannot read the log"),
    (["--log", "{bad}"], "line 3, column 2"),
    (["--example", "--topology", "{badtopo}"], "expected a link code"),
    ([], "give exactly one source"),
    (["--example", "--log", "{bad}"], "give exactly one source"),
    (["--example", "--device", "Quantum Toaster 9000"], "not in the catalogue"),
    (["--prometheus", "http://127.0.0.1:9", "--since", "1m"], "cannot reach Prometheus"),
    (["--prometheus", "http://127.0.0.1:9", "--since", "soon"], "--since must be a duration"),
    (["--example", "--json", "{dir}/out.txt"], "--json must name a .json file"),
])
def test_cli_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path, capsys, args, words):
    bad = _write(tmp_path, "bad.csv", "index, utilization.gpu [%]\n0, 30 %\n1, lots\n")
    badtopo = _write(tmp_path, "topo.txt", "\tGPU0\tGPU1\nGPU0\t X \tFAST\nGPU1\tNV2\t X \n")
    args = [a.format(missing=tmp_path / "none.csv", bad=bad, badtopo=badtopo, dir=tmp_path) for a in args]
    assert main(["monitor", *args]) == 2, f"monitor {args} should exit 2"
    err = capsys.readouterr().err.strip()
    assert words in err, f"expected {words!r} in the error: {err}"
    assert len(err.splitlines()) == 1 and "Traceback" not in err, f"one line, no traceback: {err}"


def _nvml_gpu_present():
    from accelkit.local import nvml

    return nvml.device_count() > 0


@pytest.mark.skipif(_nvml_gpu_present(), reason="an NVIDIA GPU is present; the no-NVML message cannot be shown here")
def test_without_nvml_live_sampling_exits_2_with_a_clear_message(capsys):
    assert main(["monitor", "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert "NVML" in err and "--log" in err and "Traceback" not in err, err
    assert main(["monitor", "--", "true"]) == 2


@pytest.mark.gpu
def test_live_nvml_sampling_of_a_real_gpu(tmp_path):
    if not _nvml_gpu_present():
        pytest.skip("no NVIDIA GPU visible to NVML on this machine (live sampling needs one; never faked)")
    frame, rc = M.sample(seconds=2, interval_s=0.5)
    assert rc is None and len(frame) >= 2 and frame["util_fraction"].between(0, 1).all()
    assert (frame["name"] != "").all() and frame["memory_total_bytes"].gt(0).all()
    target = tmp_path / "live.json"
    assert main(["monitor", "--interval", "0.2", "--json", str(target), "--", "sleep", "1"]) == 0
    assert json.loads(target.read_text())["source"] == "live NVML samples"


# --- the chapter ----------------------------------------------------------------------------------------

@pytest.mark.notebook
def test_monitor_chapter_runs_with_non_default_parameters(tmp_path):
    """Chapter 11 on another log and precision: the printed figures follow the parameters."""
    import nbformat
    import papermill as pm

    from conftest import ROOT

    log = _write(tmp_path, "busy.csv", _log([[90, 80], [95, 85], [92, 88]], name="NVIDIA H100 80GB HBM3"))
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "11_monitor.ipynb"), str(out), cwd=str(tmp_path),
                        parameters={"source": "nvidia-smi log", "log_path": str(log), "topology_path": "",
                                    "precision": "fp8", "candidates": 3, "memory_layout": "replicated"},
                        kernel_name="python3", progress_bar=False, execution_timeout=180)
    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells for o in c.get("outputs", [])
                   if o.get("output_type") == "stream")
    assert "device: H100 SXM" in text and "verdict: compute-bound" in text, text[:1500]
    assert "effective devices: 1.77" in text and "by fp8 dense matmul" in text, text[:1500]
    assert "memory layout: replicated" in text, text[:1500]
    assert "topology warnings" not in text
