"""Milestone 5 in the trusted grader: its cells, its requests, its verdicts and mistakes.

The worker's own `answer` runs in this process on the reference (or on a known mistake),
with every request and reply passed through JSON as the sandbox passes them; the sandboxed
run of whole submissions is `python -m grading selfcheck`.
"""

from __future__ import annotations

import importlib.util
import json
import math
from types import SimpleNamespace

import pytest

import retriever
import scoring
from grading.judge.verdict import CELLS, request, run_cell
from grading.layout import ROOT
from grading.selfcheck.mistakes import KIND_RECENCY, RETRIEVE_BY_KIND, SUBMISSIONS

M5 = {cell.id: cell for cell in CELLS if cell.milestone == 5}


def load_worker():
    spec = importlib.util.spec_from_file_location(
        "grading_worker", ROOT / "grading/sandbox/worker.py"
    )
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    worker.LEARNER = str(ROOT / "code")
    return worker


def asker(scoring_module=scoring, retriever_module=retriever):
    """A worker's ask(): the request and the reply each through JSON, like the sandbox's."""
    worker = load_worker()
    worker.MODULES.update(scoring=scoring_module, retriever=retriever_module)
    return lambda req: json.loads(json.dumps(worker.answer(json.loads(json.dumps(req)))))


def test_milestone_5_has_four_cells_with_hidden_cases_read_from_notebook_07a():
    assert {
        cell_id: (c.function, c.points, len(c.cases), c.hidden) for cell_id, c in M5.items()
    } == {
        "check_kind_recency_score": ("kind_recency_score", 2, 10, False),
        "check_kind_recency_score_hidden": ("kind_recency_score", 2, 7, True),
        "check_retrieve_by_kind": ("retrieve_by_kind", 2, 6, False),
        "check_retrieve_by_kind_hidden": ("retrieve_by_kind", 2, 4, True),
    }


def test_a_kind_scenario_request_carries_kinds_and_infinite_half_lives_through_json():
    cell = M5["check_retrieve_by_kind"]
    sent = json.loads(json.dumps(request(cell, cell.cases[0])))
    assert {m["kind"] for m in sent["memories"]} == {"episodic", "semantic", "procedural"}
    assert sent["half_lives"]["semantic"] == math.inf
    assert sent["superseded"] == [["p0", "p1"]]
    assert "ranking" not in sent and "mistakes" not in sent  # inputs only, never answers


@pytest.mark.parametrize("cell_id", sorted(M5))
def test_the_reference_scores_every_milestone_5_cell_in_full(cell_id):
    outcome = run_cell(M5[cell_id], asker(), {})
    assert (outcome.score, outcome.message) == (M5[cell_id].points, "")


def test_one_decay_rate_in_the_retriever_loses_both_retriever_cells_and_is_named():
    def one_rate(store, query, now, k=3, weights=(1.0, 1.0, 1.0), half_lives=None):
        return retriever.retrieve(store, query, now, k=k, weights=weights)

    ask = asker(retriever_module=SimpleNamespace(retrieve_by_kind=one_rate))
    public = run_cell(M5["check_retrieve_by_kind"], ask, {})
    hidden = run_cell(M5["check_retrieve_by_kind_hidden"], ask, {})
    assert public.score == hidden.score == 0.0
    assert "recency_score with one decay rate" in public.message
    assert "hidden store failed" in hidden.message and "recency_score with one" in hidden.message
    assert "s1" not in hidden.message  # the hidden store's ids stay hidden


def test_a_half_life_used_as_a_rate_overflows_and_the_feedback_says_why():
    def as_rate(now, last_accessed, kind, half_lives=scoring.HALF_LIVES):
        return half_lives[kind] ** ((now - last_accessed) / 3600)

    ask = asker(scoring_module=SimpleNamespace(kind_recency_score=as_rate))
    for cell_id in ("check_kind_recency_score", "check_kind_recency_score_hidden"):
        outcome = run_cell(M5[cell_id], ask, {})
        assert outcome.score == 0.0
        assert "a half-life is not a decay rate" in outcome.message


def test_episodes_that_never_fade_are_named_without_showing_a_hidden_case():
    def never(now, last_accessed, kind, half_lives=scoring.HALF_LIVES):
        if kind == "episodic":
            return 1.0
        return scoring.kind_recency_score(now, last_accessed, kind, half_lives)

    ask = asker(scoring_module=SimpleNamespace(kind_recency_score=never))
    hidden = run_cell(M5["check_kind_recency_score_hidden"], ask, {})
    assert hidden.score == 0.0 and "episodic memories never faded" in hidden.message
    assert "0.7071" not in hidden.message


def test_the_self_check_has_the_three_named_mistakes_each_breaking_only_kind_recency():
    named = {s.name: s for s in SUBMISSIONS}
    for name in ("half-life-used-as-a-rate", "episodic-never-fades", "kind-ignored"):
        assert named[name].breaks == frozenset(KIND_RECENCY)
    for name in ("kind-ignored-by-the-retriever", "refresh-forgotten-by-kind"):
        assert named[name].breaks == frozenset(RETRIEVE_BY_KIND)
