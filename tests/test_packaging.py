"""Packaging: fast import without heavy libraries, environment.yml in step, data in the wheel."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile

import pytest
import yaml


def test_import_accelkit_pulls_in_no_heavy_library():
    code = (
        "import sys, accelkit; accelkit.load_catalog(); "
        "import accelkit.demand, accelkit.memory, accelkit.roofline, accelkit.llm, accelkit.comm, "
        "accelkit.energy, accelkit.tco, accelkit.scenario; "
        "heavy = [m for m in ('torch', 'plotly', 'ipywidgets', 'nbformat', 'jsonschema') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import accelkit pulled in: {out.stdout.strip()}"


def _name(requirement):
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower()


def _spec(requirement):
    return requirement.replace(" ", "").lower()


def test_environment_yml_lists_the_same_runtime_dependencies_as_pyproject(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    runtime = {_name(r): _spec(r) for r in project["dependencies"]}
    test_extra = {_name(r): _spec(r) for r in project["optional-dependencies"]["test"]}
    env = yaml.safe_load((root / "environment.yml").read_text())
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for item in dep.get("pip", []):
                if not item.startswith("-e"):
                    pip[_name(item)] = _spec(item)
        elif _name(dep) not in ("python", "pip"):
            conda[_name(dep)] = _spec(dep)
    listed = {**conda, **pip}
    missing = sorted(set(runtime) - set(listed))
    assert not missing, f"environment.yml lacks runtime dependencies of pyproject.toml: {missing}"
    differ = sorted(n for n in runtime if listed[n] != runtime[n])
    assert not differ, f"version ranges differ between environment.yml and pyproject.toml: {differ}"
    extra = sorted(set(listed) - set(runtime) - set(test_extra))
    assert not extra, f"environment.yml lists packages pyproject.toml does not: {extra}"
    assert any(str(d).startswith("python") for d in env["dependencies"] if isinstance(d, str))


@pytest.mark.slow
def test_wheel_ships_the_catalogue_and_notebooks(root, tmp_path):
    out = subprocess.run(
        # offline: no build isolation (hatchling comes with the test extra), no index
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w",
         str(tmp_path), str(root)],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next(tmp_path.glob("accelkit-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("accelkit/data/accelerators.csv", "accelkit/data/models.csv", "accelkit/data/cloud_prices.csv",
                   "accelkit/notebooks/app.ipynb"):
        assert needed in names, f"{needed} is not in the wheel"
