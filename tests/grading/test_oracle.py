"""The Milestone 4 run's scoring, answered by the trusted parent: the reference's values for
the case's own memories, and nothing for any other input (no oracle for Milestones 1-3).

The worker's proxy runs here in this process against an Oracle, every call and answer
through JSON as over the sandbox's pipe.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest

import retriever
import scoring
from grading.judge.oracle import Oracle
from grading.judge.verdict import CELLS, request
from grading.layout import ROOT
from teaching.checks.core import HOUR, NOW

RETRIEVE = next(c for c in CELLS if c.id == "check_retrieve")
KINDS = next(c for c in CELLS if c.id == "check_retrieve_by_kind")


def case_request(cell=RETRIEVE, index=1) -> dict:
    return json.loads(json.dumps(request(cell, cell.cases[index])))


def worker_module():
    spec = importlib.util.spec_from_file_location(
        "grading_worker", ROOT / "grading/sandbox/worker.py"
    )
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    return worker


def call(oracle: Oracle, name: str, *args, **kwargs) -> dict:
    sent = json.loads(json.dumps({"call": name, "args": list(args), "kwargs": kwargs}))
    return json.loads(json.dumps(oracle.answer(sent)))


def test_the_case_own_memories_get_the_reference_values():
    req = case_request()
    oracle, memory = Oracle(req), req["memories"][0]
    assert call(oracle, "importance_score", memory["importance"]) == {
        "value": scoring.importance_score(memory["importance"])
    }
    expected = scoring.relevance_score(req["query"], memory["embedding"])
    assert call(oracle, "relevance_score", req["query"], memory["embedding"])["value"] == (
        pytest.approx(expected, rel=1e-6)
    )
    rec = call(oracle, "recency_score", NOW, memory["last_accessed"], decay_rate=req["decay_rate"])
    assert rec["value"] == pytest.approx(
        scoring.recency_score(NOW, memory["last_accessed"], req["decay_rate"])
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("importance_score", [3.3]),  # no memory of the case is rated 3.3
        ("relevance_score", [[0.3, 0.4], [0.6, 0.8]]),  # vectors of no memory
        ("recency_score", [NOW, NOW - 7 * HOUR]),  # an access time of no memory
        ("recency_score", [NOW + HOUR, NOW - HOUR]),  # another now
        ("retrieval_score", [0.123, 0.456, 0.789]),  # signals of no memory
        ("kind_recency_score", [NOW, NOW - HOUR, "semantic"]),
        ("open", ["/etc/passwd"]),  # no scoring function at all
    ],
)
def test_inputs_that_are_not_the_case_own_are_refused(name, args):
    assert call(Oracle(case_request()), name, *args) == {"refused": True}


class Pipe:
    """The worker's side of the pipe: a call goes out, the parent's answer comes back."""

    def __init__(self, oracle: Oracle, seen: list):
        self.oracle, self.seen = oracle, seen

    def write(self, line: str) -> None:
        self.seen.append(json.loads(json.dumps(self.oracle.answer(json.loads(line)))))

    def flush(self) -> None:
        pass

    def readline(self) -> str:
        return json.dumps(self.seen[-1]) + "\n"


def test_the_retriever_ranks_exactly_as_the_reference_through_the_proxy():
    """The reference retriever over the worker's proxy: every call answered, the same ids."""
    worker = worker_module()
    for cell, index in [(RETRIEVE, 1), (RETRIEVE, 2), (KINDS, 0), (KINDS, 1)]:
        req = case_request(cell, index)
        oracle, seen = Oracle(req), []

        worker.CHANNEL = worker.REPLIES = Pipe(oracle, seen)
        spec = importlib.util.spec_from_file_location("proxied_retriever", retriever.__file__)
        module = importlib.util.module_from_spec(spec)
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(sys.modules, "scoring", worker.proxy())
            spec.loader.exec_module(module)
        worker.MODULES["retriever"] = module
        reply = worker.answer(req)
        worker.MODULES["retriever"] = retriever
        own = worker.answer(req)
        assert seen and all(type(answer.get("value")) is float for answer in seen), seen
        assert reply["ids"] == own["ids"], cell.id


def test_calls_beyond_the_case_budget_are_refused():
    req = case_request()
    oracle, rating = Oracle(req), req["memories"][0]["importance"]
    answers = [call(oracle, "importance_score", rating) for _ in range(oracle.calls + 1)]
    assert answers[-1] == {"refused": True} and math.isfinite(answers[0]["value"])
