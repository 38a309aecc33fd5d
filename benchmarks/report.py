"""Report generation: every chapter for one scenario, papermill + nbconvert, to HTML."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ._timing import report

ROOT = Path(__file__).resolve().parent.parent


def main():
    from accelkit.report import build_report

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        build_report(ROOT / "examples" / "serve-70b-at-latency-target.yaml", out_dir=Path(tmp) / "r", progress=False)
        seconds = time.perf_counter() - start
    return [report("accelkit report: 10 chapters for one scenario (3 kernels at a time)", seconds, target=60.0)]
