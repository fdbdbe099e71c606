"""python -m grading: release, autograde DIR, selfcheck, points, reshape (see __init__.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grading.editions import CELL_TIMEOUT, release
from grading.markers import BuildError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grading", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("release", help="build dist/student/ and dist/course/")
    grade = commands.add_parser("autograde", help="grade every DIR/<student_id>/ submission")
    grade.add_argument("submissions", type=Path, metavar="DIR")
    check = commands.add_parser("selfcheck", help="prove the pipeline on known submissions")
    commands.add_parser("points", help="print the points table (from the graded notebooks)")
    reshaped = commands.add_parser(
        "reshape", help="a graded cell added or removed after submissions: rebuild and regrade"
    )
    for command in (build, check):  # the notebooks' nbgrader config (autograde runs none)
        command.add_argument(
            "--cell-timeout",
            type=int,
            default=CELL_TIMEOUT,
            help=f"seconds a notebook cell may run when grading (default {CELL_TIMEOUT})",
        )
    for command in (grade, check, reshaped):
        command.add_argument("--jobs", type=int, default=None, help="parallel graders (cores)")
        command.add_argument(
            "--no-isolation",
            action="store_true",
            help="run learner code without a sandbox (no bubblewrap); the table says so",
        )
    args = parser.parse_args(argv)
    try:
        if args.command == "release":
            release(cell_timeout=args.cell_timeout)
        elif args.command == "points":
            from grading.points import table

            print(table())
        elif args.command == "reshape":
            from grading.reshape import reshape

            reshape(jobs=args.jobs, isolated=not args.no_isolation)
        elif args.command == "autograde":
            from grading.autograde import autograde_command

            return autograde_command(args.submissions, args.jobs, not args.no_isolation)
        else:
            from grading.selfcheck import selfcheck

            return selfcheck(args.jobs, args.cell_timeout, not args.no_isolation)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
