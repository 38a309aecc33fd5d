"""Record the validation's ratios: ``python tools/record_validation.py [--ratios PATH] [--summary PATH]``.

Projects every case of ``data/validation/measured.csv`` with the engine as it is now and
writes each case's ratio (projected speed / measured speed) to
``tests/data/validation_ratios.csv`` and each category's geometric-mean error and ratio to
``tests/data/validation_summary.csv``; ``tests/test_validation.py`` then holds the engine to
them (each case within 10 %, each category within half a point). It also writes the engine's
track record per workload, vendor and device (``data/validation/track_record.csv``), which the
decision shows beside each projected figure. Run it only when the engine
changed on purpose, and say in the commit which cases moved and why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accelkit.projection import recorded, validation  # noqa: E402
from accelkit.projection.track_record import write_track_record  # noqa: E402

RATIOS = ROOT / "tests" / "data" / "validation_ratios.csv"
SUMMARY = ROOT / "tests" / "data" / "validation_summary.csv"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="record_validation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ratios", default=str(RATIOS), help=f"per-case ratios (default {RATIOS.relative_to(ROOT)})")
    parser.add_argument("--summary", default=str(SUMMARY), help=f"per-category errors (default {SUMMARY.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    results = validation.validate()
    before = None
    if Path(args.ratios).exists():
        before = recorded.load_record(args.ratios, args.summary)[0]
    recorded.write_record(results, args.ratios, args.summary)
    if before is not None:
        moved = recorded.case_failures(results, before, tolerance=1e-4)
        print(f"{len(moved)} case(s) differ from the previous record:")
        for message in moved.values():
            print("  " + message.split(". If the engine")[0])
    track = write_track_record(results)
    print(f"written: {args.ratios}, {args.summary}, {Path(track).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
