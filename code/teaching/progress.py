"""Your progress over the five milestones, in one command: what passes, what fails, what next.

    python code/run.py progress

runs the public check of each learner function (the same checks as the notebooks'
check cells) and prints one line per function, then the next thing to do:

    Milestone 1  recency_score     pass  recency_score: 7 checks passed
    Milestone 2  importance_score  FAIL  importance_score(7)  expected 0.7, got 7 ...
    ...
    Next: fix importance_score in code/scoring.py, Milestone 2 (02_importance_and_relevance.ipynb)

Milestones 1-4 are notebooks 01-04; Milestone 5 (memory kinds) is notebook 07a, after the
chat (05) and the failure modes (06a, 06b), so the next step says so when only it is left.

Each check runs in its own short-lived Python process with a time limit, so a function
that loops forever or crashes the interpreter is reported, not waited on. The exit
status is 0 when every milestone passes.

Deliberately left out: the hidden checks, which only run when your work is graded.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from teaching.checks.core import CheckFailed, NotImplementedYet
from teaching.milestones import MILESTONES, where

TIME_LIMIT = 20.0  # seconds per check; a correct function needs a fraction of one
LAUNCHER = Path(__file__).resolve().parent.parent / "run.py"  # code/run.py


class Outcome(NamedTuple):
    name: str
    status: str  # "pass", "FAIL" or "todo"
    message: str


def run_one(name: str) -> tuple[str, str]:
    """In the child process: run one check and say how it went."""
    from teaching.checks import CHECKS  # in the child only: the parent imports no learner code

    check = CHECKS[name]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):  # "name: 7 checks passed", shown below
            check()
    except NotImplementedYet as error:
        return "todo", str(error)
    except CheckFailed as error:
        return "FAIL", str(error)
    except Exception as error:  # a crash outside the learner's function: still a finding
        return "FAIL", f"{type(error).__name__}: {error}"
    return "pass", passed_line(name, said.getvalue())


def passed_line(name: str, printed: str) -> str:
    """What a passing check said about itself ("7 checks passed"), without anything else
    it printed on the way (a table it used, say): one status line per function."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    own = [line for line in lines if line.startswith(f"{name}: ") and "passed" in line]
    return own[-1].removeprefix(f"{name}: ") if own else "all checks passed"


def check(name: str, time_limit: float = TIME_LIMIT) -> Outcome:
    """Run the check of `name` in a child process; a hang or a crash is a FAIL."""
    command = [sys.executable, str(LAUNCHER), "progress", "--one", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=time_limit)
    except subprocess.TimeoutExpired:
        hint = "a loop that never ends? (in a notebook, the stop button interrupts a cell)"
        return Outcome(name, "FAIL", f"{name} did not finish in {time_limit:.0f} s: {hint}")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Outcome(name, "FAIL", f"the check crashed: {last}")
    status, message = json.loads(lines[-1])
    return Outcome(name, status, message)


def report(outcomes: list[Outcome]) -> str:
    """One line per function, then what to do next."""
    width = max(len(name) for name in MILESTONES)
    labels = max(len(MILESTONES[o.name].label) for o in outcomes) if outcomes else 11
    lines, shown = [], set()
    for outcome in outcomes:
        number = MILESTONES[outcome.name].number
        label = MILESTONES[outcome.name].label if number not in shown else ""
        shown.add(number)
        first = outcome.message.splitlines()[0] if outcome.message else "all checks passed"
        if outcome.status == "todo":
            first = "not started: still `raise NotImplementedError()`"
        lines.append(f"{label:<{labels}}  {outcome.name:<{width}}  {outcome.status:<4}  {first}")
    core = [o for o in outcomes if not MILESTONES[o.name].stretch]
    passed = sum(o.status == "pass" for o in core)
    lines.append("")
    lines.append(f"{passed} of {len(core)} functions pass their checks.")
    todo = next((o for o in core if o.status != "pass"), None)
    if todo is None:
        lines.append(
            f"All {len({MILESTONES[o.name].number for o in core})} milestones pass. Next: "
            "notebooks 07b-07h (in any order), 08 and 09, then EVALUATION.md."
        )
        optional = [o for o in outcomes if o not in core]
        if optional:
            done = sum(o.status == "pass" for o in optional)
            lines.append(f"Optional milestones: {done} of {len(optional)} functions pass.")
        extra = next((o for o in optional if o.status != "pass"), None)
        if extra is not None:  # an optional milestone: offered, never required
            verb = "implement" if extra.status == "todo" else "fix"
            lines.append(f"Optional: {verb} {extra.name} in {where(extra.name)}.")
            if extra.status == "FAIL":
                lines += ["", *extra.message.splitlines()]
    else:
        verb = "implement" if todo.status == "todo" else "fix"
        last = max(row.number for row in MILESTONES.values() if not row.stretch)
        before = (
            "notebooks 05, 06a and 06b if you have not yet, then "
            if MILESTONES[todo.name].number == last
            else ""
        )
        lines.append(f"Next: {before}{verb} {todo.name} in {where(todo.name)}.")
        if todo.status == "FAIL":
            lines += ["", *todo.message.splitlines()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"] and len(argv) == 2:
        print(json.dumps(run_one(argv[1])))
        return 0
    outcomes = [check(name) for name in MILESTONES]
    print(report(outcomes))
    core = [o for o in outcomes if not MILESTONES[o.name].stretch]
    return 0 if all(o.status == "pass" for o in core) else 1  # optional ones are optional
