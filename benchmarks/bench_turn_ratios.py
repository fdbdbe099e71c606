"""A chat turn at 10,000 and 100,000 memories, on SQLite and PostgreSQL: the three ratios.

    python benchmarks/bench_turn_ratios.py                                   # both, 10k and 100k
    python benchmarks/bench_turn_ratios.py --sizes 10000 --backends sqlite --turns 3   # quick

With the default embedder (the hybrid, 2,000 numbers a memory) and the offline chat model,
for each backend and size N: one user's store of N memories (the vectors of 500 distinct
sentences, embedded once, each memory one of them with its own id, time and importance),
then, in this process:

    cold turn     the first turn of the store object that loaded the memories: the file's
                  first turn ever, which builds what a turn ranks from (on SQLite the
                  shortlist's arrays, then saved in the file: scale/sqlite_matrix_file.py)
    first turn    a new store object's first chat_with_memory(question, store,
                  write_back=False), what a restarted app pays (opening: the open column)
    steady turn   the median of the next --turns turns on that store object
    baseline      the question's embedding (Embedder.query on the store) plus one plain
                  top-k read: on PostgreSQL one SQL statement (pgvector's <=> + recency +
                  importance, ORDER BY score LIMIT 3, as the store's role); on SQLite one
                  numpy pass over a float32 matrix of the user's vectors, held in RAM
    RSS/memory    the process's resident memory after a whole-store retrieve (the
                  learner's retrieve over a new store object) and gc, minus before it,
                  divided by N

and prints, per row, first/steady (target <= 1.5), steady/baseline (target <= 1.5) and
RSS per memory in KB (target <= 4). The machine is shared: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from chat_with_memory import chat_with_memory  # noqa: E402
from embedding_helpers import Embedder  # noqa: E402
from memory_store import Memory  # noqa: E402
from retriever import retrieve  # noqa: E402

NOW = 1_000_000_000.0
K, POOL, BATCH = 3, 500, 5_000
QUESTIONS = [
    "which API do I use for quick experiments?", "where do I live now?",
    "what did we decide about the deploy?", "who did I have lunch with?",
    "what am I allergic to?", "which editor theme do I like?", "what car do I drive?",
    "when is the next review?",
]  # fmt: skip
SUBJECTS = ["I", "We", "My sister", "The team", "Caroline", "Melanie", "My manager", "Bob"]
VERBS = ["moved to", "decided on", "had lunch at", "is allergic to", "drives", "prefers",
         "reviewed", "painted"]  # fmt: skip
OBJECTS = ["Lisbon", "Groq for quick experiments", "the Friday deploy", "peanuts",
           "a blue Volvo", "a dark editor theme", "the quarterly review", "sunsets",
           "the Porto office", "Ollama on the laptop"]  # fmt: skip


def pool(embedder: Embedder) -> list:
    """POOL sentences and their default embeddings, embedded once."""
    texts = [
        f"{SUBJECTS[i % 8]} {VERBS[(i // 8) % 8]} {OBJECTS[(i // 64) % 10]} ({i})"
        for i in range(POOL)
    ]
    return [(text, embedder.memory("p", text, now=NOW).embedding) for text in texts]


def memories(n: int, sentences: list, model: str):
    rng = np.random.default_rng(n)
    for i in range(n):
        text, vector = sentences[i % len(sentences)]
        t = NOW - 3600 * 10 ** (-1 + 4.9 * rng.random())
        yield Memory(f"m{i + 1}", text, created_at=t, importance=1 + i % 10,
                     embedding=vector, embedding_model=model)  # fmt: skip


def rss_kb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def turn(store, embedder, i: int) -> float:
    began = time.perf_counter()
    chat_with_memory(QUESTIONS[i % len(QUESTIONS)] + f" ({i})", store, now=NOW + 60 * i,
                     embedder=embedder, write_back=False)  # fmt: skip
    return time.perf_counter() - began


def numpy_top_k(matrix, norms, last, importance, query, now) -> np.ndarray:
    q = np.asarray(query, dtype=np.float32)
    cos = matrix @ q / (norms * np.linalg.norm(q))
    hours = np.maximum(0.0, (now - last) / 3600)
    score = cos + 0.995**hours + importance / 10
    return np.argpartition(-score, K)[:K]


def measure(backend: str, n: int, turns: int, embedder, sentences, where) -> dict:
    open_store, plain = where[:2]
    store, batch = open_store(), []
    for memory in memories(n, sentences, embedder.model):
        batch.append(memory)
        if len(batch) == BATCH:
            store.extend(batch)
            batch = []
    if batch:
        store.extend(batch)
    cold = turn(store, embedder, 1000)  # the file's first turn ever: an index is built in it
    store.close()
    began = time.perf_counter()
    store = open_store()  # a new store object, as a restarted app makes
    opened = time.perf_counter() - began
    first = turn(store, embedder, 0)
    steady = statistics.median(turn(store, embedder, i) for i in range(1, turns + 1))
    baseline = []
    probe = plain(store)
    for i in range(turns):
        t = time.perf_counter()
        # a question not asked before, as a turn's is: its embedding is computed, not cached
        query = embedder.query(store, QUESTIONS[i % len(QUESTIONS)] + f" (base {i})")
        probe(query, NOW + 60 * i)
        baseline.append(time.perf_counter() - t)
    store.close()
    per_memory = rss_in_a_new_process(backend, where)
    return {"backend": backend, "n": n, "cold": cold, "open": opened, "first": first,
            "steady": steady,
            "baseline": statistics.median(baseline), "rss_kb": per_memory}  # fmt: skip


def rss_in_a_new_process(backend: str, where) -> float:
    """KB per memory that a whole-store retrieve leaves resident, in a process of its own
    (this one's heap already holds what building the store freed, and would reuse it)."""
    import json
    import subprocess

    target = where[2]
    out = subprocess.run(
        [sys.executable, __file__, "--rss", backend, target],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])["kb_per_memory"]


def rss_only(backend: str, target: str) -> None:
    """The child of rss_in_a_new_process: open, one whole-store retrieve, gc, RSS growth."""
    import json

    embedder = Embedder()
    embedder.query  # noqa: B018 (the model loads before the first reading)
    if backend == "sqlite":
        from storage.sqlite_store import PersistentMemoryStore

        def open_store():
            return PersistentMemoryStore(target, "bench")
    else:
        from storage.postgres_store import PostgresMemoryStore

        url, user = target.split(" ", 1)

        def open_store():
            return PostgresMemoryStore(url, user)

    warm = open_store()
    query = embedder.query(warm, QUESTIONS[0])  # the model and the counts load first
    n = len(warm)
    warm.close()
    gc.collect()
    before = rss_kb()
    store = open_store()
    retrieve(store, query, now=NOW, k=K)
    store.save()
    gc.collect()
    print(json.dumps({"kb_per_memory": (rss_kb() - before) / n}))


def sqlite_where(folder: Path, n: int):
    from storage.sqlite_store import PersistentMemoryStore

    path = folder / f"bench-{n}.sqlite3"

    def plain(store):
        rows = [(m.embedding, m.last_accessed, m.importance) for m in store.live()]
        matrix = np.asarray([np.asarray(r[0], dtype=np.float32) for r in rows])
        norms = np.linalg.norm(matrix, axis=1)
        last = np.array([r[1] for r in rows])
        importance = np.array([r[2] for r in rows], dtype=np.float64)
        del rows
        return lambda query, now: numpy_top_k(matrix, norms, last, importance, query, now)

    return (lambda: PersistentMemoryStore(path, "bench")), plain, str(path)


def postgres_where(server, n: int):
    from pgvector.psycopg import register_vector

    from storage.postgres_database import SCHEMA, bare_connection
    from storage.postgres_store import PostgresMemoryStore

    user = f"bench-{n}"
    url = server.user_url(user)
    sql = f"""SELECT id, (1 - (embedding <=> %(q)s))
                 + power(0.995, greatest(0, (%(now)s - last_accessed) / 3600))
                 + importance / 10 AS score
              FROM {SCHEMA}.memories
              WHERE user_id = (SELECT {SCHEMA}.session_user_id()) AND superseded_by IS NULL
              ORDER BY score DESC LIMIT {K}"""

    def plain(store):
        db = bare_connection(url)
        register_vector(db)
        return lambda query, now: db.execute(
            sql, {"q": np.asarray(query, dtype=np.float32), "now": now}
        ).fetchall()

    return (lambda: PostgresMemoryStore(url, user)), plain, f"{url} {user}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rss", nargs=2, metavar=("BACKEND", "TARGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss:
        rss_only(*args.rss)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    embedder = Embedder()  # the default: the hybrid
    sentences = pool(embedder)
    folder = Path(tempfile.mkdtemp(prefix="memorylab-turns-"))
    folder.chmod(0o755)
    server = None
    print(f"{'backend':>9} {'memories':>9} {'cold s':>7} {'open s':>7} {'first s':>8} "
          f"{'steady s':>9} {'base s':>7} {'first/steady':>12} {'steady/base':>11} "
          f"{'KB/memory':>9}",
          flush=True)  # fmt: skip
    try:
        for backend in args.backends.split(","):
            if backend == "postgres":
                from storage.pg_server import PostgresServer

                server = PostgresServer(folder / "pg")
                server.start()
            for n in sizes:
                sqlite = backend == "sqlite"
                where = sqlite_where(folder, n) if sqlite else postgres_where(server, n)
                r = measure(backend, n, args.turns, embedder, sentences, where)
                print(
                    f"{backend:>9} {n:>9,} {r['cold']:>7.3f} {r['open']:>7.3f} {r['first']:>8.3f} "
                    f"{r['steady']:>9.3f} {r['baseline']:>7.3f} {r['first'] / r['steady']:>12.2f} "
                    f"{r['steady'] / r['baseline']:>11.2f} {r['rss_kb']:>9.2f}",
                    flush=True,
                )
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
