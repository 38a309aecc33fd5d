"""Chapter 04 (software ecosystem) runs headless with papermill, on defaults and with other
requirements, and its printed key figures follow the parameters."""

from __future__ import annotations

import json

import pytest

from test_notebooks import figure, run

pytestmark = pytest.mark.notebook

NOTEBOOK = "04_ecosystem.ipynb"


@pytest.fixture(scope="module")
def default_text(tmp_path_factory):
    text, _ = run(tmp_path_factory.mktemp("eco-default"), NOTEBOOK)
    return text


def test_defaults_a_pytorch_team_that_knows_cuda(default_text):
    assert figure(default_text, "requirements").startswith("PyTorch; team knows NVIDIA CUDA; cloud")
    assert figure(default_text, "top 3 stacks").startswith("cuda 100.0")
    assert figure(default_text, "rocm custom kernels") == "pass"
    assert figure(default_text, "cann custom kernels") == "pass"
    # the check cells drive the panel: kernels flip ROCm to risk, the OpenVINO story fails CUDA
    assert "rocm custom kernels: risk" in default_text and "cann custom kernels: fail" in default_text
    assert "cuda: fail (1 fail" in default_text
    assert "This machine" not in default_text  # the audit stays in the panel, not in check cells


def test_tensorflow_and_custom_kernels_change_the_figures(tmp_path, default_text):
    saved = tmp_path / "scenario.json"
    text, _ = run(tmp_path, NOTEBOOK, frameworks=["tensorflow"], custom_cuda_kernels=True,
                  save_scenario_to=str(saved))
    assert figure(text, "requirements").startswith("TensorFlow; own CUDA kernels")
    assert figure(text, "rocm custom kernels") == "risk"
    assert figure(text, "cann custom kernels") == "fail"
    # ROCm's TensorFlow is a separate build (fork) and the kernels need a HIP port: lower than by default
    assert float(figure(text, "score rocm")) < float(figure(default_text, "score rocm"))
    assert int(figure(text, "stacks with a fail").split()[0]) > int(figure(default_text, "stacks with a fail").split()[0])
    data = json.loads(saved.read_text())
    assert data["frameworks"] == ["tensorflow"] and data["custom_cuda_kernels"] is True


def test_edge_team_that_knows_rocm(tmp_path, default_text):
    text, _ = run(tmp_path, NOTEBOOK, deployment="edge", team_skills=["rocm"], serving_runtime="vllm",
                  special_operators=["deformable conv"])
    assert "edge deployment" in figure(text, "requirements")
    assert figure(text, "rocm").startswith("fail")  # every ROCm device in the catalogue is a datacenter part
    assert figure(text, "top 3 stacks") != figure(default_text, "top 3 stacks")


def test_a_misspelt_framework_names_the_field(tmp_path):
    with pytest.raises(Exception) as err:
        run(tmp_path, NOTEBOOK, frameworks=["pytorh"])
    assert "frameworks" in str(err.value) and "pytorch" in str(err.value)
