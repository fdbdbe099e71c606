"""The three course examples, run verbatim, print the numbers the course promises."""

from __future__ import annotations

import contextlib
import io
import textwrap

import pytest

EXAMPLE_1 = """
from scoring import recency_score

now = 1_000_000.0           # epoch seconds (any fixed "now")
hour = 3600.0
# A memory accessed right now vs 1 hour ago vs 2 hours ago, decay_rate = 0.995:
print(recency_score(now, now,          decay_rate=0.995))   # 1.0      (0 hours)
print(recency_score(now, now - hour,   decay_rate=0.995))   # 0.995    (1 hour)
print(recency_score(now, now - 2*hour, decay_rate=0.995))   # 0.990025 (2 hours)
"""

EXAMPLE_2 = """
from scoring import retrieval_score

# Three already-computed (relevance, recency, importance) triples, equal weights:
w = (1.0, 1.0, 1.0)
relevant_but_old    = retrieval_score(rel=0.9, rec=0.10, imp=0.3, weights=w)  # 1.30
fresh_but_off_topic = retrieval_score(rel=0.1, rec=1.00, imp=0.2, weights=w)  # 1.30
relevant_and_fresh  = retrieval_score(rel=0.8, rec=0.90, imp=0.7, weights=w)  # 2.40  ← wins
print(relevant_and_fresh > relevant_but_old, relevant_and_fresh > fresh_but_off_topic)  # True True
"""

EXAMPLE_3 = """
from memory_store import Memory, MemoryStore
from retriever import retrieve

now = 1_000_000.0
store = MemoryStore()
# Same topic embedding [1,0,0]; one is trivial+old, one is important+fresh:
store.add(Memory("m0", "brushed teeth", kind="episodic", created_at=now-1e6,
                 last_accessed=now-1e6, importance=1, embedding=[1.0, 0.0, 0.0]))
store.add(Memory("m1", "decided to default to Groq", kind="semantic", created_at=now-10,
                 last_accessed=now-10,  importance=8, embedding=[1.0, 0.0, 0.0]))

q = [1.0, 0.0, 0.0]   # query embedding — equally relevant to BOTH memories
top = retrieve(store, q, now=now, k=1, weights=(1.0, 1.0, 1.0), decay_rate=0.995)
print(top[0].id)      # 'm1'  — recency + importance break the relevance tie correctly
"""


def run_example(source: str) -> tuple[list[str], dict]:
    """Execute an example as written; return its printed lines and its variables."""
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(textwrap.dedent(source), "<course example>", "exec"), namespace)
    return out.getvalue().splitlines(), namespace


def test_example_1_recency_prints_the_course_values():
    lines, _ = run_example(EXAMPLE_1)
    assert [float(line) for line in lines] == pytest.approx([1.0, 0.995, 0.990025], abs=1e-12)


def test_example_2_scores_and_winner_match_the_course():
    lines, ns = run_example(EXAMPLE_2)
    assert lines == ["True True"]
    assert ns["relevant_but_old"] == pytest.approx(1.30)
    assert ns["fresh_but_off_topic"] == pytest.approx(1.30)
    assert ns["relevant_and_fresh"] == pytest.approx(2.40)


def test_example_3_relevance_tie_is_broken_to_m1():
    lines, ns = run_example(EXAMPLE_3)
    assert lines == ["m1"]
    store, now = ns["store"], ns["now"]
    # retrieval refreshed the winner and left the loser alone
    assert store.get("m1").last_accessed == pytest.approx(now)
    assert store.get("m0").last_accessed == pytest.approx(now - 1e6)
