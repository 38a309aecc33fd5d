"""The software-ecosystem table, checklist, scores, local audit and export (chapter 04).

The rules under test come from the source article's rule 4 (seed 003): a team that owns
CUDA code finds it must be rewritten on other hardware; a customer-mandated runtime the
team does not know costs months.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from accelkit import ecosystem as E
from accelkit.catalog import SOFTWARE_STACKS, CatalogError
from accelkit.ecosystem import audit as ecosystem_audit
from accelkit.local.nvml import driver_facts
from conftest import ROOT, require


@pytest.fixture(scope="module")
def eco():
    return E.load_ecosystem()


def _status(frame, stack, group):
    rows = frame[(frame["stack"] == stack) & (frame["group"] == group)]
    assert len(rows) == 1, f"expected one {group} item for {stack}, got {len(rows)}"
    return rows.iloc[0]


# --- the table ------------------------------------------------------------------------------

def test_every_row_is_sourced_and_uses_the_fixed_vocabularies(eco):
    assert set(eco["stack"]) <= set(SOFTWARE_STACKS)
    assert set(eco["criterion"]) <= set(E.CRITERIA)
    assert set(eco["level"]) <= set(E.LEVELS)
    sourced = eco[eco["level"] != "unknown"]
    assert sourced["source_url"].str.match(r"https?://\S+$").all(), "every non-unknown row needs an http(s) source"
    assert (eco["detail"].str.len() > 10).all(), "every row explains itself in words"
    # a full matrix: every stack has every criterion exactly once
    counts = eco.groupby("stack")["criterion"].agg(lambda c: sorted(c))
    assert all(c == sorted(E.CRITERIA) for c in counts), counts[counts.map(lambda c: c != sorted(E.CRITERIA))]
    assert len(eco["stack"].unique()) >= 10  # the list: CUDA ... Cambricon


def test_every_stack_used_by_the_catalogue_has_rows(eco, catalog):
    used = set()
    for stacks in catalog["software_stack"]:
        used |= {s.strip() for s in str(stacks).split("|") if s.strip()}
    assert used, "the catalogue lists no software stacks"
    assert used <= set(eco["stack"]), f"stacks without ecosystem rows: {sorted(used - set(eco['stack']))}"


def test_support_matrix_is_stacks_by_criteria(eco):
    matrix = E.support_matrix(eco)
    assert list(matrix.columns) == list(E.CRITERIA)
    assert matrix.notna().all().all()
    assert matrix.loc["cuda", "pytorch"] == "native"


def _write(tmp_path, rows, name="eco.csv"):
    path = tmp_path / name
    pd.DataFrame(rows, columns=E.ECOSYSTEM_COLUMNS).to_csv(path, index=False)
    return path


def test_loader_names_line_column_and_suggests(eco, tmp_path):
    rows = eco[eco["stack"] == "rocm"].copy()
    rows.iloc[2, rows.columns.get_loc("level")] = "nativ"
    with pytest.raises(CatalogError) as err:
        E.load_ecosystem(_write(tmp_path, rows))
    message = str(err.value)
    assert "line 4" in message and "column level" in message and "'native'" in message


def test_loader_refuses_a_sourced_row_without_url_but_keeps_unknown_unsourced(eco, tmp_path):
    rows = eco[eco["stack"] == "rocm"].copy()
    rows.iloc[0, rows.columns.get_loc("source_url")] = ""
    with pytest.raises(CatalogError, match=r"line 2, column source_url"):
        E.load_ecosystem(_write(tmp_path, rows))
    rows.iloc[0, rows.columns.get_loc("level")] = "unknown"
    assert E.load_ecosystem(_write(tmp_path, rows, "ok.csv")).iloc[0]["level"] == "unknown"


def test_loader_refuses_unknown_stacks_duplicates_and_gaps(eco, tmp_path):
    rows = eco[eco["stack"] == "rocm"].copy()
    bad = rows.copy()
    bad["stack"] = "rcom"
    with pytest.raises(CatalogError, match=r"did you mean 'rocm'"):
        E.load_ecosystem(_write(tmp_path, bad, "a.csv"))
    with pytest.raises(CatalogError, match="appears twice"):
        E.load_ecosystem(_write(tmp_path, pd.concat([rows, rows.iloc[:1]]), "b.csv"))
    with pytest.raises(CatalogError, match="no row for criterion 'community'"):
        E.load_ecosystem(_write(tmp_path, rows[rows["criterion"] != "community"], "c.csv"))
    with pytest.raises(CatalogError, match="file not found"):
        E.load_ecosystem(tmp_path / "missing.csv")


# --- the checklist -------------------------------------------------------------------------

def test_custom_cuda_kernels_mark_rocm_risk_and_cann_fail_with_the_port_or_rewrite():
    frame = E.checklist(E.Requirements(custom_cuda_kernels=True))
    rocm = _status(frame, "rocm", "custom_ops")
    cann = _status(frame, "cann", "custom_ops")
    assert rocm["status"] == "risk" and "HIP" in rocm["reason"] and "port" in rocm["reason"].lower()
    assert cann["status"] == "fail" and "Ascend C" in cann["reason"] and "rewrite" in cann["reason"]
    assert _status(frame, "cuda", "custom_ops")["status"] == "pass"
    assert _status(frame, "jetpack", "custom_ops")["status"] == "pass"  # JetPack ships the CUDA toolkit
    for stack in ("xla", "gaudi", "poplar", "cambricon", "mps"):
        item = _status(frame, stack, "custom_ops")
        assert item["status"] == "fail" and "rewrite" in item["reason"]
    assert rocm["source_url"].startswith("https://") and cann["source_url"].startswith("https://")


def test_without_custom_kernels_rocm_and_cann_pass_the_custom_op_item():
    frame = E.checklist(E.Requirements(custom_cuda_kernels=False))
    assert _status(frame, "rocm", "custom_ops")["status"] == "pass"
    assert _status(frame, "cann", "custom_ops")["status"] == "pass"
    assert _status(frame, "edgetpu", "custom_ops")["status"] == "risk"  # level none: no way to add an op


def test_a_required_framework_at_level_none_fails_and_unknown_is_a_risk(eco):
    for framework in ("pytorch", "tensorflow", "jax", "onnxruntime"):
        frame = E.checklist(E.Requirements(frameworks=[framework]))
        items = frame[frame["group"] == "frameworks"].set_index("stack")
        levels = eco[eco["criterion"] == framework].set_index("stack")["level"]
        for stack, level in levels.items():
            expected = {"none": "fail", "unknown": "risk", "fork": "risk", "limited": "risk"}.get(level, "pass")
            assert items.at[stack, "status"] == expected, (framework, stack, level)
            if level == "none":
                assert "not supported" in items.at[stack, "reason"]
    edgetpu = _status(E.checklist(E.Requirements(frameworks=["pytorch"])), "edgetpu", "frameworks")
    assert edgetpu["status"] == "fail" and edgetpu["level"] == "none"


def test_the_openvino_story_fails_cuda_and_passes_openvino():
    frame = E.checklist(E.Requirements(frameworks=["openvino"], team_skills=["cuda"]))
    cuda = _status(frame, "cuda", "frameworks")
    assert cuda["status"] == "fail" and "three months" in cuda["reason"]
    assert _status(frame, "openvino", "frameworks")["status"] == "pass"
    assert _status(frame, "oneapi", "frameworks")["status"] == "risk"  # only through ONNX Runtime's EP
    team = _status(frame, "openvino", "team_skills")
    assert team["status"] == "risk" and "has not used Intel OpenVINO" in team["reason"]


def test_team_skills_and_deployment_rules():
    frame = E.checklist(E.Requirements(team_skills=["cuda"], deployment="edge"))
    assert _status(frame, "cuda", "team_skills")["status"] == "pass"
    assert _status(frame, "jetpack", "team_skills")["status"] == "pass"  # CUDA skills carry over
    assert "has not used AMD ROCm" in _status(frame, "rocm", "team_skills")["reason"]
    for stack in ("rocm", "gaudi", "xla", "poplar", "cambricon"):
        item = _status(frame, stack, "deployment")
        assert item["status"] == "fail" and "Datacenter only" in item["reason"], stack
    for stack in ("jetpack", "hailo", "edgetpu", "cann", "openvino"):
        assert _status(frame, stack, "deployment")["status"] == "pass", stack
    on_prem = E.checklist(E.Requirements(deployment="on-prem"))
    xla = _status(on_prem, "xla", "deployment")
    assert xla["status"] == "fail" and xla["source_url"].startswith("https://")
    cloud = E.checklist(E.Requirements(deployment="cloud"))
    assert _status(cloud, "hailo", "deployment")["status"] == "risk"


def test_serving_runtime_and_special_operators():
    frame = E.checklist(E.Requirements(serving_runtime="vllm", special_operators=["deformable conv", "NMS"],
                                       needs_quantization=True))
    assert _status(frame, "rocm", "serving")["status"] == "pass"  # vLLM named on the ROCm row
    assert _status(frame, "cann", "serving")["status"] == "pass"  # vllm-ascend plugin
    assert _status(frame, "coreml", "serving")["status"] == "risk"  # unknown
    ops = _status(frame, "gaudi", "operator_coverage")
    assert ops["status"] == "risk" and "deformable conv, NMS" in ops["item"] and ops["required"]
    assert _status(frame, "cuda", "quantization")["required"]
    # vLLM named as a framework joins the serving item instead of a framework item
    frame = E.checklist(E.Requirements(frameworks=["pytorch", "vllm"]))
    assert not frame["item"].str.contains("framework: vLLM").any()
    assert frame["item"].eq("serving: vLLM").any()


def test_every_item_has_a_reason_and_scores_stay_in_0_100():
    for req in (E.Requirements(), E.Requirements(custom_cuda_kernels=True, deployment="edge"),
                E.Requirements(frameworks=["tensorflow", "jax", "mindspore"], team_skills=[], deployment="on-prem")):
        frame = E.checklist(req)
        assert set(frame["status"]) <= set(E.STATUSES)
        assert (frame["reason"].str.len() > 10).all()
        assert frame["score"].between(0, 100).all()
        # an item judged on a level cites that row's source unless the row is unknown
        judged = frame[frame["level"].isin(["native", "plugin", "fork", "limited", "none"])]
        assert judged["source_url"].str.startswith("http").all()


def test_cuda_scores_highest_for_a_cuda_skilled_pytorch_team_and_scores_are_monotone():
    base = E.stack_scores(E.Requirements(frameworks=["pytorch"], team_skills=["cuda"]))
    assert base.index[0] == "cuda" and base.loc["cuda", "score"] == 100
    assert base.loc["cuda", "n_fail"] == 0 and base.loc["cuda", "n_risk"] == 0
    assert (base["score"].diff().dropna() <= 0).all(), "stack_scores is sorted best first"
    # owning CUDA kernels never helps a stack
    kernels = E.stack_scores(E.Requirements(frameworks=["pytorch"], team_skills=["cuda"], custom_cuda_kernels=True))
    assert (kernels["score"] <= base["score"].reindex(kernels.index) + 1e-9).all()
    assert kernels.loc["rocm", "score"] < base.loc["rocm", "score"]
    assert kernels.loc["rocm", "score"] > kernels.loc["cann", "score"]  # a port beats a rewrite
    # a team that knows a stack never scores it lower
    knows_rocm = E.stack_scores(E.Requirements(frameworks=["pytorch"], team_skills=["cuda", "rocm"]))
    assert knows_rocm.loc["rocm", "score"] > base.loc["rocm", "score"]
    assert (knows_rocm["score"] >= base["score"].reindex(knows_rocm.index) - 1e-9).all()


def test_weights_are_shared_within_a_group_and_only_ratios_matter():
    frame = E.checklist(E.Requirements(frameworks=["pytorch", "tensorflow"]))
    fw = frame[(frame["stack"] == "cuda") & (frame["group"] == "frameworks")]
    assert fw["weight"].sum() == pytest.approx(E.DEFAULT_WEIGHTS["frameworks"])
    doubled = {k: 2 * v for k, v in E.DEFAULT_WEIGHTS.items()}
    a = E.stack_scores(E.Requirements())["score"]
    b = E.stack_scores(E.Requirements(weights=doubled))["score"]
    pd.testing.assert_series_equal(a, b.reindex(a.index))
    only_team = {k: 0 for k in E.WEIGHT_KEYS} | {"team_skills": 100}
    scores = E.stack_scores(E.Requirements(weights=only_team))["score"]
    assert scores["cuda"] == 100 and scores["rocm"] == 50


def test_points_table_is_documented_and_used():
    assert E.item_points("pass", "native") == 100
    assert E.item_points("pass", "plugin") < E.item_points("pass", "native")
    assert E.item_points("risk", "unknown") < E.item_points("risk", "limited") < E.item_points("risk", "fork")
    assert E.item_points("fail", "native") == 0
    assert E.item_points("risk", "") == 50
    assert "100     85" in E.checklist.__doc__  # the table in the docstring matches POINTS


def test_requirements_reject_bad_input_with_the_field_name_and_a_suggestion():
    with pytest.raises(ValueError, match=r"frameworks.*Did you mean 'pytorch'"):
        E.Requirements(frameworks=["pytorh"])
    with pytest.raises(ValueError, match=r"team_skills.*Did you mean 'rocm'"):
        E.Requirements(team_skills=["rcom"])
    with pytest.raises(ValueError, match=r"deployment.*Did you mean 'edge'"):
        E.Requirements(deployment="egde")
    with pytest.raises(ValueError, match="serving_runtime"):
        E.Requirements(serving_runtime="torchserve")
    with pytest.raises(ValueError, match=r"weights.*Did you mean 'team_skills'"):
        E.Requirements(weights={"team_skill": 10})
    with pytest.raises(ValueError, match=r"weights\['community'\].*0 to 100"):
        E.Requirements(weights={"community": 150})
    with pytest.raises(ValueError, match="at least one weight"):
        E.Requirements(weights={k: 0 for k in E.WEIGHT_KEYS})
    with pytest.raises(ValueError, match="custom_cuda_kernels must be True or False"):
        E.Requirements(custom_cuda_kernels="maybe")
    with pytest.raises(ValueError, match=r"stacks.*Did you mean 'cann'"):
        E.checklist(stacks=["can"])
    assert E.Requirements(frameworks="pytorch, jax").frameworks == ["pytorch", "jax"]


def test_requirements_from_a_scenario():
    from accelkit.scenario import Scenario

    scenario = Scenario(frameworks=["tensorflow"], custom_cuda_kernels=True, deployment="edge", precision="int8",
                        weights={"ecosystem.team_skills": 40, "cost": 10})
    req = E.Requirements.from_scenario(scenario, team_skills=["rocm"], serving_runtime=None)
    assert req.frameworks == ["tensorflow"] and req.custom_cuda_kernels and req.deployment == "edge"
    assert req.needs_quantization and req.team_skills == ["rocm"] and req.serving_runtime == "any"
    assert req.weights["team_skills"] == 40 and "cost" not in req.weights
    with pytest.raises(ValueError, match="did you mean 'team_skills'"):
        E.Requirements.from_scenario(scenario, team_skill=["cuda"])


# --- per device -------------------------------------------------------------------------------

def test_device_scores_cover_every_catalogue_device(catalog):
    scores = E.device_scores(catalog)
    assert scores.index.equals(catalog.index) and list(scores["name"]) == list(catalog["name"])
    assert scores["ecosystem_score"].notna().all()
    assert scores["ecosystem_score"].between(0, 100).all()
    by_name = scores.set_index("name")
    assert by_name.loc["H100 SXM", "ecosystem_stack"] == "cuda"
    assert by_name.loc["Instinct MI300X", "ecosystem_stack"] == "rocm"
    # a Jetson is scored on JetPack (which bundles CUDA), not on desktop CUDA
    jetsons = scores[scores["software_stack"].str.contains("jetpack")]
    assert (jetsons["ecosystem_stack"] == "jetpack").all()
    # a device with two alternative stacks gets the better one
    stack_scores = E.stack_scores(catalog=catalog)["score"]
    m4 = by_name.loc["Apple M4"]
    assert m4["ecosystem_score"] == max(stack_scores["mps"], stack_scores["coreml"])


def test_device_scores_say_why_a_device_has_no_score(catalog):
    extra = pd.DataFrame({"name": ["Lab card", "Trn2"], "software_stack": ["", "neuron"],
                          "segment": ["datacenter", "datacenter"]})
    scores = E.device_scores(extra, scores=E.stack_scores(catalog=catalog))
    assert scores["ecosystem_score"].isna().all()
    assert scores["ecosystem_reason"].tolist() == ["no software_stack in the catalogue row",
                                                   "none of its stacks is in the ecosystem table"]


# --- local audit -------------------------------------------------------------------------------

def _shape(value):
    """The key structure of an audit (values dropped)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return None


def _check_complete(audit):
    assert set(audit) == {"system", "packages", "onnxruntime_providers", "torch", "nvidia_driver", "rocm", "stacks"}
    assert set(audit["packages"]) == set(E.AUDIT_PACKAGES)
    assert all(isinstance(v, str) and v for v in audit["packages"].values())
    assert set(audit["stacks"]) == set(SOFTWARE_STACKS)
    for info in audit["stacks"].values():
        assert info["status"] in ("ready", "partly", "not here") and info["reason"]
    assert set(audit["torch"]) == {"installed", "how", "version", "cuda", "hip", "cudnn", "cuda_available",
                                   "device_count", "devices", "mps_available", "xpu_available", "error"}
    assert set(audit["nvidia_driver"]) == {"version", "cuda_driver", "gpus", "via", "error"}
    facts, stacks = E.audit_table(audit)
    assert list(facts.columns) == ["section", "item", "value"] and len(stacks) == len(SOFTWARE_STACKS)


_AUDIT_SCRIPT = """
import json, sys
{hide}
from accelkit import ecosystem as E
audit = E.audit_local(inspect_torch={inspect})
print(json.dumps({{"audit": audit, "torch_imported": sys.modules.get("torch") is not None}}))
"""


def _audit_in_subprocess(hide_torch, inspect):
    hide = "sys.modules['torch'] = None  # torch hidden: import torch raises ImportError" if hide_torch else ""
    code = textwrap.dedent(_AUDIT_SCRIPT.format(hide=hide, inspect=inspect))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_audit_is_complete_with_torch_absent():
    out = _audit_in_subprocess(hide_torch=True, inspect=True)
    audit = out["audit"]
    _check_complete(audit)
    t = audit["torch"]
    assert t["installed"] is False and t["error"] == "not installed"
    assert t["version"] is None and t["cuda"] is None and t["cuda_available"] is None and t["devices"] == []
    assert audit["stacks"]["cuda"]["status"] in ("not here", "partly")
    assert not out["torch_imported"]


def test_audit_is_complete_with_torch_present_and_has_the_same_shape():
    require(__import__("importlib").util.find_spec("torch") is not None, "torch")
    absent = _audit_in_subprocess(hide_torch=True, inspect=True)["audit"]
    present = _audit_in_subprocess(hide_torch=False, inspect=True)
    audit = present["audit"]
    _check_complete(audit)
    assert _shape(audit) == _shape(absent)
    assert present["torch_imported"]
    t = audit["torch"]
    assert t["installed"] and t["how"] == "imported torch" and t["version"]
    assert isinstance(t["cuda_available"], bool) and isinstance(t["device_count"], int)
    if t["cuda"] is None and t["hip"] is None:  # the CPU wheel installed by make test
        assert "CPU-only build" in audit["stacks"]["cuda"]["reason"]
        assert "not usable here yet" in audit["stacks"]["cuda"]["reason"]


def test_audit_by_default_reads_the_torch_build_without_importing_torch():
    require(__import__("importlib").util.find_spec("torch") is not None, "torch")
    out = _audit_in_subprocess(hide_torch=False, inspect='"auto"')
    assert not out["torch_imported"], "audit_local() imported torch without being asked"
    t = out["audit"]["torch"]
    assert t["installed"] and t["version"] and "version.py" in t["how"]
    _check_complete(out["audit"])


def test_audit_reads_the_driver_from_nvidia_smi_when_nvml_is_missing(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H200, 570.86.15, 9.0'\necho 'NVIDIA H200, 570.86.15, 9.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setitem(sys.modules, "pynvml", None)
    driver = driver_facts(timeout_s=5)
    assert driver["via"] == "nvidia-smi" and driver["version"] == "570.86.15" and driver["error"] is None
    assert [g["capability"] for g in driver["gpus"]] == ["9.0", "9.0"]
    torch_cpu = {"installed": True, "how": "read torch/version.py (torch not imported)", "version": "2.13.0+cpu",
                 "cuda": None, "hip": None, "cuda_available": None, "devices": [], "mps_available": None,
                 "xpu_available": None}
    status, reason = ecosystem_audit._stack_meaning("cuda", {}, torch_cpu, driver, None,
                                                    {"platform": "linux", "machine": "x86_64"})
    assert status == "partly" and "CPU-only build" in reason and "install a CUDA build" in reason
    torch_cuda = dict(torch_cpu, version="2.13.0+cu128", cuda="12.8")
    status, reason = ecosystem_audit._stack_meaning("cuda", {}, torch_cuda, driver, None,
                                                    {"platform": "linux", "machine": "x86"})
    assert status == "ready" and "H200" in reason


def test_audit_gives_up_on_a_hanging_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setitem(sys.modules, "pynvml", None)
    driver = driver_facts(timeout_s=0.5)
    assert driver["version"] is None and "Timeout" in driver["error"]


def test_importing_the_module_stays_light():
    code = ("import sys, accelkit.ecosystem; "
            "print(sorted(m for m in ('torch', 'plotly', 'ipywidgets', 'onnxruntime') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- export ------------------------------------------------------------------------------------

def test_export_never_overwrites_unless_asked(tmp_path):
    frame = E.checklist(E.Requirements(custom_cuda_kernels=True))
    md = E.export(frame, tmp_path / "check.md")
    csv = E.export(frame, tmp_path / "check.csv")
    before = md.read_text(encoding="utf-8")
    with pytest.raises(FileExistsError, match="check.md"):
        E.export(E.checklist(), md)
    assert md.read_text(encoding="utf-8") == before
    with pytest.raises(FileExistsError, match="check.csv"):
        E.export(frame, csv)
    E.export(E.checklist(), md, overwrite=True)
    assert md.read_text(encoding="utf-8") != before
    back = pd.read_csv(csv, keep_default_na=False)
    assert len(back) == len(frame) and list(back.columns) == list(frame.columns)
    with pytest.raises(ValueError, match=r"\.csv or \.md"):
        E.export(frame, tmp_path / "check.xlsx")
    with pytest.raises(ValueError, match="checklist_frame"):
        E.export(pd.DataFrame({"a": [1]}), tmp_path / "x.csv")
    first, second = E.free_paths(tmp_path, "check"), None
    assert [p.name for p in first] == ["check-2.md", "check-2.csv"]
    (tmp_path / "check-2.csv").write_text("someone else's file")
    second = E.free_paths(tmp_path, "check")
    assert [p.name for p in second] == ["check-3.md", "check-3.csv"]


def test_markdown_has_a_section_per_stack_and_escapes_pipes():
    req = E.Requirements(special_operators=["a|b"])
    frame = E.checklist(req, stacks=["cuda", "rocm"])
    text = E.to_markdown(frame, requirements=req)
    assert text.startswith("# Software-ecosystem checklist")
    assert "## NVIDIA CUDA (cuda): 100.0" in text and "## AMD ROCm (rocm)" in text
    assert "a\\|b" in text and "a|b" not in text
    assert "<https://" in text


# --- the panel (widgets, no browser) -------------------------------------------------------------

def test_panel_binds_frameworks_kernels_and_deployment_to_the_scenario(tmp_path):
    from accelkit.scenario import Scenario
    from accelkit.ui.ecosystem import EcosystemPanel

    scenario = Scenario()
    panel = EcosystemPanel(scenario, audit=False, export_dir=tmp_path)
    assert "rocm custom kernels: pass" in panel.key_figures()
    with panel.trying(custom_cuda_kernels=True):
        assert "rocm custom kernels: risk" in panel.key_figures()
        assert "cann custom kernels: fail" in panel.key_figures()
        assert scenario.custom_cuda_kernels is True
    assert scenario.custom_cuda_kernels is False and "rocm custom kernels: pass" in panel.key_figures()
    panel.controls["frameworks"].boxes["tensorflow"].value = True
    assert scenario.frameworks == ["pytorch", "tensorflow"]
    panel.set(deployment="edge")
    assert scenario.deployment == "edge" and panel.result["scores"].loc["rocm", "n_fail"] >= 1
    first = panel.export()
    second = panel.export()
    assert [p.name for p in first] == ["ecosystem_checklist.md", "ecosystem_checklist.csv"]
    assert [p.name for p in second] == ["ecosystem_checklist-2.md", "ecosystem_checklist-2.csv"]
    before = sorted(tmp_path.iterdir())
    panel._on_export()  # the page's button: downloads only, nothing written on the server
    assert 'download="ecosystem_checklist.md"' in panel.export_status.value and "base64" in panel.export_status.value
    assert sorted(tmp_path.iterdir()) == before
    with pytest.raises(ValueError, match="Did you mean 'pytorch'"):
        panel.set(frameworks=("pytorh",))


def test_panel_shows_the_audit_only_in_the_panel_and_draws_both_figures():
    from accelkit.ui.ecosystem import EcosystemPanel

    audit = E.audit_local(inspect_torch=False)
    panel = EcosystemPanel(audit=audit)
    assert set(panel.result["figures"]) == {"scores", "heatmap"}
    assert "This machine" in panel.result["tables"]["audit"]
    assert "This machine" not in panel.key_figures() and "torch" not in panel.key_figures()
    heat = panel.result["figures"]["heatmap"]
    assert "source:" in heat.data[0].hovertext[0][0]
    panel.set(w_team_skills=0)
    assert panel.error is None and panel.widget is not None
