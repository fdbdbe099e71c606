"""Load on loopback: recall and write throughput, and the HNSW shortlist's recall@5.

    python benchmarks/bench_postgres_hnsw.py                          # 10k and 100k per user
    python benchmarks/bench_postgres_hnsw.py --sizes 10000 --seconds 5 --clients 2   # quick
    python benchmarks/bench_postgres_hnsw.py --json results.json

Starts the embedded server (storage/pg_server.py) in a temporary folder, listening on
127.0.0.1 only, and for each size N seeds one user with N memories (384-dimensional
embeddings around 32 topics, last accesses from minutes to a year ago, importance 1-10).
Then `--clients` processes, each with its own connection and its own copy of the store,
run two phases of `--seconds` each, every client capped at `--rate` operations a second:

    recall    scale.pg_retrieval.retrieve_sql(store, query, now, k=5): the exact top 5
              from the SQL score, rescored by the learner's functions, winners saved
    write     store.add of a new memory with an id from store.next_id()

and reports operations per second (all clients together) and p50/p95 latency in ms.
It also measures the course's candidate-then-rerank path on an HNSW index (40
candidates; the index is made at the first size and kept, so larger sizes are seeded
and written with it in place, as a production table would be): its latency, and its
recall@5 against the exact ranking (the share of the exact top 5 it returns), over
`--queries` queries.

Everything is bounded: clients (at most 8), seconds (at most 60 a phase), rate (at most
500 a client), and the only address used is the loopback one. Timings share a 2-core
machine with the server itself and with other work: compare medians from one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from memory_store import Memory  # noqa: E402
from scale.pg_retrieval import (  # noqa: E402
    candidates_then_rerank,
    create_hnsw_index,
    retrieve_sql,
    sql_rank,
)
from storage.pg_server import PostgresServer  # noqa: E402
from storage.postgres_store import PostgresMemoryStore  # noqa: E402

NOW = 1_000_000_000.0
HOUR = 3600.0
DIM, TOPICS, K = 384, 32, 5
QUANTUM = 1 / 1024  # embedding values are multiples of this: exact in float32 and float64
LIMITS = {"clients": 8, "seconds": 60.0, "rate": 500.0}


def centres(dim: int = DIM) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((TOPICS, dim)) / np.sqrt(dim)


def memories(n: int, seed: int = 1) -> list[Memory]:
    rng = np.random.default_rng(seed)
    c = centres()
    topics = rng.integers(TOPICS, size=n)
    vectors = np.round((c[topics] + rng.standard_normal((n, DIM)) / np.sqrt(DIM)) / QUANTUM)
    vectors *= QUANTUM
    hours = 10 ** rng.uniform(-1, 3.9, size=n)
    importance = rng.integers(1, 11, size=n)
    return [
        Memory(f"m{i + 1}", f"memory {i} about topic {topics[i]}", created_at=NOW - hours[i] * HOUR,
               importance=int(importance[i]), embedding=vectors[i].tolist())
        for i in range(n)
    ]  # fmt: skip


def query(seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    v = centres()[rng.integers(TOPICS)] + 0.5 * rng.standard_normal(DIM) / np.sqrt(DIM)
    return (np.round(v / QUANTUM) * QUANTUM).tolist()


def client(url, user, phase, seconds, rate, seed, results) -> None:
    """One client process: open the store, run `phase` for `seconds` at most `rate` per second."""
    store = PostgresMemoryStore(url, user)
    rng = np.random.default_rng(seed)
    latencies, start, step = [], time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        if phase == "recall":
            retrieve_sql(store, query(int(rng.integers(1 << 30))), NOW + step, k=K)
        else:
            vector = np.round(rng.standard_normal(DIM) / np.sqrt(DIM) / QUANTUM) * QUANTUM
            store.add(Memory(store.next_id(), f"new {seed} {step}", created_at=NOW,
                             embedding=vector.tolist()))  # fmt: skip
        latencies.append(time.perf_counter() - began)
        step += 1
        pause = start + step / rate - time.perf_counter()  # the rate cap
        if pause > 0:
            time.sleep(pause)
    store.close()
    results.put(latencies)


def phase(url, user, name, clients, seconds, rate) -> dict:
    results = multiprocessing.get_context("fork").Queue()
    workers = [
        multiprocessing.get_context("fork").Process(
            target=client, args=(url, user, name, seconds, rate, 1000 + i, results)
        )
        for i in range(clients)
    ]
    for w in workers:
        w.start()
    # each client's clock starts once it has loaded its store, so throughput is counted
    # over the clients' own `seconds`, not over the loading
    latencies = [x for _ in workers for x in results.get(timeout=seconds + 600)]
    for w in workers:
        w.join(timeout=60)
    ms = sorted(x * 1000 for x in latencies)
    return {
        "ops": len(ms),
        "ops_per_s": len(ms) / seconds,
        "p50_ms": statistics.median(ms),
        "p95_ms": ms[min(len(ms) - 1, int(0.95 * len(ms)))],
    }


def candidate_recall(url, user, admin_url, queries: int) -> dict:
    began = time.perf_counter()
    create_hnsw_index(admin_url, DIM)
    build = time.perf_counter() - began
    kept, exact_ms, rerank_ms = [], [], []
    with PostgresMemoryStore(url, user) as store:
        for q in range(queries):
            vector = query(10_000 + q)
            t = time.perf_counter()
            exact = [r.memory.id for r in sql_rank(store, vector, NOW, k=K)]
            exact_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            rerank = [r.memory.id for r in candidates_then_rerank(store, vector, NOW, k=K)]
            rerank_ms.append((time.perf_counter() - t) * 1000)
            kept.append(len(set(exact) & set(rerank)) / K)
    return {
        "hnsw_build_s": round(build, 1),
        "exact_sql_ms": statistics.median(exact_ms),
        "rerank_ms": statistics.median(rerank_ms),
        "rerank_recall_at_5": statistics.mean(kept),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="memories per user")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0, help="per phase")
    parser.add_argument("--rate", type=float, default=100.0, help="operations/s per client")
    parser.add_argument("--queries", type=int, default=50, help="for the rerank's recall")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    for name, limit in LIMITS.items():
        if not 0 < getattr(args, name) <= limit:
            parser.error(f"--{name} must be in (0, {limit}], got {getattr(args, name)}")
    sizes = [int(s) for s in args.sizes.split(",")]

    folder = tempfile.mkdtemp(prefix="memorylab-pg-bench-")
    server = PostgresServer(folder, listen="127.0.0.1")  # loopback only
    server.start()
    url, admin = server.lab_url(), server.admin_url()
    rows = []
    try:
        for n in sizes:
            user = f"bench-{n}"
            began = time.perf_counter()
            with PostgresMemoryStore(url, user) as store:
                store.extend(memories(n))
            seeded = time.perf_counter() - began
            row = {"n": n, "dim": DIM, "clients": args.clients, "seed_s": round(seeded, 1)}
            for name in ("recall", "write"):
                result = phase(url, user, name, args.clients, args.seconds, args.rate)
                row.update({f"{name}_{key}": value for key, value in result.items()})
            row.update(candidate_recall(url, user, admin, args.queries))
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{'N':>8} {'seed s':>7} {'recall/s':>9} {'p50':>7} {'p95':>7} {'write/s':>8} "
          f"{'p50':>7} {'p95':>7} {'exact ms':>9} {'rerank ms':>9} {'recall@5':>9}")  # fmt: skip
    for r in rows:
        print(
            f"{r['n']:>8} {r['seed_s']:>7} {r['recall_ops_per_s']:>9.1f} "
            f"{r['recall_p50_ms']:>7.1f} "
            f"{r['recall_p95_ms']:>7.1f} {r['write_ops_per_s']:>8.1f} {r['write_p50_ms']:>7.1f} "
            f"{r['write_p95_ms']:>7.1f} {r['exact_sql_ms']:>9.1f} {r['rerank_ms']:>9.1f} "
            f"{r['rerank_recall_at_5']:>9.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
