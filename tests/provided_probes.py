"""Calls of provided functions that compute a milestone's result, and the stub each meets.

Shared by tests/test_provided_code.py (the learner core cleared in a copy of code/) and
tests/grading/test_provided_code_edition.py (the student edition as released): run with
the learner's stubs in place, each probe must raise "not implemented yet" naming the
learner function and milestone given here; run on the reference, each must return.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SETUP = """
from memory_store import Memory, MemoryStore
NOW, HOUR, Q = 1_000_000.0, 3600.0, [1.0, 0.0]
store = MemoryStore()
for i, (vector, kind) in enumerate([([1.0, 0.0], "semantic"), ([0.0, 1.0], "episodic"),
                                    ([1.0, 1.0], "procedural")]):
    store.add(Memory(f"m{i}", f"memory {i}", kind=kind, created_at=NOW - (i + 1) * HOUR,
                     importance=5 + i, embedding=vector))
"""

# provided function -> (a call, with SETUP run first; the learner function it waits for)
PROBES = {
    "extensions.kinds.rank_by_kind": (
        "from extensions.kinds import rank_by_kind\nrank_by_kind(store, Q, NOW)",
        "rank_memories (code/retriever.py, Milestone 4)",
    ),
    "extensions.kinds.retrieve_by_kind": (
        "from extensions.kinds import retrieve_by_kind\nretrieve_by_kind(store, Q, NOW, k=1)",
        "retrieve_by_kind (code/retriever.py, Milestone 5)",
    ),
    "extensions.context_budget.recall_within_budget": (
        "from extensions.context_budget import recall_within_budget\n"
        "recall_within_budget(store, Q, NOW, budget_tokens=200)",
        "rank_memories (code/retriever.py, Milestone 4)",
    ),
    "scale.memory_index.MemoryIndex.top_k": (
        "from scale.memory_index import MemoryIndex\nMemoryIndex(store).top_k(Q, NOW, k=2)",
        "rank_memories (code/retriever.py, Milestone 4)",
    ),
    "scale.memory_index.MemoryIndex.retrieve": (
        "from scale.memory_index import MemoryIndex\nMemoryIndex(store).retrieve(Q, NOW, k=2)",
        "retrieve (code/retriever.py, Milestone 4)",
    ),
    # optional milestones: the provided code that runs on them says which one waits
    "extensions.forgetting.prune": (
        "from extensions.forgetting import prune\nprune(store, NOW + 9e6, dry_run=True)",
        "should_forget (code/practice/forgetting_rule.py, optional Milestone 7)",
    ),
    "extensions.forgetting.forgettable": (
        "from extensions.forgetting import forgettable\nforgettable(store, NOW)",
        "should_forget (code/practice/forgetting_rule.py, optional Milestone 7)",
    ),
    "extensions.importance_rating.parse_rating": (
        "from extensions.importance_rating import parse_rating\nparse_rating('Rating: 7')",
        "parse_importance (code/practice/importance_parsing.py, optional Milestone 6)",
    ),
}


def run_probe(code: Path, name: str) -> dict:
    """Run one probe in a fresh interpreter on `code` (a code/ folder): what it raised."""
    call, _ = PROBES[name]
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(code)!r})\n"
        f"{SETUP}\n"
        "try:\n" + "".join(f"    {line}\n" for line in call.splitlines()) + ""
        "except NotImplementedError as error:\n"
        "    print(json.dumps({'raised': type(error).__name__, 'message': str(error)}))\n"
        "else:\n"
        "    print(json.dumps({'raised': None, 'message': ''}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=code, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def expected_words(name: str) -> list[str]:
    """The words a probe's message must hold: "not implemented yet", the function, where."""
    learner = PROBES[name][1]
    function, where = learner.split(" (", 1)
    return ["not implemented yet", function, where.split(",")[0]] + (
        [where.split(", ")[1].rstrip(")")] if ", " in where else []
    )
