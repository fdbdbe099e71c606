"""Conversation datasets for evaluation: the JSON format, its checks, and the loaded set.

A dataset is sessions of dated turns, each with an id, and questions that name the turn
ids holding their answer (docs/evaluation.md shows the full format):

    {"name": "...",
     "sessions": [{"id": "s1", "date": "2025-03-14T09:30:00Z",
                   "turns": [{"id": "t1", "text": "I prefer dark mode",
                              "kind": "semantic", "importance": 6}]}],
     "questions": [{"id": "q1", "question": "Which theme do I like?",
                    "asked_at": "2025-06-01T12:00:00Z", "evidence": ["t1"],
                    "category": "stale_preference"}]}

Each turn becomes a Memory in a MemoryStore (id = turn id, created_at = last_accessed =
its date, kind and importance as given or episodic / 5), and a turn's `supersedes` marks
the older turn it replaces. The whole file is checked before anything is embedded; the
first problem raises DatasetError saying where it is and which rule it broke.

Deliberately left out: ranking and metrics (strategies.py, metrics.py) and making data
(tools/eval_data.py).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from base.validation import IMPORTANCE_RANGE, KINDS, time_problem
from embedding_helpers import Embedder
from embeddings import minilm
from memory_store import Memory, MemoryStore
from scoring import relevance_score

PRECOMPUTED = ".minilm-l6-v2.safetensors"  # beside a dataset: its texts' MiniLM vectors


class DatasetError(ValueError):
    """A dataset file that does not follow the conversation format; says where and why."""


# --- the dataset ---------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    asked_at: float  # epoch seconds
    evidence: tuple[str, ...]  # ids of the turns (memories) that answer it
    category: str


@dataclass
class EvalSet:
    """Memories (one per turn, in file order), questions, and a per-run relevance cache."""

    name: str
    store: MemoryStore
    questions: list[Question]
    embedder: Embedder
    # keyed by the question's words, the only thing relevance depends on (an id can be
    # reused by a question from outside the dataset)
    _relevance: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _support: list[frozenset[int]] = field(default_factory=list, repr=False)
    _bm25: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _bm25_index: object = field(default=None, repr=False)

    def bm25_scores(self, question: Question) -> list[float]:
        """Okapi BM25 of the question's words against every memory, in store order."""
        if question.text not in self._bm25:
            if self._bm25_index is None:
                from evaluation.bm25 import BM25

                self._bm25_index = BM25([m.text for m in self.store])
            self._bm25[question.text] = self._bm25_index.scores(question.text)
        return self._bm25[question.text]

    @property
    def memories(self) -> list[Memory]:
        return list(self.store)

    def categories(self) -> list[str]:
        return sorted({q.category for q in self.questions})

    def relevances(self, question: Question) -> list[float]:
        """relevance_score of the question against every memory, in store order."""
        if question.text not in self._relevance:
            self.prepare(questions=None if question in self.questions else [question])
        return self._relevance[question.text]

    def prepare(self, progress: Callable[[str], None] | None = None, questions=None) -> None:
        """Embed the questions (default: all) in one call and score each against every
        memory; each question is scored once per run, whatever the strategy."""
        todo = [q.text for q in (questions or self.questions) if q.text not in self._relevance]
        if not todo:
            return
        if not self._support:  # which coordinates of each memory are non-zero
            self._support = [_nonzero(m.embedding) for m in self.store]
        queries = self.embedder.queries(self.store, todo)  # the hybrid weighs words by rarity
        dense = self._support and sum(map(len, self._support)) > 32 * len(self._support)
        for done, (text, query) in enumerate(zip(todo, queries), start=1):
            if dense:  # hundreds of non-zero numbers per memory: one matrix product
                self._relevance[text] = _dense_cosines(query, self.store)
            else:
                on = _nonzero(query)
                self._relevance[text] = [
                    _cosine(query, m.embedding, on | support)
                    for m, support in zip(self.store, self._support)
                ]
            if progress and (done % 25 == 0 or done == len(todo)):
                progress(f"relevance: {done}/{len(todo)} questions x {len(self.store)} memories")


def _cosine(a: Sequence[float], b: Sequence[float], support: frozenset[int]) -> float:
    """relevance_score(a, b), computed only on the coordinates where a or b is non-zero.

    The others add nothing to the dot product or to either norm, so the cosine is the
    same; for the sparse offline embeddings that turns 384 numbers into a handful.
    """
    keep = sorted(support) or [0]  # two zero vectors: relevance_score gives 0.0
    return relevance_score([a[i] for i in keep], [b[i] for i in keep])


def _dense_cosines(query: Sequence[float], store: MemoryStore) -> list[float]:
    """relevance_score(query, m.embedding) for every memory, as one numpy product.

    The learner's relevance_score still decides: it scores the first and the best memory
    too, and the two ways must agree to 1e-9 (else every pair goes through it).
    """
    import numpy as np

    memories = list(store)
    matrix = np.array([m.embedding for m in memories], dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
    dots = matrix @ q
    scores = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0).tolist()
    best = int(np.argmax(scores)) if scores else 0
    for i in {0, best} if memories else ():
        if abs(relevance_score(query, memories[i].embedding) - scores[i]) > 1e-9:
            return [relevance_score(query, m.embedding) for m in memories]
    return scores


def _nonzero(vector: Sequence[float]) -> frozenset[int]:
    return frozenset(i for i, x in enumerate(vector) if x)


def load_dataset(source, embedder: Embedder | None = None) -> EvalSet:
    """Read a conversation dataset (a file path, or the already-parsed JSON) into an EvalSet.

    Every turn becomes a Memory (id = turn id, created_at = last_accessed = its date) and
    `supersedes` links become superseded_by. Raises DatasetError naming the first problem.
    """
    if not isinstance(source, str | os.PathLike):
        data, where = source, "dataset"  # already parsed
    else:
        path = Path(source)
        where = path.name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as err:
            raise DatasetError(
                f"{where} is not UTF-8 text: byte 0x{err.object[err.start]:02x} at {err.start}"
            ) from None
        except json.JSONDecodeError as err:
            raise DatasetError(
                f"{where} is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"
            ) from None
    turns, questions = _parse(data, where)
    embedder = embedder or Embedder()
    precomputed = (
        Path(source).with_name(Path(source).stem + PRECOMPUTED) if where != "dataset" else None
    )
    offline = embedder.offline_model  # the precomputed vectors are MiniLM's
    if precomputed is not None and precomputed.is_file() and offline and offline.uses_minilm:
        minilm.preload(precomputed)  # the shipped vectors (tools/eval_embeddings.py)
    vectors = embedder.embed([t["text"] for t in turns])
    store = MemoryStore(embedder.model)
    for turn, vector in zip(turns, vectors):
        meta = {"speaker": turn["speaker"], "session": turn["session"]}
        store.add(
            Memory(turn["id"], turn["text"], kind=turn["kind"], created_at=turn["at"],
                   importance=turn["importance"], embedding=vector,
                   embedding_model=embedder.model, metadata=meta)
        )  # fmt: skip
    for turn in turns:
        if turn["supersedes"] is not None:
            store.supersede(turn["supersedes"], turn["id"])
    return EvalSet(data.get("name") or where, store, questions, embedder)


def _parse(data, where: str) -> tuple[list[dict], list[Question]]:
    """Check the whole structure before anything is embedded; return plain turn records."""
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: the top level must be an object, got {type(data).__name__}")
    _optional_text(data, "name", where)
    sessions = _list(data, "sessions", where)
    turns: list[dict] = []
    seen: dict[str, float] = {}  # turn id -> time
    for s, session in enumerate(sessions):
        here = f"{where}: sessions[{s}]"
        if not isinstance(session, dict):
            raise DatasetError(f"{here} must be an object, got {session!r}")
        sid = _text(session, "id", here)
        default_at = _time(session["date"], f"{here}.date") if "date" in session else None
        for t, turn in enumerate(_list(session, "turns", here)):
            at_ = f"{here}.turns[{t}]"
            if not isinstance(turn, dict):
                raise DatasetError(f"{at_} must be an object, got {turn!r}")
            tid = _text(turn, "id", at_)
            if tid in seen:
                raise DatasetError(f"{at_}: turn id {tid!r} is used twice; ids must be unique")
            if "date" not in turn and default_at is None:
                raise DatasetError(f"{at_} (id {tid!r}) has no 'date' and its session has none")
            at = _time(turn["date"], f"{at_}.date") if "date" in turn else default_at
            kind = turn.get("kind", "episodic")
            if kind not in KINDS:
                raise DatasetError(f"{at_}.kind must be one of {', '.join(KINDS)}, got {kind!r}")
            importance = turn.get("importance", 5)
            low, high = IMPORTANCE_RANGE
            if (
                isinstance(importance, bool)
                or not isinstance(importance, int | float)
                or not (low <= importance <= high)
            ):
                raise DatasetError(
                    f"{at_}.importance must be a number in [1, 10], got {importance!r}"
                )
            old = turn.get("supersedes")
            if old is not None and (not isinstance(old, str) or not old.strip()):
                raise DatasetError(
                    f"{at_}.supersedes must be a turn id (a non-empty string), got {old!r}"
                )
            if old is not None and old not in seen:
                raise DatasetError(
                    f"{at_}.supersedes names {old!r}, which is not an earlier turn in the file"
                )
            if old is not None and seen[old] > at:
                raise DatasetError(f"{at_}.supersedes names {old!r}, which is dated after it")
            if old is not None and any(x["supersedes"] == old for x in turns):
                raise DatasetError(f"{at_}: turn {old!r} is superseded twice; only once is allowed")
            speaker = _optional_text(turn, "speaker", at_, default="user")
            turns.append(dict(id=tid, text=_text(turn, "text", at_), at=at, kind=kind,
                              importance=importance, supersedes=old, speaker=speaker,
                              session=sid))  # fmt: skip
            seen[tid] = at
    latest = max(seen.values())
    questions, ids = [], set()
    for q, item in enumerate(_list(data, "questions", where)):
        here = f"{where}: questions[{q}]"
        if not isinstance(item, dict):
            raise DatasetError(f"{here} must be an object, got {item!r}")
        qid = _text(item, "id", here)
        if qid in ids:
            raise DatasetError(f"{here}: question id {qid!r} is used twice")
        ids.add(qid)
        asked = _time(item["asked_at"], f"{here}.asked_at") if "asked_at" in item else latest
        evidence = _list(item, "evidence", here)
        for tid in evidence:
            if not isinstance(tid, str):
                raise DatasetError(
                    f"{here} (id {qid!r}): evidence must list turn ids (strings), got {tid!r}"
                )
            if tid not in seen:
                raise DatasetError(f"{here} (id {qid!r}): evidence {tid!r} is not a turn id")
            if seen[tid] > asked:
                raise DatasetError(
                    f"{here} (id {qid!r}): evidence {tid!r} is dated after the question is "
                    "asked, so no retriever could find it"
                )
        category = _optional_text(item, "category", here, default="all")
        text = _text(item, "question", here)
        questions.append(Question(qid, text, asked, tuple(evidence), category))
    return turns, questions


def _list(obj: dict, key: str, where: str) -> list:
    value = obj.get(key)
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{where}: {key!r} must be a non-empty list, got {value!r}")
    return value


def _text(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value


def _optional_text(obj: dict, key: str, where: str, default: str | None = None) -> str | None:
    """A field that may be left out (or null), but when given must be a non-empty string."""
    return default if obj.get(key) is None else _text(obj, key, where)


def _time(value, where: str) -> float:
    """ISO 8601 with a time zone ('2025-03-14T09:30:00Z'), or epoch seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return _in_range(float(value), value, where)  # the one rule of base/validation.py
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise DatasetError(
            f"{where} must be an ISO 8601 date like '2025-03-14T09:30:00Z' or epoch seconds, "
            f"got {value!r}"
        ) from None
    if moment.tzinfo is None:
        raise DatasetError(
            f"{where} {value!r} has no time zone; add 'Z' or '+00:00' so it names one "
            "moment on every machine"
        )
    return _in_range(moment.timestamp(), value, where)


def _in_range(seconds: float, value, where: str) -> float:
    problem = time_problem(seconds)
    if problem:
        raise DatasetError(f"{where} {value!r} {problem}")
    return seconds
