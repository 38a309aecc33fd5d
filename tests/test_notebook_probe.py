"""Chapter 08 (local probes) runs headless with papermill: on defaults it shows the
shipped example results without measuring anything; with ``run_now=True`` it measures
this machine (quick mode) and the printed figures change; with ``results_path`` it
shows a user's own file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import require
from test_notebooks import figure, run

from accelkit import probes

pytestmark = pytest.mark.notebook

NOTEBOOK = "08_local_probe.ipynb"


def test_probe_notebook_defaults_show_the_shipped_example(tmp_path):
    text, _ = run(tmp_path, NOTEBOOK)
    example = probes.load_example_results()
    assert figure(text, "results source") == Path(example.attrs["source"]).name
    assert int(figure(text, "result rows")) == len(example)
    assert figure(text, "device") == example["device"].iloc[0]
    assert "fp32" in figure(text, "dtypes with a matmul figure")
    assert figure(text, "bf16 relative error below 0.05") == "True"


def test_probe_notebook_measures_this_machine_when_asked(tmp_path):
    require(importlib.util.find_spec("torch") is not None, "torch (pip install 'accelkit[probe]')")
    default, _ = run(tmp_path, NOTEBOOK)
    text, _ = run(tmp_path, NOTEBOOK, run_now=True, quick=True, device="cpu")
    assert figure(text, "results source") == "this session's run (not saved)"
    assert figure(text, "results source") != figure(default, "results source")
    assert figure(text, "device") == "cpu"
    assert "fp32" in figure(text, "dtypes with a matmul figure")
    assert int(figure(text, "result rows")) > 10


def test_probe_notebook_reads_a_results_file(tmp_path):
    rows = pd.DataFrame({
        "probe": ["matmul", "memory_copy"], "dtype": ["bf16", "fp32"], "shape": ["4096x4096x4096", "512 MiB"],
        "measured": [600e12, 2.5e12], "unit": ["FLOP/s", "B/s"], "datasheet": [989.5e12, 3.35e12],
        "device": "cuda:0", "device_name": "H100 SXM", "torch_version": "2.13.0", "timestamp": "2026-01-01T00:00:00",
        "note": "",
    })
    rows["ratio"] = rows["measured"] / rows["datasheet"]
    path = probes.save_results(rows[probes.COLUMNS], tmp_path / "mine.json", label="a test file")
    text, _ = run(tmp_path, NOTEBOOK, results_path=str(path))
    assert figure(text, "results source") == "mine.json"
    assert int(figure(text, "result rows")) == 2
    assert figure(text, "matmul bf16") == f"{600 / 989.5:.0%}"
    assert np.isclose(float(figure(text, "bf16 projection utilisation")), 600 / 989.5)
