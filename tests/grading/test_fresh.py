"""Fresh inputs: the reference still scores full, a table of the notebook's answers does
not, every named mistake is still caught and named, a draw is reproducible from its secret
only, and each grading (hidden cells too) draws anew.

The worker's own `answer` runs in this process on the reference (as in
test_milestone_5_grading.py), every request and reply through JSON like the sandbox's.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import random

import pytest

import retriever
import scoring
from grading.judge.fresh import VARIANTS, fresh_cells, mistaken, seeded
from grading.judge.objects import FUNCTIONS as OBJECTS
from grading.judge.verdict import CELLS, RANKS, TOP_SIGNALS, request, run_cell
from grading.layout import ROOT
from practice import forgetting_rule, importance_parsing, persistence, reflection
from teaching.checks import VALUE_MISTAKES
from teaching.checks.core import NOW

PUBLIC = [cell for cell in CELLS if not cell.hidden]


def asker():
    spec = importlib.util.spec_from_file_location(
        "grading_worker", ROOT / "grading/sandbox/worker.py"
    )
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    worker.LEARNER = str(ROOT / "code")
    worker.MODULES.update(scoring=scoring, retriever=retriever)
    for module in (importance_parsing, forgetting_rule, reflection, persistence):
        worker.MODULES[module.__name__] = module  # "practice.reflection": the registry's name
    return lambda req: json.loads(json.dumps(worker.answer(json.loads(json.dumps(req)))))


@pytest.mark.parametrize("student", ["ana", "ben.k", "cy", "dee", "ed"])
def test_the_reference_scores_every_fresh_cell_in_full(student):
    for cell in fresh_cells(CELLS, seeded(student, [b"scoring", b"retriever"])):
        outcome = run_cell(cell, asker(), {})
        assert (outcome.score, outcome.message) == (cell.points, ""), cell.id


def sent(cell) -> list[str]:
    return [json.dumps(request(cell, case)) for case in cell.cases]


def test_one_secret_gives_one_draw_and_another_secret_another():
    ana = fresh_cells(CELLS, seeded("ana", [b"x"], b"secret"))
    again = fresh_cells(CELLS, seeded("ana", [b"x"], b"secret"))
    other = fresh_cells(CELLS, seeded("ana", [b"x"], b"another secret"))
    for notebook, mine, same, theirs in zip(CELLS, ana, again, other):
        assert sent(mine) == sent(same)
        assert sent(mine) != sent(notebook), notebook.id
        assert sent(mine) != sent(theirs), notebook.id


def test_every_grading_of_the_same_submission_draws_new_inputs_hidden_ones_too():
    first = fresh_cells(CELLS, seeded("ana", [b"x"]))  # no secret given: os.urandom
    second = fresh_cells(CELLS, seeded("ana", [b"x"]))
    hidden = [(n, one, two) for n, one, two in zip(CELLS, first, second) if n.hidden]
    changed = [sent(one) != sent(two) for _, one, two in hidden]
    # subtle: a cell of three whole ratings can draw the same by chance (1 in thousands)
    assert len(hidden) == 12 and sum(changed) >= len(hidden) - 1, changed  # 7 core, 5 optional
    assert all(sent(one) != sent(notebook) for notebook, one, _ in hidden)


def test_a_table_of_the_notebook_answers_fails_every_fresh_public_cell():
    table = {}
    for cell in PUBLIC:
        for case in cell.cases:
            key = json.dumps(request(cell, case), sort_keys=True)
            if cell.function in VALUE_MISTAKES:  # an optional milestone's plain value
                table[key] = {"json": case.expected}
                continue
            if cell.function in OBJECTS:  # groups, a record, a memory or a refusal
                want = case.expected
                if isinstance(want, dict) and "raises" in want:
                    message = " ".join(want["naming"])
                    table[key] = {"error": want["raises"], "bases": [want["raises"]],
                                  "message": message}  # fmt: skip
                else:
                    memory = cell.function == "memory_from_record"
                    table[key] = {"json": {"memory": want} if memory else want}
                continue
            if not hasattr(case, "ranking"):
                table[key] = {"value": float(case.expected)}
                continue
            ids = list(case.ranking) if cell.function == RANKS else case.expected
            accessed = {m["id"]: m["last_accessed"] for m in case.memories()}
            if cell.function != RANKS:
                accessed.update(dict.fromkeys(ids, NOW))
            table[key] = {"shape": None, "ids": ids, "accessed": accessed,
                          "signals": list(TOP_SIGNALS)}  # fmt: skip

    def answer(req):
        return table.get(json.dumps(req, sort_keys=True), {"value": 0.0})

    for cell in PUBLIC:
        assert run_cell(cell, answer, {}).score == cell.points  # the table passes the notebook
    for cell in fresh_cells(PUBLIC, seeded("table", [b""])):
        assert run_cell(cell, answer, {}).score == 0, cell.id


def test_each_named_store_mistake_is_modelled_exactly_on_the_notebook_stores():
    for cell in PUBLIC:
        for scenario in cell.cases:
            for label, ids in getattr(scenario, "mistakes", {}).items():
                ranked = [i for _, i in mistaken(scenario, **VARIANTS[label])]
                assert tuple(ranked[: scenario.k]) == tuple(ids), (scenario.title, label)
            if hasattr(scenario, "ranking"):
                assert tuple(i for _, i in mistaken(scenario)) == tuple(scenario.ranking)


@pytest.mark.parametrize("cell_id", ["check_retrieve", "check_rank_memories"])
def test_named_store_mistakes_are_still_named_on_fresh_stores(cell_id):
    cell = next(c for c in fresh_cells(PUBLIC, seeded("ana", [])) if c.id == cell_id)
    scenario = next(s for s in cell.cases if s.title == "five live memories, one superseded")
    for label, ids in scenario.mistakes.items():
        accessed = {m["id"]: m["last_accessed"] for m in scenario.memories()}
        reply = {"shape": None, "ids": list(ids), "accessed": accessed, "signals": [0.0] * 4}
        one = dataclasses.replace(cell, cases=[scenario])
        assert label in run_cell(one, lambda req, reply=reply: reply, {}).message


def test_a_public_rating_is_never_drawn_onto_a_hidden_one():
    # an echo of a public input in the feedback must not equal a notebook's hidden input
    from grading.judge import fresh
    from teaching.checks.core import Case

    assert fresh.HIDDEN_RATINGS  # the notebook's hidden cells were read
    rng = random.Random(7)
    drawn = {
        fresh._importance(Case((rating,), None), rng)[0][0]
        for rating in (2.5, 4, 7.25)
        for _ in range(200)
    }
    assert len(drawn) > 20 and not drawn & fresh.HIDDEN_RATINGS


def test_no_draw_of_a_memory_makes_it_supersede_itself():
    """A new id is drawn from a few hundred names: it must never be the memory's own
    superseded_by (the parent would fail to build it, and the whole submission with it)."""
    cells = [c for c in CELLS if c.function in ("memory_to_record", "memory_from_record")]
    linked = [case for cell in cells for case in cell.cases if case.args[0].get("superseded_by")]
    assert linked  # the cases this is about
    for n in range(1500):
        for cell in fresh_cells(cells, random.Random(n)):
            for case in cell.cases:
                fields = case.args[0]
                assert fields.get("id") is None or fields.get("superseded_by") != fields["id"]


def test_every_cell_can_be_drawn_for_any_secret():
    """A draw that raises fails the whole submission (every cell 0): none may, whatever the
    secret (200 of them here, every cell each)."""
    for n in range(200):
        assert len(fresh_cells(CELLS, random.Random(f"draw {n}"))) == len(CELLS)


def test_a_renamed_memory_is_never_given_the_id_of_the_memory_that_replaced_it():
    from grading.judge.fresh import _renamed_fields

    fields = {"id": "m1", "superseded_by": "m4", "embedding": [1.0, 0.0], "user_id": "alice"}
    drawn = {
        _renamed_fields(fields, {}, lambda v: v, random.Random(seed))["id"] for seed in range(400)
    }
    assert "m4" not in drawn and len(drawn) > 50
