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

    python benchmarks/bench_store.py --scale 1000,10000,100000   # what a store costs by size

--scale builds a file of each size once, then reports medians over --repeats of:

    open ms         PersistentMemoryStore(path) of the file (no memory read)
    txn ms          an empty `with store.transaction():`, after opening, and again once
                    every memory has been read ("txn held ms"): what a chat turn pays
    read s          list(store): every row read, checked and held (timed while tracemalloc
                    counts, which slows every allocation: an upper bound)
    recall ms       retrieve(store, query, now, k=3) on a store whose memories are held
    KB/memory       Python memory allocated by opening and reading every memory
                    (tracemalloc), divided by N: what a reopened store costs in RAM

written to benchmarks/store_scale_results.json. --code DIR times another checkout's code/
(e.g. the previous version, for a before/after table) with this same script.
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
if "--code" in sys.argv:  # another checkout's code/, for a before/after table
    CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
else:
    CODE = ROOT / "code"
sys.path.insert(0, str(CODE))

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


def timed(call, repeats: int) -> float:
    """The median of `repeats` timings of call(), in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def empty_transaction(store) -> None:
    with store.transaction():
        pass


def scale_run(n: int, repeats: int, folder: Path, recall: bool = True) -> dict:
    """open, empty transaction, read, recall and RAM a memory for a file of n memories."""
    import tracemalloc

    from retriever import retrieve

    path = folder / f"scale-{n}.sqlite3"
    with PersistentMemoryStore(path, user_id="bench") as store:
        for start in range(0, n, 20_000):  # in chunks: the batch's own Memory objects go
            store.extend(memories(min(20_000, n - start), seed=start, prefix=f"m{start}-"))
    opens, txns, reads, held_txns, recalls, sizes = [], [], [], [], [], []
    query = memories(1, seed=99)[0].embedding
    for _ in range(repeats):
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        store = PersistentMemoryStore(path, user_id="bench")
        opens.append(time.perf_counter() - start)
        txns.append(timed(lambda s=store: empty_transaction(s), 101))
        start = time.perf_counter()
        held = list(store)
        reads.append(time.perf_counter() - start)
        sizes.append((tracemalloc.get_traced_memory()[0] - before) / n)
        tracemalloc.stop()
        assert len(held) == n
        held_txns.append(timed(lambda s=store: empty_transaction(s), 101))
        if recall:  # the learner's loop over every memory: seconds at 100,000
            recalls.append(timed(lambda s=store: retrieve(s, query, NOW, k=3), 1))
        store.close()
        del held
    path.unlink()
    return {
        "n": n,
        "open_ms": round(statistics.median(opens) * 1000, 2),
        "transaction_ms": round(statistics.median(txns) * 1000, 3),
        "transaction_held_ms": round(statistics.median(held_txns) * 1000, 3),
        "read_s": round(statistics.median(reads), 2),
        "recall_ms": round(statistics.median(recalls) * 1000, 1) if recalls else None,
        "kb_per_memory": round(statistics.median(sizes) / 1000, 2),
    }


def scale_main(sizes: list[int], repeats: int, out: Path, recall: bool = True) -> int:
    with tempfile.TemporaryDirectory() as folder:
        results = [scale_run(n, repeats, Path(folder), recall) for n in sizes]
    print(
        f"{'N':>8} {'open ms':>9} {'txn ms':>8} {'txn held ms':>12} {'read s':>7}"
        f" {'recall ms':>10} {'KB/memory':>10}"
    )
    for r in results:
        print(
            f"{r['n']:>8} {r['open_ms']:>9} {r['transaction_ms']:>8} "
            f"{r['transaction_held_ms']:>12} {r['read_s']:>7} {r['recall_ms']!s:>10} "
            f"{r['kb_per_memory']:>10}"
        )
    first, last = results[0], results[-1]
    ratio = last["transaction_held_ms"] / max(first["transaction_held_ms"], 1e-9)
    print(f"empty transaction at {last['n']:,} / at {first['n']:,} (memories held): {ratio:.2f}")
    result = {"dim": DIM, "repeats": repeats, "cores": os.cpu_count(), "sizes": results}
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", help="sizes, e.g. 1000,10000,100000: what a store costs")
    parser.add_argument("--code", help="another checkout's code/ folder to time instead")
    parser.add_argument("--no-recall", action="store_true", help="--scale without the recall")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--adds", type=int, default=500, help="memories added one at a time")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "store_results.json"))
    args = parser.parse_args(argv)
    if args.scale:
        sizes = [int(size) for size in args.scale.split(",")]
        out = ROOT / "benchmarks" / "store_scale_results.json"
        out = Path(args.out) if "--out" in sys.argv else out
        return scale_main(sizes, args.repeats, out, recall=not args.no_recall)
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
