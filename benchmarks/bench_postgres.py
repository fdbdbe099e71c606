"""A chat turn on PostgreSQL against one plain SQL top-k, at 1k, 10k and 100k memories a user.

    python benchmarks/bench_postgres.py                    # 1,000, 10,000 and 100,000
    python benchmarks/bench_postgres.py --sizes 1000,10000 --turns 10      # quick

Starts the embedded server (storage/pg_server.py) in a temporary folder, on its unix
socket only, and for each size N gives one user N memories of 384 dimensions (written by
the administrator in one INSERT ... SELECT: random directions, last accesses from minutes
to a year ago, importance 1-10) and a login role of its own (create_user). Then, in this
one client process, for that user:

    open        PostgresMemoryStore(url, user): seconds, and the client's RSS growth
                (resident memory after the turns minus before the open, in MB)
    chat turn   chat_with_memory(question, store, write_back=False): embed the question
                (memorylab/hashed-bow-384), the SQL shortlist, the learner's retrieve on
                it, the prompt, a reply (litellm's mock_response: the model's own time
                is the same at any size; with memorylab/minilm-l6-v2 and the offline
                chat model, which embed with MiniLM in numpy, a turn costs about 0.35 s
                more on this machine), the refreshes saved
    recall      scale.pg_retrieval.recall alone (the memory part of the turn)
    plain SQL   one statement on the same table and the same role: pgvector's <=> +
                power(decay, hours) + importance / 10, ORDER BY score DESC LIMIT 3

k = 3. Chat turns and plain queries alternate, each on a fresh question, and the medians
(p50) and 95th percentiles are printed; the last line is the ratio of the chat turn's
median to the plain query's at 100,000 memories (or the largest size run). The machine
is shared: compare ratios from one run, not times across runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from pgvector.psycopg import register_vector

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from chat_with_memory import chat_with_memory  # noqa: E402
from config import Settings  # noqa: E402
from embedding_helpers import Embedder  # noqa: E402
from scale.pg_retrieval import recall  # noqa: E402
from storage.pg_server import PostgresServer  # noqa: E402
from storage.postgres_database import SCHEMA, bare_connection  # noqa: E402
from storage.postgres_store import PostgresMemoryStore  # noqa: E402

NOW = 1_000_000_000.0
DIM, K = 384, 3
MODEL = "memorylab/hashed-bow-384"  # 384 dimensions, embeds a query without reading the store
SIZES = (1_000, 10_000, 100_000)
TURN = Settings(embed_model=MODEL, db_path=None, top_k=K)
QUESTIONS = [
    "which API do I use for quick experiments?", "where do I live now?",
    "what did we decide about the deploy?", "who did I have lunch with?",
    "what am I allergic to?", "which editor theme do I like?", "what car do I drive?",
    "when is the next review?",
]  # fmt: skip
PLAIN_SQL = f"""
SELECT id,
       %(w)s * (1 - (embedding <=> %(q)s))
     + %(w)s * power(%(decay)s, greatest(0, (%(now)s - last_accessed) / 3600))
     + %(w)s * (importance / 10) AS score
FROM {SCHEMA}.memories
WHERE user_id = (SELECT {SCHEMA}.session_user_id()) AND superseded_by IS NULL
ORDER BY score DESC LIMIT {K}
"""


def seed(admin_url: str, user: str, n: int) -> None:
    """n memories for `user`, written by the administrator in one statement."""
    db = bare_connection(admin_url)
    try:
        with db.transaction():
            db.execute(f"INSERT INTO {SCHEMA}.users VALUES (%s, %s, %s)", (user, MODEL, DIM))
            db.execute(f"SELECT setseed(0.{n % 9973})")
            db.execute(
                f"""INSERT INTO {SCHEMA}.memories (user_id, id, text, kind, created_at,
                        last_accessed, importance, embedding, embedding_model, metadata)
                    SELECT %(user)s, 'm' || i, 'memory number ' || i, 'episodic', t, t,
                           1 + (i %% 10), v::vector, %(model)s, '{{}}'
                    FROM (SELECT i, %(now)s - 3600 * power(10, -1 + 4.9 * random()) AS t,
                                 (SELECT array_agg(random() - 0.5) FROM generate_series(1, %(dim)s)
                                  WHERE i > 0) AS v
                          FROM generate_series(1, %(n)s) AS i) AS rows""",
                {"user": user, "model": MODEL, "now": NOW, "dim": DIM, "n": n},
            )
            db.execute(f"INSERT INTO {SCHEMA}.id_counters VALUES (%s, 'm', %s)", (user, n))
        db.execute(f"VACUUM ANALYZE {SCHEMA}.memories")
    finally:
        db.close()


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(server: PostgresServer, n: int, turns: int, embedder: Embedder) -> dict:
    user = f"bench-{n}"
    url = server.user_url(user)  # installs the schema the first time
    began = time.perf_counter()
    seed(server.admin_url(), user, n)
    seeded = time.perf_counter() - began
    before = rss_mb()
    began = time.perf_counter()
    store = PostgresMemoryStore(url, user)
    opened = time.perf_counter() - began
    plain = bare_connection(url)  # the same role, the same policies: plain psycopg
    register_vector(plain)
    rng = np.random.default_rng(n)
    chat_ms, recall_ms, plain_ms = [], [], []
    try:
        for turn in range(turns):
            now = NOW + 60 * turn
            question = QUESTIONS[turn % len(QUESTIONS)] + f" ({turn})"
            t = time.perf_counter()
            chat_with_memory(question, store, now=now, settings=TURN, embedder=embedder,
                             write_back=False, mock_response="Noted.")  # fmt: skip
            chat_ms.append((time.perf_counter() - t) * 1000)
            vector = rng.standard_normal(DIM).astype(np.float32)
            t = time.perf_counter()
            recall(store, vector.tolist(), now, k=K)
            recall_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            plain.execute(PLAIN_SQL, {"q": vector, "w": 1.0, "decay": 0.995, "now": now}).fetchall()
            plain_ms.append((time.perf_counter() - t) * 1000)
        grown = rss_mb() - before
    finally:
        plain.close()
        store.close()
    return {
        "n": n, "seed_s": seeded, "open_s": opened, "rss_mb": grown,
        "chat_p50": statistics.median(chat_ms), "chat_p95": percentile(chat_ms, 0.95),
        "recall_p50": statistics.median(recall_ms), "recall_p95": percentile(recall_ms, 0.95),
        "sql_p50": statistics.median(plain_ms), "sql_p95": percentile(plain_ms, 0.95),
    }  # fmt: skip


def warm_up_chat() -> None:
    """One turn on an in-memory store: litellm and the offline model load before timing."""
    from memory_store import Memory, MemoryStore

    store = MemoryStore(MODEL)
    store.add(Memory("m1", "warm", created_at=NOW, embedding=[1.0] * DIM, embedding_model=MODEL))
    chat_with_memory("warm?", store, now=NOW, settings=TURN, write_back=False, mock_response=".")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="memories per user")
    parser.add_argument("--turns", type=int, default=30, help="chat turns per size (at most 200)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not 1 <= args.turns <= 200 or not all(1 <= n <= 200_000 for n in sizes):
        parser.error("--turns must be in 1..200 and each size in 1..200,000")
    folder = tempfile.mkdtemp(prefix="memorylab-pg-bench-")
    server = PostgresServer(folder)  # its unix socket only
    server.start()
    embedder = Embedder(MODEL)
    warm_up_chat()  # litellm and its mock load before any RSS is read
    print(f"{'memories':>9} {'seed s':>7} {'open s':>7} {'RSS MB':>7} {'chat p50':>9} "
          f"{'p95':>7} {'recall p50':>10} {'p95':>7} {'SQL p50':>8} {'p95':>7}  (ms)")  # fmt: skip
    rows = []
    try:
        for n in sizes:
            r = measure(server, n, args.turns, embedder)
            rows.append(r)
            print(
                f"{n:>9,} {r['seed_s']:>7.1f} {r['open_s']:>7.3f} {r['rss_mb']:>7.1f} "
                f"{r['chat_p50']:>9.1f} {r['chat_p95']:>7.1f} {r['recall_p50']:>10.1f} "
                f"{r['recall_p95']:>7.1f} {r['sql_p50']:>8.1f} {r['sql_p95']:>7.1f}",
                flush=True,
            )
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    last = rows[-1]
    print(
        f"chat turn / plain SQL at {last['n']:,} memories: {last['chat_p50'] / last['sql_p50']:.2f}"
    )


if __name__ == "__main__":
    main()
