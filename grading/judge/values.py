"""The judge of plain values: cases whose expected answer is a JSON value, not one float.

The optional milestones return whole numbers or None (parse_importance), True or False
(should_forget), and may return ids or tables. Their cases are the checks' own tables
(teaching/checks/m6_importance_parsing.py, ...: `core.Case` with `slips`, and the
function's `ValueMistakes` in teaching.checks.VALUE_MISTAKES), so a new table plugs in
with rows only. A worker gets the inputs as JSON (a Memory as {"memory": its to_dict()},
a datetime as {"datetime": iso}) and replies {"json": the answer} when the answer is a
plain value, else {"type": its class name}. Here the answer is validated again as plain
types, then compared as the notebook compares it: type for type (7.0 is no 7, 1 no
True), exactly, floats inside it to the checks' tolerance (core.same).

    >>> judge_values(cell, [{"json": 7}, {"json": 12}, ...], files)
    "parse_importance('Rating: 12')\n  expected: 10\n  got:      12\n  likely mistake: ..."

Deliberately left out: numbers (verdict.judge_numbers) and stores (judge_scenario).
"""

from __future__ import annotations

import builtins
import math
import sys
from datetime import datetime
from types import SimpleNamespace

from grading.layout import REGISTRY, ROOT

if str(ROOT / "code") not in sys.path:
    sys.path.insert(0, str(ROOT / "code"))  # the instructor's checks; never a submission's
from teaching.checks import VALUE_MISTAKES, core

PLAIN = (type(None), bool, int, float, str)
# The exception names a crash's reply may show: Python's own classes only, never a learner's
ERRORS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
          and issubclass(getattr(builtins, n), BaseException)}  # fmt: skip
MAX_DEPTH = 8  # a reply nested deeper is no answer a check expects


def encode(value):
    """A case's argument as JSON for the worker (worker.decode is the inverse)."""
    if hasattr(value, "to_dict") and hasattr(value, "superseded_by"):  # a Memory
        return {"memory": value.to_dict()}
    if isinstance(value, datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def request(cell, case) -> dict:
    """One case's inputs: the function, the learner module that holds it, its arguments."""
    row = REGISTRY.MILESTONES[cell.function]
    return {
        "function": cell.function,
        "module": row.module,
        "args": encode(case.args),
        "kwargs": encode(case.kwargs),
    }


def plain(value, depth: int = 0) -> bool:
    """Is `value` (decoded from a worker's JSON) made of plain types only?"""
    if depth > MAX_DEPTH:
        return False
    if type(value) in PLAIN:
        return not (type(value) is int and abs(value) > 2**63)  # no 10**4300 to print
    if type(value) is list:
        return all(plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and plain(v, depth + 1) for k, v in value.items())
    return False


def answer_of(reply: dict):
    """The validated answer of a reply, or SimpleNamespace(kind=...) for something else."""
    if "json" in reply and plain(reply["json"]):
        return reply["json"]
    kind = reply.get("type")
    kind = kind if type(kind) is str and kind.isidentifier() and len(kind) < 40 else "object"
    return SimpleNamespace(kind=kind)


def judge_values(cell, replies: list, files, failure) -> str | None:
    """The first wrong case's message (hidden: only the likely mistake), or None."""
    mistakes = VALUE_MISTAKES[cell.function]
    results = []
    for case, reply in zip(cell.cases, replies):
        message = failure(reply, cell.function, files)
        if message:
            return message
        results.append((case, answer_of(reply)))
    if len(results) < len(cell.cases):
        return failure(None, cell.function, files)
    where = f"  (fix it in {REGISTRY.where(cell.function)})"
    for case, got in results:
        if isinstance(got, SimpleNamespace):
            mistake = f"the function returned {_a(got.kind)}; it should return {mistakes.returns}"
            got = _a(got.kind)
        elif core.same(case.expected, got):
            continue
        else:
            shown = [(c, g) for c, g in results if not isinstance(g, SimpleNamespace)]
            mistake = core.diagnose_value(shown, case, got, mistakes)
            got = _shown(got)
        if cell.hidden:
            return (
                f"{cell.function}: a hidden case failed (its inputs stay hidden)\n"
                f"  likely mistake: {mistake}\n{where}"
            )
        call = core.show_call(cell.function, case)
        return (
            f"{call}\n  expected: {_shown(case.expected)}\n  got:      {got}\n"
            f"  likely mistake: {mistake}\n{where}"
        )
    return None


def _a(kind: str) -> str:
    return f"{'an' if kind[:1] in set('aeiouAEIOU') else 'a'} {kind}"


def _shown(value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return repr(value)[:200] if isinstance(value, str) else str(value)[:200]
