"""python -m grading: release, autograde DIR, worker, selfcheck, points, reshape."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grading.course.editions import CELL_TIMEOUT, release
from grading.layout import ASSIGNMENT, COURSE
from grading.markers import BuildError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grading", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("release", help="build dist/student/ and dist/course/")
    grade = commands.add_parser("autograde", help="grade every DIR/<student_id>/ submission")
    grade.add_argument("submissions", type=Path, metavar="DIR")
    grade.add_argument("--student", help="grade (or regrade) only DIR/STUDENT/")
    grade.add_argument("--assignment", help=f"the nbgrader assignment (only {ASSIGNMENT!r})")
    grade.add_argument(
        "--queue",
        action="store_true",
        help="queue the batch in the gradebook's PostgreSQL database and grade it there, "
        "together with every `python -m grading worker` on the same gradebook",
    )
    work = commands.add_parser("worker", help="grade from the gradebook's queue until done")
    work.add_argument(
        "--slot",
        type=int,
        default=0,
        help="first sandbox slot to try (uid 62000+N); one another grader holds is skipped",
    )
    for command in (grade, work):
        command.add_argument("--course", type=Path, default=COURSE, help="the course folder")
        command.add_argument(
            "--db-url",
            help="the gradebook (default: CourseDirectory.db_url in the course's "
            "nbgrader_config.py, else its gradebook.db)",
        )
        command.add_argument(
            "--lease",
            type=float,
            default=None,
            help="seconds a queued claim lasts unrenewed before another grader takes it over",
        )
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
    for command in (grade, work, check, reshaped):
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
            from grading.course.reshape import reshape

            reshape(jobs=args.jobs, isolated=not args.no_isolation)
        elif args.command == "autograde":
            from grading.course.autograde import autograde_command

            return autograde_command(
                args.submissions,
                args.jobs,
                not args.no_isolation,
                course=args.course,
                url=args.db_url,
                student=args.student,
                assignment=args.assignment,
                queued=args.queue,
                lease=args.lease,
            )
        elif args.command == "worker":
            from grading.course.autograde import worker_command

            return worker_command(
                args.jobs, not args.no_isolation, args.course, args.db_url, args.lease, args.slot
            )
        else:
            from grading.selfcheck.runner import selfcheck

            return selfcheck(args.jobs, args.cell_timeout, not args.no_isolation)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
