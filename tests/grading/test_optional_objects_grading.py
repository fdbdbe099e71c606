"""Optional Milestones 8 and 9 in the trusted grader: memories in, records and refusals out.

The worker's own `answer` runs in this process on the reference or on a known mistake
(the reference's file with one edit), every request and reply through JSON as the sandbox
passes them; the sandboxed run of whole submissions is `python -m grading selfcheck`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import types

import pytest

from grading.judge.oracle import Oracle
from grading.judge.verdict import CELLS, request, run_cell
from grading.layout import REGISTRY, ROOT
from practice import persistence, reflection

CELL = {cell.id: cell for cell in CELLS if cell.milestone in (8, 9)}


def asker(**modules):
    spec = importlib.util.spec_from_file_location(
        "grading_worker", ROOT / "grading/sandbox/worker.py"
    )
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    worker.LEARNER = str(ROOT / "code")
    worker.MODULES.update({m.__name__: m for m in (reflection, persistence)} | modules)
    return lambda req: json.loads(json.dumps(worker.answer(json.loads(json.dumps(req)))))


def edited(module, old: str, new: str) -> types.ModuleType:
    source = (ROOT / REGISTRY.file_of(module.__name__)).read_text()
    assert source.count(old) == 1, old
    mistaken = types.ModuleType(module.__name__)
    exec(compile(source.replace(old, new), module.__name__, "exec"), mistaken.__dict__)
    return mistaken


def test_the_reference_scores_every_cell_of_milestones_8_and_9():
    assert len(CELL) == 6
    for cell in CELL.values():
        assert (run_cell(cell, asker(), {}).score, run_cell(cell, asker(), {}).message) == (
            cell.points,
            "",
        )


DEEP = 'record["metadata"] = copy.deepcopy(memory.metadata)'
MISTAKES = [  # (module, old, new, cell: the phrase its message must hold)
    (persistence, DEEP, 'record["metadata"] = memory.metadata', "the memory's own dict"),
    (persistence, DEEP, 'record["metadata"] = dict(memory.metadata)', "copied one level only"),
    (
        persistence,
        'values["metadata"] = copy.deepcopy(record["metadata"])',
        'values["metadata"] = record["metadata"]',
        "the memory's metadata is the record's dict",
    ),
    (
        persistence,
        'restored.last_accessed = record["last_accessed"]  # may be a moment before created_at',
        "pass",
        "field last_accessed",
    ),
    (
        persistence,
        "    missing = [name for name in RECORD_FIELDS if name not in record]",
        "    missing = [record[name] for name in RECORD_FIELDS] and []",
        "raised KeyError",
    ),
    (
        persistence,
        "        problem = f\"the record has unknown field(s) {', '.join(map(str, extra))}\"",
        '        problem = "the record has unknown fields"',
        "does not name",
    ),
    (reflection, "mean > best_mean or", "mean > best_mean and", "compare with the rule"),
]


@pytest.mark.parametrize(
    ("module", "old", "new", "says"), MISTAKES, ids=lambda v: getattr(v, "__name__", str(v)[-24:])
)
def test_each_mistake_loses_its_cells_and_is_named_public_and_hidden(module, old, new, says):
    ask = asker(**{module.__name__: edited(module, old, new)})
    lost = {cell.id: run_cell(cell, ask, {}) for cell in CELL.values()}
    lost = {i: o for i, o in lost.items() if o.score == 0}
    assert lost, "the mistake scored full points"
    public = [o.message for i, o in lost.items() if not i.endswith("_hidden")]
    assert any(says in m for m in public), public
    for cell_id, outcome in lost.items():
        if cell_id.endswith("_hidden"):  # only the likely mistake: no input of the case
            assert "hidden case failed" in outcome.message
            assert "expected" not in outcome.message and "got" not in outcome.message
            assert "zoë" not in outcome.message.lower() and "g1" not in outcome.message


def test_a_refusal_counts_only_with_its_class_and_the_values_named():
    cell = CELL["check_memory_from_record"]
    refusal = next(c for c in cell.cases if c.expected.get("naming") == ["bob", "alice"])
    one = dataclasses.replace(cell, cases=[refusal])
    reply = {"error": "ValueError", "bases": ["ValueError", "Exception"], "message": "bob alice"}
    assert run_cell(one, lambda req: reply, {}).score == cell.points
    for wrong, says in [
        ({**reply, "message": "bob is not the user"}, "does not name 'alice'"),
        ({**reply, "error": "RuntimeError", "bases": ["RuntimeError"]}, "not RuntimeError"),
        ({**reply, "error": "Evil", "bases": ["Evil"]}, "not another exception"),
        ({"json": {"memory": {}}}, "another user was accepted"),
    ]:
        outcome = run_cell(one, lambda req, wrong=wrong: wrong, {})
        assert outcome.score == 0 and says in outcome.message, outcome.message


def test_reflection_asks_twice_and_an_answer_that_changes_loses():
    cell = CELL["check_reflection_groups"]
    answers = iter([{"json": c.expected} for c in cell.cases for _ in range(2)])
    assert run_cell(cell, lambda req: next(answers), {}).score == cell.points
    flip = iter([{"json": [["e1", "e2", "e3", "e4", "e5"]]}, {"json": []}])
    outcome = run_cell(cell, lambda req: next(flip), {})
    assert outcome.score == 0 and "changed between two calls" in outcome.message


def test_the_oracle_answers_relevance_only_between_the_cases_own_memories():
    cell = CELL["check_reflection_groups"]
    oracle = Oracle(json.loads(json.dumps(request(cell, cell.cases[6]))))  # (1, 0) (0, 1) (2, 3)
    mine = {"call": "relevance_score", "kwargs": {}}
    assert oracle.answer({**mine, "args": [[1.0, 0.0], [0.0, 1.0]]}) == {"value": 0.0}
    assert oracle.answer({**mine, "args": [[2.0, 3.0], [1.0, 1.0]]}) == {"refused": True}
    assert len(oracle.scores()["answers"]) == 9  # every ordered pair of its three memories


def test_the_milestone_run_on_the_reference_scoring_names_a_graded_module():
    from grading.judge.grader import ON_REFERENCE_SCORING, STRETCH_MODULES

    # a name the registry does not use would quietly run reflection on the learner's scoring
    assert set(ON_REFERENCE_SCORING) <= set(STRETCH_MODULES)
    assert "practice.reflection" in ON_REFERENCE_SCORING
