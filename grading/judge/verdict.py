"""The verdict: every grade cell's cases, sent to a worker as inputs, judged here.

This is the trusted parent. It never imports a learner's file. The cases are the
formative checks' own tables (teaching/checks/m1_recency.py, ...) and the hidden cells of
the instructor's notebooks, read by running those cells with collectors in place of
`run_cases` / `run_scenario`. A worker (grading/sandbox/worker.py) gets one case's inputs
at a time; what comes back is decoded from JSON and accepted only as plain types (an exact
float, ids of the case's own memories, a last_accessed map of floats).

Messages follow the graded-feedback policy: a public case shows its call, expected value
and the validated answer; a hidden case shows only the likely mistake; a crash shows the
exception's class (from a fixed list) and the line the parent reads from the learner's own
staged file, never from another file of the run (a reply may name scoring.py in the
Milestone 4 run, where it is the parent's proxy): `files` maps the names a reply may quote
to the learner's copies.

    >>> CELLS[0].id, CELLS[0].function, len(CELLS[0].cases)
    ('check_recency_score', 'recency_score', 7)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import nbformat

from grading.layout import REGISTRY, ROOT
from grading.markers import HIDDEN, regions
from grading.points import points

sys.path.insert(0, str(ROOT / "code"))  # the instructor's checks; never a submission's
from grading.judge import objects, values  # after code/ is on the path
from teaching.checks import (
    VALUE_MISTAKES,
    core,
    m1_recency,
    m2_importance_relevance,
    m3_retrieval_score,
)
from teaching.checks import m4_retriever as m4
from teaching.checks import m5_kinds as m5
from teaching.checks import m6_importance_parsing as m6
from teaching.checks import m7_forgetting as m7
from teaching.checks import m8_reflection as m8
from teaching.checks import m9_persistence as m9

CLOSE = core.TOLERANCE  # relative 1e-6 (absolute 1e-9 near 0), as the notebooks' checks
TYPES = {"NoneType", "str", "bytes", "list", "tuple", "dict", "set", "bool", "int", "complex"}
MISTAKES = {
    "recency_score": m1_recency.MISTAKES,
    "importance_score": m2_importance_relevance.IMPORTANCE_MISTAKES,
    "relevance_score": m2_importance_relevance.RELEVANCE_MISTAKES,
    "retrieval_score": m3_retrieval_score.MISTAKES,
    "kind_recency_score": m5.MISTAKES,
}
PUBLIC = {
    "check_recency_score": m1_recency.CASES,
    "check_importance_score": m2_importance_relevance.IMPORTANCE_CASES,
    "check_relevance_score": m2_importance_relevance.RELEVANCE_CASES,
    "check_retrieval_score": m3_retrieval_score.CASES,
    "check_retrieve": m4.SCENARIOS,
    "check_rank_memories": [m4.SCENARIOS[1], m4.weights_scenario(), m4.tie_scenario()],
    "check_kind_recency_score": m5.CASES,
    "check_retrieve_by_kind": m5.KIND_SCENARIOS,
    # optional milestones (stretch points): plain values, judged by grading/judge/values.py
    "check_parse_importance": m6.CASES,
    "check_should_forget": m7.CASES,
    # memories in or out: judged by grading/judge/objects.py
    "check_reflection_groups": m8.CASES,
    "check_memory_to_record": m9.TO_RECORD_CASES,
    "check_memory_from_record": m9.FROM_RECORD_CASES,
}
RANKS = "rank_memories"  # the one scenario function that returns rows and refreshes nothing
TOP_SIGNALS = (0.8, 0.995, 0.5, 2.295)  # the top row 'b' of the notebook's own store


@dataclass
class Cell:
    """One grade cell: its cases (numbers or scenarios) and whether they are hidden."""

    id: str
    function: str
    milestone: int
    points: float
    cases: list
    hidden: bool


@dataclass
class Outcome:
    """What one grade cell scored, and the one message that explains it."""

    cell: Cell
    score: float = 0.0
    message: str = ""
    answers: list = field(default_factory=list)  # validated ids per scenario (the hint)


def hidden_cases(cell_id: str) -> list:
    """The cases an instructor's hidden cell checks, collected by running that cell."""
    notebook = next(r.notebook for r in REGISTRY.MILESTONES.values()
                    if cell_id in {c.id for c in r.grade_cells})  # fmt: skip
    nb = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    source = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  == cell_id)  # fmt: skip
    collected: list = []
    namespace = {
        "run_cases": lambda name, cases, function=None: collected.extend(cases),
        "run_scenario": lambda scenario, function=None: collected.append(scenario),
        "run_kind_scenario": lambda scenario, function=None: collected.append(scenario),
        "run_reflection_cases": lambda cases, function=None: collected.extend(cases),
        "run_persistence_cases": lambda name, cases, function=None: collected.extend(cases),
        "Case": core.Case,
        "Scenario": m4.Scenario,
        "KindScenario": m5.KindScenario,
        "case": m7.case,
        "episode": m7.episode,
        "row": m8.row,
        "fields": m9.fields,
        "refused": m9.refused,
        "SUPERSEDED": m4.SUPERSEDED,
        "CREATED_AT": m4.CREATED_AT,
        "print": lambda *args, **kwargs: None,
    }
    for region in regions(source, notebook, HIDDEN):
        exec("\n".join(region), namespace)  # the instructor's own cell: trusted
    return collected


def _cells() -> list[Cell]:
    """Every checked cell; its points from its notebook's metadata (grading/points.py)."""
    cells, worth = [], points()
    for row in REGISTRY.MILESTONES.values():
        for grade in row.grade_cells:
            hidden = grade.id.endswith("_hidden")
            cases = hidden_cases(grade.id) if hidden else list(PUBLIC[grade.id])
            cells.append(Cell(grade.id, row.name, row.number, worth[grade.id], cases, hidden))
    return cells


CELLS = _cells()


# --- requests: inputs only -------------------------------------------------------------


def _plain(value):
    if hasattr(value, "isoformat"):
        return {"datetime": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def request(cell: Cell, case) -> dict:
    if cell.function in objects.FUNCTIONS:
        return objects.request(cell, case)
    if cell.function in VALUE_MISTAKES:
        return values.request(cell, case)
    if isinstance(case, core.Case):
        kwargs = {k: _plain(v) for k, v in case.kwargs.items()}
        return {"function": cell.function, "args": _plain(case.args), "kwargs": kwargs}
    base = {"function": cell.function, "memories": case.memories(),
            "superseded": case.superseded(), "query": list(case.query),
            "now": core.NOW}  # fmt: skip
    if cell.function == "retrieve":
        base.update(k=case.k, weights=list(case.weights), decay_rate=case.decay_rate)
    if cell.function == RANKS:
        base.update(weights=list(case.weights), decay_rate=case.decay_rate)
    if cell.function == "retrieve_by_kind":  # math.inf travels as JSON's Infinity
        base.update(k=case.k, weights=list(case.weights), half_lives=dict(case.half_lives))
    return base


# --- judging: plain types only ---------------------------------------------------------


def _float(value) -> float | None:
    return value if type(value) is float else None


Files = Mapping[str, Path]  # "retriever.py" -> the learner's staged copy: what may be quoted


def _line(files: Files, reply: dict) -> str:
    """' (line 12 of code/scoring.py: `return x / y`)', read from the learner's own file."""
    name, number = reply.get("file"), reply.get("line")
    if name not in files or type(number) is not int:
        return ""  # subtle: in the Milestone 4 run, scoring.py is the reference: never quoted
    try:
        lines = files[name].read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError:
        return ""
    if not 1 <= number <= len(lines):
        return ""
    return f" (line {number} of code/{name}: `{lines[number - 1].strip()[:100]}`)"


def failure(reply: dict | None, function: str, files: Files) -> str | None:
    """The message for a reply that is no answer at all (stub, crash, dead worker)."""
    if reply is None:
        return (
            f"{function}: the grader stopped your code (it ran over {5:g} s, exited, used "
            "too much memory or printed too much); likely mistake: an endless loop\n"
            f"  (fix it in {REGISTRY.where(function)})"
        )
    if reply.get("stub") is True:
        return str(core.not_implemented(function))
    if "error" in reply:
        name = reply["error"] if reply["error"] in values.ERRORS else "an exception"
        own = MISTAKES[function].crashes if function in MISTAKES else {}
        if function in VALUE_MISTAKES:
            own = VALUE_MISTAKES[function].crashes
        hint = own.get(name) or core.CRASH_HINTS.get(
            name, "read the line, then compare it with the docstring"
        )
        return (
            f"{function} raised {name}{_line(files, reply)}\n  likely mistake: {hint}\n"
            f"  (fix it in {REGISTRY.where(function)})"
        )
    return None


def judge_numbers(cell: Cell, replies: list, files: Files) -> str | None:
    results = []
    for case, reply in zip(cell.cases, replies):
        message = failure(reply, cell.function, files)
        if message:
            return message
        got = _float(reply.get("value"))
        if got is None:
            kind = reply.get("type") if reply.get("type") in TYPES else "another type"
            results.append((case, None if kind == "NoneType" else SimpleNamespace(kind=kind)))
        else:
            results.append((case, got))
    mistakes = MISTAKES[cell.function]
    low, high, outside = mistakes.limits or (-math.inf, math.inf, "")
    for case, got in results:
        if type(got) is float and math.isclose(got, case.expected, **CLOSE):
            if low <= got <= high:
                continue
            mistake = outside  # close to the answer, yet outside every answer's range
        elif isinstance(got, SimpleNamespace):
            mistake = f"the function returned a {got.kind}; it should return one float"
            got = f"a {got.kind}"
        else:
            numbers = [(c, g) for c, g in results if type(g) is float or g is None]
            mistake = core.diagnose(numbers, got, mistakes)
        if cell.hidden:
            return (
                f"{cell.function}: a hidden case failed (its inputs stay hidden)\n"
                f"  likely mistake: {mistake}\n  (fix it in {REGISTRY.where(cell.function)})"
            )
        return str(core.report(core.show_call(cell.function, case), case.expected, got,
                               mistake, cell.function))  # fmt: skip
    return None


def ids_of(reply: dict, scenario) -> list[str] | None:
    ids = reply.get("ids")
    known = {row[0] for row in scenario.rows}
    if type(ids) is not list or not all(type(i) is str and i in known for i in ids):
        return None
    return ids


def accessed_of(reply: dict, scenario) -> dict[str, float] | None:
    seen = reply.get("accessed")
    known = {row[0] for row in scenario.rows}
    if type(seen) is not dict or set(seen) != known:
        return None
    if not all(type(v) is float for v in seen.values()):
        return None
    return seen


SHAPES = {
    "none": "retrieve returned None: is the `return` line missing?",
    "not_list": "retrieve should return a list of Memory objects",
    "rows": "ranking rows were returned; return row.memory for each of the top k",
    "ids": "ids were returned; return the Memory objects themselves",
    "scores": "scores were returned; return the Memory objects, best first",
    "tuples": "tuples were returned; return just the Memory objects",
    "other": "something other than Memory objects was returned; return Memory objects",
    "copies": "copies were returned; return the store's own Memory objects",
    "not_rows": "return a list of ScoredMemory(memory, relevance, recency, importance, score)",
}


def judge_scenario(
    cell: Cell, scenario, reply: dict | None, files: Files
) -> tuple[str | None, list | None]:
    """(message or None, the validated ids) for one store."""
    message = failure(reply, cell.function, files)
    if message:
        return message, None
    call = scenario.call() if cell.function != RANKS else m4.rank_call(scenario)
    where = f"  (fix it in {REGISTRY.where(cell.function)})"
    if reply.get("shape") is not None:
        hint = SHAPES.get(reply["shape"], SHAPES["other"])
        hint = hint.replace("retrieve returned", f"{cell.function} returned")
        return _scenario_message(cell, call, scenario, "not a list of Memory", hint, where), None
    ids, seen = ids_of(reply, scenario), accessed_of(reply, scenario)
    if ids is None or seen is None:
        hint = "the answer could not be read: return the store's own Memory objects"
        return _scenario_message(cell, call, scenario, "unreadable", hint, where), None
    expected = scenario.expected if cell.function != RANKS else list(scenario.ranking)
    if ids != expected:
        if cell.function != RANKS:
            hint = m4.order_mistake(ids, scenario)
        else:  # the whole ranking (grading/judge/fresh.py writes each mistake's out in full)
            known = {tuple(i): label for label, i in scenario.mistakes.items()}
            known.setdefault(tuple(expected[::-1]), "sorted worst first: use reverse=True")
            hint = known.get(tuple(ids), "sort every live memory by score, highest first")
        return _scenario_message(cell, call, scenario, ids, hint, where), ids
    before = {memory["id"]: memory["last_accessed"] for memory in scenario.memories()}
    if cell.function == RANKS:
        signals, want = reply.get("signals"), getattr(scenario, "signals", TOP_SIGNALS)
        if (
            type(signals) is not list
            or len(signals) != 4
            or not all(type(s) is float and not math.isnan(s) for s in signals)
            or not all(math.isclose(s, w, **CLOSE) for s, w in zip(signals, want))
        ):
            hint = "compute each signal with the scoring functions, in this order"
            message = f"{call}\n  signals of the top row 'b' are wrong"
            return f"{message}\n  likely mistake: {hint}\n{where}", ids
        if any(seen[i] != before[i] for i in before):
            hint = "rank_memories only ranks; refreshing belongs to retrieve"
            return f"{call}\n  last_accessed changed\n  likely mistake: {hint}\n{where}", ids
        return None, ids
    store = [SimpleNamespace(id=i, last_accessed=t) for i, t in seen.items()]
    hint = m4.touch_mistake(store, before, set(ids))
    if hint:
        return _scenario_message(cell, call + "\n  last_accessed after the call", scenario,
                                 "refreshed wrongly", hint, where), ids  # fmt: skip
    return None, ids


def _scenario_message(cell, call, scenario, got, hint, where) -> str:
    if cell.hidden:
        return (
            f"{cell.function}: a hidden store failed (it stays hidden)\n"
            f"  likely mistake: {hint}\n{where}"
        )
    expected = scenario.expected if cell.function != RANKS else list(scenario.ranking)
    return f"{call}\n  expected: {expected}\n  got:      {got}\n  likely mistake: {hint}\n{where}"


def ask_cases(cell: Cell, ask) -> list:
    """The worker's reply to each case of `cell`, in order, until one cannot pass."""
    got = []
    for case in cell.cases:
        reply = ask(request(cell, case))
        got.append(reply)
        if reply is None or reply.get("stub") is True:
            break  # a dead worker or a stub: the rest cannot pass
    return got


def run_cell(cell: Cell, ask, files: Files, stop_early: bool = True) -> Outcome:
    """Send every case of `cell` to `ask` (a worker's), judge the replies."""
    outcome = Outcome(cell)
    if cell.function in objects.FUNCTIONS:  # memories in or out (optional Milestones 8, 9)
        outcome.message = objects.judge_objects(cell, ask, files, failure) or ""
    elif cell.function in VALUE_MISTAKES:  # an optional milestone's plain values
        outcome.message = values.judge_values(cell, ask_cases(cell, ask), files, failure) or ""
    elif cell.function in MISTAKES:
        outcome.message = judge_numbers(cell, ask_cases(cell, ask), files) or ""
    else:
        for scenario in cell.cases:
            message, ids = judge_scenario(cell, scenario, ask(request(cell, scenario)), files)
            outcome.answers.append(ids)
            if message and not outcome.message:
                outcome.message = message
                if stop_early:
                    break
    outcome.score = 0.0 if outcome.message else float(cell.points)
    return outcome
