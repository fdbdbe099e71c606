"""The reference scoring of the Milestone 4 run, answered here and never shipped to a worker.

The learner's retriever is graded on the instructor's scoring, so that a scoring mistake
costs only its own milestone. That scoring never runs in the sandbox: whatever runs there
can carry it out (the host's page cache, timing). The worker's `scoring` module is a proxy
(grading/sandbox/worker.py) that sends each call here, and the trusted parent answers it with the
reference, for the inputs of the case being graded only: the case's query and memories'
vectors, its now and the memories' access or creation times, their kinds and ratings, the
case's own weights, decay rate and half-lives (or the course's defaults), and signals that
are some memory's. Anything else is refused, so the proxy is no oracle for other inputs.

The four calls a retriever makes about each memory of the case (its relevance, its
recency at the case's decay rate or half-lives, its importance, and their sum with the
case's weights) are answered ahead of time: `scores` is a table of those values, keyed
by the call, sent with the case, so the worker answers them without a round trip over
the pipe. The table holds numbers only, each what `answer` gives for that call; any
other call (another rate, the creation time, another memory's signals) still comes here.

    oracle = Oracle(request)
    oracle.answer({"call": "importance_score", "args": [8], "kwargs": {}}) -> {"value": 0.8}
    oracle.answer({"call": "importance_score", "args": [3], "kwargs": {}}) -> {"refused": True}
        (when no memory of the case is rated 3)
    oracle.scores() -> {"parameters": {...}, "answers": {'["importance_score", [8.0]]': 0.8, ...}}

Deliberately left out: judging (grading/judge/verdict.py); a call's reply is a number or a
refusal, never a message.
"""

from __future__ import annotations

import inspect
import math
import struct
import sys
from collections.abc import Mapping
from datetime import datetime

from grading.layout import ROOT
from grading.sandbox.worker import call_key, plain  # the worker's own form of a call

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
PARAMETERS = {  # name -> [[parameter], [parameter, default], ...]: how a call binds
    name: [[p.name] if p.default is p.empty else [p.name, plain(p.default)]
           for p in inspect.signature(getattr(reference, name)).parameters.values()]
    for name in FUNCTIONS
}  # fmt: skip
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


def _memories_in(request: dict) -> list[dict]:
    """The {"memory": fields} of an optional milestone's request (its first argument)."""
    args = request.get("args") if "module" in request else None
    first = args[0] if isinstance(args, list) and args else None
    if not isinstance(first, list):
        return []
    return [m for m in first if isinstance(m, dict) and isinstance(m.get("memory"), dict)]


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
        # an optional milestone's memories (reflection_groups): relevance between any two
        self.pairwise = [_vector(m["memory"].get("embedding")) for m in _memories_in(request)]
        self.vectors += [v for v in self.pairwise if v is not None]
        self.calls = CALLS_PER_MEMORY * (len(memories) + len(self.pairwise) + 1)
        self.signals = self._signals()
        self.request = request

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
        if self.calls < 0:
            return {"refused": True}
        return self.reply(call)

    def scores(self) -> dict:
        """The answers to the calls a retriever makes about each of the case's memories, as
        the worker keys them (call_key): what `reply` gives, computed here, ahead of time."""
        answers = {}

        def ask(name: str, *args) -> float | None:
            call = {"call": name, "args": plain(list(args)), "kwargs": {}}
            value = self.reply(call).get("value")
            if type(value) is float:
                answers[call_key(call, PARAMETERS)] = value
            return value

        for one in self.pairwise:  # reflection_groups compares each memory with the others
            for other in self.pairwise:
                if one is not None and other is not None:
                    ask("relevance_score", one, other)
        query, now = self.request.get("query", []), self.request.get("now")
        rate, weights = self.rates[-1], self.weights[-1]  # the case's own, else the defaults
        table = self.request.get("half_lives")  # Milestone 5: recency by each memory's kind
        for memory in self.request.get("memories", []):
            stored = [struct.unpack("f", struct.pack("f", v))[0] for v in memory["embedding"]]
            rel = ask("relevance_score", query, stored)  # the store keeps float32 vectors
            when, kind = memory["last_accessed"], memory.get("kind", "episodic")
            if table is None:
                rec = ask("recency_score", now, when, rate)
            else:
                rec = ask("kind_recency_score", now, when, kind, table)
            imp = ask("importance_score", memory["importance"])
            if None not in (rel, rec, imp):
                ask("retrieval_score", rel, rec, imp, weights)
        return {"parameters": PARAMETERS, "answers": answers}

    def reply(self, call: dict) -> dict:
        """`answer` without counting the call against the case's budget."""
        name, args, kwargs = call.get("call"), call.get("args"), call.get("kwargs")
        if name not in FUNCTIONS:
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
            pair = [any(_same_vector(u, v) for v in self.pairwise) for u in (query, vector)]
            return [query, vector] if all(pair) else None
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
