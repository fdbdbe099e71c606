"""Time the sandboxed grader: seconds per submission, and a whole batch on every core.

    python benchmarks/bench_grading.py                 # 200 generated submissions
    python benchmarks/bench_grading.py --count 40      # a quick run
    python benchmarks/bench_grading.py --no-isolation  # the same without bubblewrap

Builds the editions first if there is no course yet (python -m grading release). Each
generated submission is the reference solution with one of the self-check's known
mistakes (grading/selfcheck/mistakes.py), in turn, so the batch mixes right, wrong, crashing and
looping code the way a real class does. Reports the median and the slowest seconds per
submission (the three sandboxed runs, staging included) and the batch's wall time with
`--jobs` graders in parallel (default: the number of cores). The gradebook and feedback
are written to a scratch copy of the course, never to dist/course.

Deliberately left out: the attack submissions (their hangs cost a fixed timeout each,
which says nothing about the grader's speed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grading.course.autograde import autograde
from grading.course.editions import release
from grading.layout import COURSE
from grading.selfcheck.mistakes import SUBMISSIONS
from grading.selfcheck.runner import build

SLOW = {"retrieve-loops-forever"}  # a hang costs the case timeout, not grading time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-isolation", action="store_true")
    args = parser.parse_args()
    if not (COURSE / "gradebook.db").is_file():
        release(log=lambda line: None)
    kinds = [s for s in SUBMISSIONS if s.name not in SLOW]  # the attacks are apart
    with tempfile.TemporaryDirectory(prefix="memory-lab-bench-") as scratch:
        folder, course = Path(scratch) / "submissions", Path(scratch) / "course"
        folder.mkdir()
        shutil.copytree(COURSE, course)
        for number in range(args.count):
            kind = kinds[number % len(kinds)]
            built = build(kind, folder)
            built.rename(folder / f"s{number:03d}-{kind.name}")
        start = time.monotonic()
        results = autograde(
            folder,
            jobs=args.jobs,
            isolated=not args.no_isolation,
            course=course,
            log=lambda line: None,
        )
        batch = time.monotonic() - start
    seconds = sorted(r.seconds for r in results)
    print(f"{len(results)} submissions, {args.jobs} in parallel, "
          f"{'NOT isolated' if args.no_isolation else 'sandboxed (bubblewrap)'}")  # fmt: skip
    print(f"  per submission: median {statistics.median(seconds):.2f} s, "
          f"slowest {seconds[-1]:.2f} s")  # fmt: skip
    print(f"  batch: {batch:.1f} s ({batch / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
