"""The reference scoring of the Milestone 4 run, answered here and never shipped to a worker.

The learner's retriever is graded on the instructor's scoring, so that a scoring mistake
costs only its own milestone. That scoring never runs in the sandbox: whatever runs there
can carry it out (the host's page cache, timing). The worker's `scoring` module is a proxy
(grading/sandbox/worker.py) that sends each call here, and the trusted parent answers it with the
reference, for the inputs of the case being graded only: the case's query and memories'
vectors, its now and the memories' access or creation times, their kinds and ratings, the
case's own weights, decay rate and half-lives (or the course's defaults), and signals that
are some memory's. Anything else is refused, so the proxy is no oracle for other inputs.

    answer = Oracle(request).answer
    answer({"call": "importance_score", "args": [8], "kwargs": {}}) -> {"value": 0.8}
    answer({"call": "importance_score", "args": [3], "kwargs": {}}) -> {"refused": True}
        (when no memory of the case is rated 3)

Deliberately left out: judging (grading/judge/verdict.py); a call's reply is a number or a
refusal, never a message.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Mapping
from datetime import datetime

from grading.layout import ROOT

if str(ROOT / "code") not in sys.path:
    sys.path.insert(0, str(ROOT / "code"))  # the instructor's solution; never a submission's
import scoring as reference
from base.defaults import DECAY_RATE, HALF_LIVES, WEIGHTS

FUNCTIONS = (  # what the proxy forwards: the learner core's scoring functions
    "recency_score",
    "importance_score",
    "relevance_score",
    "retrieval_score",
    "kind_recency_score",
)
CALLS_PER_MEMORY = 20  # an honest retriever makes about 4 calls a memory
RAISES = {"ValueError", "TypeError", "ZeroDivisionError", "OverflowError"}  # passed on by class


def close(a, b) -> bool:
    """Within the graded tolerance: relative 1e-6, absolute 1e-6 near 0 (float32 copies)."""
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def _number(value) -> float | None:
    return float(value) if type(value) in (int, float) else None


def _vector(value) -> list[float] | None:
    if type(value) is not list or not value:
        return None
    numbers = [_number(v) for v in value]
    return None if None in numbers else numbers


def _same_vector(a, b) -> bool:
    return a is not None and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))


def _time(value) -> float | None:
    if isinstance(value, dict) and set(value) == {"datetime"}:
        try:
            return datetime.fromisoformat(value["datetime"]).timestamp()
        except (TypeError, ValueError):
            return None
    return _number(value)


def _table(value) -> dict | None:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        return None
    numbers = {k: _number(v) for k, v in value.items()}
    return None if None in numbers.values() else numbers


class Oracle:
    """The reference's answers for one case of the Milestone 4 or 5 run (one request)."""

    def __init__(self, request: dict):
        memories = request.get("memories", [])
        self.query = [float(v) for v in request.get("query", [])]
        self.now = float(request.get("now", math.nan))
        self.vectors = [[float(v) for v in m["embedding"]] for m in memories]
        self.times = [float(m[key]) for m in memories for key in ("last_accessed", "created_at")]
        self.ratings = [float(m["importance"]) for m in memories]
        self.kinds = {m.get("kind", "episodic") for m in memories}
        self.rates = [DECAY_RATE, *([request["decay_rate"]] if "decay_rate" in request else [])]
        self.tables = [
            dict(HALF_LIVES),
            *([request["half_lives"]] if "half_lives" in request else []),
        ]
        self.weights = [list(WEIGHTS), *([request["weights"]] if "weights" in request else [])]
        self.calls = CALLS_PER_MEMORY * (len(memories) + 1)
        self.signals = self._signals()

    def _signals(self) -> tuple[list[float], list[float], list[float]]:
        """Every relevance, recency and importance some memory of the case can have."""
        rel = [reference.relevance_score(self.query, v) for v in self.vectors if self.query]
        rec = [reference.recency_score(self.now, t, r) for t in self.times for r in self.rates]
        rec += [reference.kind_recency_score(self.now, t, kind, table)
                for t in self.times for kind in self.kinds for table in self.tables]  # fmt: skip
        imp = [reference.importance_score(r) for r in self.ratings]
        return [0.0, *rel], [0.0, *rec], [0.0, *imp]

    def answer(self, call: dict) -> dict:
        """{"value": the reference's float} for a call about this case, else a refusal."""
        self.calls -= 1
        name, args, kwargs = call.get("call"), call.get("args"), call.get("kwargs")
        if self.calls < 0 or name not in FUNCTIONS:
            return {"refused": True}
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            return {"refused": True}
        function = getattr(reference, name)
        try:
            bound = inspect.signature(function).bind(*args, **kwargs)
        except TypeError:
            return {"raise": "TypeError"}
        bound.apply_defaults()
        plain = self._own(name, dict(bound.arguments))
        if plain is None:
            return {"refused": True}
        try:
            value = float(function(*plain))
        except Exception as error:  # the reference refuses a bad value: say which class
            kind = type(error).__name__
            return {"raise": kind if kind in RAISES else "ValueError"}
        return {"value": value}

    def _own(self, name: str, given: dict) -> list | None:
        """The call's arguments as plain values, if every one is this case's; else None."""
        if name == "relevance_score":
            query, vector = _vector(given["query_embedding"]), _vector(given["memory_embedding"])
            if _same_vector(query, self.query) and any(
                _same_vector(vector, v) for v in self.vectors
            ):
                return [query, vector]
            return None
        if name == "importance_score":
            rating = _number(given["importance"])
            return [rating] if rating is not None and self._among(rating, self.ratings) else None
        if name == "retrieval_score":
            signals = [_number(given[key]) for key in ("rel", "rec", "imp")]
            weights = _vector(
                list(given["weights"]) if isinstance(given["weights"], (list, tuple)) else None
            )
            if None in signals or not any(_same_vector(weights, w) for w in self.weights):
                return None
            if all(self._among(s, known) for s, known in zip(signals, self.signals)):
                return [*signals, tuple(weights)]
            return None
        now, when = _time(given["now"]), _time(given["last_accessed"])
        if (
            now is None
            or when is None
            or not close(now, self.now)
            or not self._among(when, self.times)
        ):
            return None
        if name == "recency_score":
            rate = _number(given["decay_rate"])
            return [now, when, rate] if rate is not None and self._among(rate, self.rates) else None
        kind, table = given["kind"], _table(given["half_lives"])
        if kind not in self.kinds or table is None or table not in self.tables:
            return None
        return [now, when, kind, table]

    @staticmethod
    def _among(value: float, known: list[float]) -> bool:
        return any(close(value, k) for k in known)
