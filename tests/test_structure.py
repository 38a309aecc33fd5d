"""The package's shape (issues 15, 28): small modules (500 lines at most), unit conversions only in units.py.

These read the source, so a change that grows a module past the limit or writes
a conversion factor by hand fails here with the file and line to look at.
"""

import re
from pathlib import Path

import pytest

from accelkit import units

PACKAGE = Path(__file__).resolve().parents[1] / "accelkit"
MAX_MODULE_LINES = 500
MAX_RAW_UNIT_LINES = 5

# A conversion factor next to * or /: SI prefixes, 1000, 1024, 2**10/20/30, seconds per hour/day,
# days or hours per year.
_LITERAL = (r"(?:1e-?(?:3|6|9|12|15|18)|1_?000(?:\.0)?|1_?000_?000(?:\.0)?|1024(?:\.0)?|3600(?:\.0)?"
            r"|86_?400(?:\.0)?|365\.25|8760(?:\.0)?|2\s*\*\*\s*(?:10|20|30))")
_RAW_UNIT = re.compile(rf"[*/]\s*{_LITERAL}\b|\b{_LITERAL}\s*[*/]")


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _raw_unit_lines():
    found = []
    for path in _modules():
        if path.name == "units.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _RAW_UNIT.search(line.split("#")[0]):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_module_is_over_500_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, (
        f"{path.name} has {lines} lines; split it (one job per module) to {MAX_MODULE_LINES} or fewer")


def test_unit_conversions_go_through_units_py():
    found = _raw_unit_lines()
    assert len(found) <= MAX_RAW_UNIT_LINES, (
        f"{len(found)} lines outside accelkit/units.py convert units with a raw factor (at most "
        f"{MAX_RAW_UNIT_LINES} allowed); use the constants and functions in accelkit/units.py:\n  "
        + "\n  ".join(found))


def test_the_scan_finds_a_hand_written_factor():
    assert _RAW_UNIT.search("seconds = ms / 1000.0")
    assert _RAW_UNIT.search("nbytes = gb * 1e9")
    assert not _RAW_UNIT.search("batch_size = 1024")


def test_units_defines_each_name_once():
    source = (PACKAGE / "units.py").read_text(encoding="utf-8")
    names = re.findall(r"^([A-Z_]+)\s*=", source, flags=re.M) + re.findall(r"^def (\w+)", source, flags=re.M)
    assert len(names) == len(set(names)), f"units.py defines a name twice: {sorted(n for n in names if names.count(n) > 1)}"


def test_network_and_power_conversions():
    # 400 Gb/s (an InfiniBand NDR port) carries 50 GB/s; 700 W is 0.7 kW.
    assert units.gbps_to_bytes_per_s(400) == pytest.approx(50e9)
    assert units.bytes_per_s_to_gbps(50e9) == pytest.approx(400)
    assert units.watts_to_kw(700) == pytest.approx(0.7)
