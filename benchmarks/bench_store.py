"""Time the SQLite store: one batch extend, one add at a time, reopening; bytes per memory.

    python benchmarks/bench_store.py                         # 100,000 memories, 3 repeats
    python benchmarks/bench_store.py --n 10000 --repeats 1   # a quick run

For N synthetic memories (384 float32 values each, a short text, metadata) it reports
medians over the repeats of:

    extend s        PersistentMemoryStore.extend(all N): one transaction, one executemany
    add ms          add() one memory at a time (its own transaction and fsync), per memory,
                    measured on --adds memories and extrapolated to N as "adds s"
    reopen s        PersistentMemoryStore(path) of the N-memory file: integrity_check, every
                    row's checksum, every Memory built again
    bytes/memory    the .sqlite3 after closing (with its -wal folded in), divided by N
    add to N ms     add() of one memory to the reopened N-memory store (mean of 10)
    txn on N ms     the same inside `with store.transaction():`, as a chat turn writes back

The figures are written to benchmarks/store_results.json (and quoted in docs/store.md).
The machine's other work makes single timings noisy: compare medians from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from memory_store import Memory  # noqa: E402
from storage.sqlite_store import PersistentMemoryStore  # noqa: E402

NOW = 1_000_000_000.0  # epoch seconds
DIM = 384


def memories(n: int, seed: int = 0, prefix: str = "m") -> list[Memory]:
    """n memories with float32-exact 384-dimensional embeddings, as a real store holds."""
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    rows = vectors.astype(np.float64).tolist()  # (n, 384) floats, each a float32 exactly
    return [
        Memory(
            f"{prefix}{i}",
            f"note {i}: the user mentioned topic {i % 97} while planning the week",
            created_at=NOW - i,
            importance=1 + i % 10,
            embedding=row,
            embedding_model="bench/float32-384",
            metadata={"role": "user"},
        )
        for i, row in enumerate(rows)
    ]


def one_run(n: int, adds: int, folder: Path) -> dict:
    batch = memories(n)
    path = folder / f"extend-{time.monotonic_ns()}.sqlite3"
    with PersistentMemoryStore(path, user_id="bench") as store:
        start = time.perf_counter()
        store.extend(batch)
        extend_s = time.perf_counter() - start
    size = path.stat().st_size  # closed: the -wal is folded in and removed
    start = time.perf_counter()
    with PersistentMemoryStore(path, user_id="bench") as reopened:
        reopen_s = time.perf_counter() - start
        assert len(reopened) == n
        extra = memories(20, seed=2, prefix="f")
        start = time.perf_counter()
        for memory in extra[:10]:
            reopened.add(memory)
        full_add_ms = (time.perf_counter() - start) / 10 * 1000
        start = time.perf_counter()
        for memory in extra[10:]:
            with reopened.transaction():  # what a chat turn's write-back does
                reopened.add(memory)
        full_transaction_ms = (time.perf_counter() - start) / 10 * 1000
    singles = memories(adds, seed=1, prefix="a")
    single_path = folder / f"adds-{time.monotonic_ns()}.sqlite3"
    with PersistentMemoryStore(single_path, user_id="bench") as store:
        start = time.perf_counter()
        for memory in singles:
            store.add(memory)
        add_ms = (time.perf_counter() - start) / adds * 1000
    for file in (path, single_path):
        file.unlink()
    return {
        "extend_s": extend_s,
        "reopen_s": reopen_s,
        "bytes": size,
        "add_ms": add_ms,
        "full_add_ms": full_add_ms,
        "full_transaction_ms": full_transaction_ms,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--adds", type=int, default=500, help="memories added one at a time")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "store_results.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        runs = [one_run(args.n, args.adds, Path(folder)) for _ in range(args.repeats)]
    median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    result = {
        "n": args.n,
        "dim": DIM,
        "repeats": args.repeats,
        "cores": os.cpu_count(),
        "extend_s": round(median["extend_s"], 2),
        "add_ms": round(median["add_ms"], 2),
        "adds_s_extrapolated": round(median["add_ms"] * args.n / 1000, 1),
        "reopen_s": round(median["reopen_s"], 2),
        "bytes_per_memory": round(median["bytes"] / args.n),
        "add_to_full_ms": round(median["full_add_ms"], 1),
        "transaction_on_full_ms": round(median["full_transaction_ms"], 1),
    }
    print(
        f"{'N':>8} {'extend s':>9} {'add ms':>7} {'adds s':>7} {'reopen s':>9} {'B/memory':>9}"
        f" {'add to N ms':>12} {'txn on N ms':>12}"
    )
    print(
        f"{result['n']:>8} {result['extend_s']:>9} {result['add_ms']:>7} "
        f"{result['adds_s_extrapolated']:>7} {result['reopen_s']:>9} "
        f"{result['bytes_per_memory']:>9} {result['add_to_full_ms']:>12} "
        f"{result['transaction_on_full_ms']:>12}"
    )
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
