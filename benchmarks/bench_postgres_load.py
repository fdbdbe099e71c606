"""Load with a restart: 8 clients, 4 users, recall and write-back mixed, the server restarted.

    python benchmarks/bench_postgres_load.py                 # 100,000 memories a user, 60 s
    python benchmarks/bench_postgres_load.py --memories 2000 --seconds 20   # quick

Starts the embedded server on 127.0.0.1 (loopback only) in a temporary folder, gives each
of `--users` users `--memories` memories of 384 dimensions and a login role of its own,
and runs `--clients` client processes (client i serves user i mod users) for `--seconds`.
Each client loops: a recall (scale.pg_retrieval.recall: the SQL shortlist, the learner's
retrieve, its refreshes saved) or, one time in four, a write-back (store.add of a new
memory). Half-way through, the server is restarted (pg_ctl stop -m fast, then start).

A client retries an operation only on ConnectionLost (the server rolled that transaction
back: nothing of it was written), with a short pause; any other error ends the run as a
failure. The clients of one user take turns (an OS lock per user, so that a user's
operations have one order, numbered as they run); different users run in parallel.

Then every operation is replayed in that order by one client, against a second database
seeded identically, and the run passes only if every recall returned the same memories
and every user's rows (ids and last_accessed) are identical in both databases, and every
write is stored exactly once. It prints the operations a second, p50/p95 latency (of the
operation itself, retries included, not the wait for the user's lock) and the retries.

Everything is bounded: at most 16 clients and 8 users, 120 s, 200,000 memories a user;
every request loop ends by itself. tests/storage/test_postgres_load.py runs it small.
"""

from __future__ import annotations

import argparse
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
from scale.pg_retrieval import recall  # noqa: E402
from storage.pg_server import PostgresServer  # noqa: E402
from storage.postgres_database import SCHEMA, ConnectionLost, bare_connection  # noqa: E402
from storage.postgres_store import PostgresMemoryStore  # noqa: E402

NOW = 1_000_000_000.0
DIM, K = 384, 3
MODEL = "memorylab/hashed-bow-384"
LIMITS = {"clients": 16, "users": 8, "seconds": 120.0, "memories": 200_000}
RETRIES = 50  # per operation: a restart takes about a second; more is a failure
WRITE_SHARE = 0.25


def seed(admin_url: str, user: str, n: int, seed_value: float) -> None:
    """n memories for `user`, the same for the same seed_value, in any database."""
    db = bare_connection(admin_url)
    try:
        with db.transaction():
            db.execute(f"INSERT INTO {SCHEMA}.users VALUES (%s, %s, %s)", (user, MODEL, DIM))
            db.execute("SELECT setseed(%s)", (seed_value,))
            db.execute(
                f"""INSERT INTO {SCHEMA}.memories (user_id, id, text, kind, created_at,
                        last_accessed, importance, embedding, embedding_model, metadata)
                    SELECT %(user)s, 'm' || i, 'memory number ' || i, 'episodic', t, t,
                           1 + (i %% 10), v::vector, %(model)s, '{{}}'
                    FROM (SELECT i, %(now)s - 3600 * round(power(10, -1 + 4.9 * random())) AS t,
                                 (SELECT array_agg(round(random() * 64 - 32) / 64)
                                  FROM generate_series(1, %(dim)s) WHERE i > 0) AS v
                          FROM generate_series(1, %(n)s) AS i ORDER BY i) AS rows""",
                {"user": user, "model": MODEL, "now": NOW, "dim": DIM, "n": n},
            )
        db.execute(f"VACUUM ANALYZE {SCHEMA}.memories")
    finally:
        db.close()


def fingerprint(admin_url: str, user: str) -> list[tuple]:
    """(id, last_accessed, md5 of the vector) of every row of `user`, in seq order."""
    db = bare_connection(admin_url)
    try:
        return db.execute(
            f"SELECT id, last_accessed, md5(embedding::text) FROM {SCHEMA}.memories "
            "WHERE user_id = %s ORDER BY id",
            (user,),
        ).fetchall()
    finally:
        db.close()


def operation(rng: np.random.Generator, client: int, step: int):
    """The client's next operation: ("recall", query) or ("write", memory fields)."""
    vector = (np.round(rng.standard_normal(DIM) * 8) / 64).tolist()  # exact in float32
    if rng.random() < WRITE_SHARE:
        importance = int(rng.integers(1, 11))
        return "write", (f"c{client}-{step}", f"client {client} step {step}", importance, vector)
    return "recall", vector


def apply(store, op, now) -> list[str] | None:
    kind, payload = op
    if kind == "recall":
        return [m.id for m in recall(store, payload, now, k=K)]
    memory_id, text, importance, vector = payload
    store.add(Memory(memory_id, text, created_at=now, importance=importance, embedding=vector,
                     embedding_model=MODEL))  # fmt: skip
    return None


def client(index, url, user, seconds, lock, counter, results) -> None:
    """One client process: its operations until `seconds` pass, each retried on ConnectionLost."""
    rng = np.random.default_rng(1000 + index)
    log, failure = [], None
    try:
        store = PostgresMemoryStore(url, user)
        deadline, step = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            op = operation(rng, index, step)
            with lock:
                order = counter.value
                counter.value += 1
                now = NOW + 60.0 * order
                began, retries = time.perf_counter(), 0
                while True:
                    try:
                        answer = apply(store, op, now)
                        break
                    except ConnectionLost:
                        retries += 1
                        if retries > RETRIES:
                            raise
                        time.sleep(0.05)
                latency = time.perf_counter() - began
            log.append((order, op, now, answer, retries, latency))
            step += 1
        store.close()
    except Exception as error:  # reported to the parent, which fails the run
        failure = f"client {index}: {type(error).__name__}: {error}"
    results.put((index, log, failure))


def run_load(memories: int, users: int, clients: int, seconds: float, restart: bool = True,
             say=print) -> dict:  # fmt: skip
    """The whole run; returns its figures, or raises AssertionError saying what differed."""
    for name, value in (("clients", clients), ("users", users), ("seconds", seconds),
                        ("memories", memories)):  # fmt: skip
        if not 0 < value <= LIMITS[name]:
            raise ValueError(f"{name} must be in (0, {LIMITS[name]}], got {value}")
    folder = tempfile.mkdtemp(prefix="memorylab-pg-load-")
    server = PostgresServer(folder, listen="127.0.0.1")  # loopback only
    try:
        server.start()
        server.create_database("replay")
        names = [f"load-{u}" for u in range(users)]
        urls = {}
        for u, user in enumerate(names):
            for database in ("memorylab", "replay"):
                server.user_url(user, database)
                seed(server.admin_url(database), user, memories, 0.1 + u / 100)
            urls[user] = server.user_url(user)
        for user in names:
            assert fingerprint(server.admin_url(), user) == fingerprint(
                server.admin_url("replay"), user
            ), f"the two databases were not seeded alike for {user}"
        say(f"seeded {users} users x {memories:,} memories twice; {clients} clients, {seconds:g} s")
        context = multiprocessing.get_context("fork")
        locks = {user: context.Lock() for user in names}
        counters = {user: context.Value("q", 0, lock=False) for user in names}
        results = context.Queue()
        workers = []
        for i in range(clients):
            user = names[i % users]
            workers.append(context.Process(
                target=client, args=(i, urls[user], user, seconds, locks[user], counters[user],
                                     results)))  # fmt: skip
        began = time.monotonic()
        for worker in workers:
            worker.start()
        restarted = None
        if restart:
            time.sleep(seconds / 2)
            server.stop()
            server.start()
            restarted = time.monotonic() - began
            say(f"server restarted at {restarted:.1f} s")
        reports = [results.get(timeout=seconds + 300) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
        failures = [failure for _, _, failure in reports if failure]
        assert not failures, "; ".join(failures)
        logs = {i: log for i, log, _ in reports}
        figures = _figures(logs, seconds)
        say(f"{figures['ops']} operations, {figures['ops_per_s']:.1f}/s; p50 "
            f"{figures['p50_ms']:.1f} ms, p95 {figures['p95_ms']:.1f} ms; "
            f"{figures['retried']} operations retried after a disconnect")  # fmt: skip
        _replay(server, names, urls, logs, clients, users, say)
        figures["restarted_at_s"] = restarted
        return figures
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _figures(logs: dict, seconds: float) -> dict:
    entries = [entry for log in logs.values() for entry in log]
    ms = sorted(entry[5] * 1000 for entry in entries)
    return {
        "ops": len(ms),
        "ops_per_s": len(ms) / seconds,
        "p50_ms": statistics.median(ms),
        "p95_ms": ms[min(len(ms) - 1, int(0.95 * len(ms)))],
        "writes": sum(entry[1][0] == "write" for entry in entries),
        "retried": sum(entry[4] > 0 for entry in entries),
    }


def _replay(server, names, urls, logs, clients, users, say) -> None:
    """One client, every operation in its user's order, on the replay database: the same."""
    for u, user in enumerate(names):
        ordered = sorted(
            (entry for i, log in logs.items() if i % users == u for entry in log),
            key=lambda entry: entry[0],
        )
        assert [entry[0] for entry in ordered] == list(range(len(ordered))), (
            f"{user}: the operations' numbers have gaps or repeats"
        )
        with PostgresMemoryStore(server.user_url(user, "replay"), user) as store:
            for order, op, now, answer, _, _ in ordered:
                again = apply(store, op, now)
                assert again == answer, (
                    f"{user}, operation {order}: {op[0]} returned {answer} under load, "
                    f"{again} when replayed alone"
                )
        loaded, alone = (
            fingerprint(server.admin_url(), user),
            fingerprint(server.admin_url("replay"), user),
        )
        writes = [entry[1][1][0] for entry in ordered if entry[1][0] == "write"]
        stored = {row[0] for row in loaded}
        assert all(w in stored for w in writes), f"{user}: a write that returned is not stored"
        assert loaded == alone, f"{user}: the rows differ from a single client's replay"
        say(f"{user}: {len(ordered)} operations replayed alone: identical "
            f"({len(writes)} writes, each stored once)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000, help="per user")
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--no-restart", action="store_true")
    args = parser.parse_args()
    run_load(args.memories, args.users, args.clients, args.seconds, not args.no_restart)


if __name__ == "__main__":
    main()
