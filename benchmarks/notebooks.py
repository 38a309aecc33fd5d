"""Each chapter executed headless (papermill, fresh kernel), as nbval and reports run them."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ._timing import report

ROOT = Path(__file__).resolve().parent.parent


def main():
    import papermill as pm

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
            start = time.perf_counter()
            pm.execute_notebook(str(path), str(Path(tmp) / path.name), kernel_name="python3", progress_bar=False,
                                log_output=False)
            seconds = time.perf_counter() - start
            results.append(report(f"notebook {path.name} (kernel start included)", seconds, target=10.0))
    return results
