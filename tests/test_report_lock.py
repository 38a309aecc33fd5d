"""`accelkit report` into one folder: an exclusive lock, atomic replace, no partial folder after
any signal (issue 26, finding 7; an unwritable --out from finding 8)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "bert-inference-small-team.yaml"


def _report(out, *extra, cwd=None):
    return subprocess.Popen([sys.executable, "-m", "accelkit.cli", "report", "--scenario", str(SCENARIO), "--out",
                             str(out), "--chapters", "00", "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd or ROOT)


def _leftovers(out):
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(out.name + "."))


def test_a_second_run_into_a_locked_folder_fails_at_once_with_exit_2(tmp_path):
    out = tmp_path / "report"
    fd = os.open(tmp_path / "report.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a first run holding the folder
    try:
        started = time.monotonic()
        proc = _report(out)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, err
        assert "another accelkit report is writing" in err and str(out) in err and "Traceback" not in err, err
        assert err.count("\n") == 1, err
        assert time.monotonic() - started < 60, "the second run must fail at once, not wait for the first"
        assert not out.exists() and not list(tmp_path.glob("report.partial-*"))
    finally:
        os.close(fd)


def test_unwritable_out_is_one_line_and_exit_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    proc = _report(blocker / "report")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "cannot write the report to" in err and "Traceback" not in err, err
    assert err.count("\n") == 1, err


@pytest.mark.slow
def test_two_runs_into_one_new_folder_one_wins_and_the_other_says_so(tmp_path):
    out = tmp_path / "report"
    first, second = _report(out), _report(out)
    results = [p.communicate(timeout=600) + (p.returncode,) for p in (first, second)]
    codes = sorted(r[2] for r in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[2] == 2)
    assert "another accelkit report is writing" in loser[1] and "report written" not in loser[0], loser
    winner = next(r for r in results if r[2] == 0)
    assert "report written" in winner[0]
    assert (out / "index.html").exists() and (out / "00_catalogue.html").exists() and (out / ".accelkit-report").exists()
    assert _leftovers(out) == [], "no lock file or partial folder stays behind"


@pytest.mark.slow
def test_force_replaces_a_report_in_place(tmp_path):
    out = tmp_path / "report"
    for extra in ((), ("--force",)):
        proc = _report(out, *extra)
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    assert (out / "index.html").exists() and _leftovers(out) == []


_SLEEPER = """
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "import os, time\\n"
    "open(%r, 'w').write(str(os.getpid()))\\n"
    "time.sleep(300)")]
nbformat.write(nb, sys.argv[1])
"""

_RUN = """
import sys
from accelkit.report import ReportInterrupted, build_report
try:
    build_report(sys.argv[1], out_dir=sys.argv[2], chapters=["00"], progress=False, notebooks_dir=sys.argv[3])
except ReportInterrupted as exc:
    sys.exit(128 + exc.signum)
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.slow
@pytest.mark.parametrize("signals", [("SIGINT", "SIGINT"), ("SIGTERM",), ("SIGHUP",), ("SIGTERM", "SIGINT")],
                         ids="+".join)
def test_a_signal_leaves_no_partial_folder_and_no_kernel(tmp_path, signals):
    import psutil

    notebooks = tmp_path / "nb"
    notebooks.mkdir()
    started = tmp_path / "kernel.pid"
    subprocess.run([sys.executable, "-c", _SLEEPER % str(started), str(notebooks / "00_catalogue.ipynb")], check=True)
    out = tmp_path / "report"
    proc = subprocess.Popen([sys.executable, "-c", _RUN, str(SCENARIO), str(out), str(notebooks)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 180
        while not started.exists() or not started.read_text():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the chapter's kernel never started"
            time.sleep(0.2)
        kernel = int(started.read_text())
        assert list(tmp_path.glob("report.partial-*")), "the run writes into a partial folder"
        for name in signals:
            proc.send_signal(getattr(signal, name))
            time.sleep(0.3)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + getattr(signal, signals[0]), err
    assert _leftovers(out) == [] and not out.exists(), f"left behind: {_leftovers(out)}"
    assert not psutil.pid_exists(kernel) or psutil.Process(kernel).status() == psutil.STATUS_ZOMBIE, \
        "the chapter's kernel must be stopped with the report"
