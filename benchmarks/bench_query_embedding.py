"""Time embedding a query with the default hybrid on a SQLite store, by store size.

    python benchmarks/bench_query_embedding.py                     # 1,000 and 10,000
    python benchmarks/bench_query_embedding.py --sizes 1000,50000 --repeats 11
    python benchmarks/bench_query_embedding.py --code OTHER/code   # another checkout's

The default embedding (code/embeddings/hybrid.py) weighs a query's words by their rarity
in the store, counted from the memories' vectors. This builds a file of N memories shaped
like the default's (384 semantic numbers and a handful of word positions among 1,616,
named memorylab/minilm-words-1616, so the store takes them for the default's) and
reports medians of Embedder().query(store, question):

    first ms        the first query after opening: every row read and counted once
    again ms        the next queries, nothing changed in between (median of --repeats)
    after add ms    a query after another connection added one memory

The last line is "again" at the largest size over "again" at the smallest: what a chat
turn's query costs as the store grows. The machine's other work makes single timings
noisy: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "code"
if "--code" in sys.argv:  # another checkout's code/, for a before/after table
    CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
sys.path.insert(0, str(CODE))

import numpy as np  # noqa: E402

from embedding_helpers import Embedder  # noqa: E402
from memory_store import Memory  # noqa: E402
from storage.sqlite_store import PersistentMemoryStore  # noqa: E402

MODEL = "memorylab/minilm-words-1616"
SEMANTIC, LEXICAL = 384, 1616
NOW = 1_000_000_000.0
QUESTION = "Which city did Caroline move to last spring?"


def memories(n: int, seed: int, prefix: str) -> list[Memory]:
    """n memories with unit vectors shaped like the default's: dense half, few words."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        vector = np.zeros(SEMANTIC + LEXICAL, dtype=np.float32)
        dense = rng.standard_normal(SEMANTIC)
        vector[:SEMANTIC] = np.sqrt(0.5) * dense / np.linalg.norm(dense)
        words = rng.choice(LEXICAL, size=8, replace=False)
        vector[SEMANTIC + words] = np.sqrt(0.5) / np.sqrt(8)
        out.append(
            Memory(
                f"{prefix}{i}",
                f"note {i}",
                created_at=NOW - i,
                embedding=vector.tolist(),
                embedding_model=MODEL,
            )
        )
    return out


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run(n: int, repeats: int, folder: Path, embedder: Embedder) -> dict:
    path = folder / f"query-{n}.sqlite3"
    with PersistentMemoryStore(path, user_id="bench") as store:
        for start in range(0, n, 20_000):
            store.extend(memories(min(20_000, n - start), seed=start, prefix=f"m{start}-"))
    store = PersistentMemoryStore(path, user_id="bench")
    first = timed(lambda: embedder.query(store, QUESTION))
    again = statistics.median(
        timed(lambda: embedder.query(store, QUESTION)) for _ in range(repeats)
    )
    after = []
    for i in range(3):
        with PersistentMemoryStore(path, user_id="bench") as other:  # another connection
            other.add(memories(1, seed=10_000_000 + i, prefix=f"added{i}-")[0])
        after.append(timed(lambda: embedder.query(store, QUESTION)))
    store.close()
    path.unlink()
    return {"n": n, "first_ms": first * 1000, "again_ms": again * 1000,
            "after_add_ms": statistics.median(after) * 1000}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="store sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--code", help="another checkout's code/ folder to time instead")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    embedder = Embedder()
    embedder.embed(["warm the model"])  # the weights load once, outside every timing
    with tempfile.TemporaryDirectory() as folder:
        results = [run(n, args.repeats, Path(folder), embedder) for n in sizes]
    print(f"code: {CODE}")
    print(f"{'N':>8} {'first ms':>10} {'again ms':>10} {'after add ms':>13}")
    for r in results:
        print(
            f"{r['n']:>8} {r['first_ms']:>10.1f} {r['again_ms']:>10.2f} {r['after_add_ms']:>13.2f}"
        )
    ratio = results[-1]["again_ms"] / results[0]["again_ms"]
    print(f"query at {results[-1]['n']:,} / at {results[0]['n']:,} (nothing changed): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
