"""Time the numpy MiniLM: milliseconds per short memory, and the ratio to the floor.

    python benchmarks/bench_minilm.py                 # 256 short memories, 7 repeats
    python benchmarks/bench_minilm.py --texts 64 --repeats 5

The texts are short memories as a chat writes them (8 to 20 words). Each repeat embeds
all of them in one call (length-sorted batches, no cache: the forward pass itself) and,
in the same turn, runs a numpy float32 matmul as large as the feed-forward layer's, so
both share the machine's load. It reports medians:

    ms/memory     the forward pass's time per text
    floor ms      the pass's multiply-adds (embeddings/minilm.py's multiply_adds, no padding)
                  divided by the matmul's measured rate: what pure arithmetic would take
    ratio         ms/memory / floor: how close numpy's forward pass is to that floor
    chat turn ms  one query embedded with the default hybrid, cache cold, as one chat
                  turn does

BLAS threads are pinned to one (OPENBLAS_NUM_THREADS, set before numpy loads, unless it
is set already): on a machine shared with other work, numpy's default of one thread per
core makes the ratio swing (3.1x to 6.6x the floor with two threads, 2.1x with one).
Compare ratios from one run, not times across machines.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code"))
THREADS = os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: see above

import numpy as np  # noqa: E402

from config import OFFLINE_EMBED_MODEL  # noqa: E402
from embeddings import hybrid, minilm  # noqa: E402
from embeddings.registry import offline_model  # noqa: E402

WORDS = (
    "I we the team decided prefer moved meeting lunch Friday Lisbon API default deploy "
    "production cat dog sister birthday March allergic shellfish office remote train "
    "project budget invoice review editor theme dark mode garden tomatoes weather doctor"
).split()


def short_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) for _ in range(n)]


def matmul_rate(rows: int = 2048) -> float:
    """Multiply-adds per second of one float32 (rows x 384) @ (384 x 1536) product."""
    a = np.random.default_rng(0).standard_normal((rows, 384)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((384, 1536)).astype(np.float32)
    a @ b  # warm
    start = time.perf_counter()
    for _ in range(5):
        a @ b
    return 5 * rows * 384 * 1536 / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    model = minilm._get_model()
    default = offline_model(OFFLINE_EMBED_MODEL)  # the hybrid a chat turn embeds its query with
    texts = short_texts(args.texts)
    lengths = [model.token_count(t) for t in texts]
    work = minilm.multiply_adds(lengths)
    model.embed(texts)  # warm
    per_memory, floors, turns = [], [], []
    for repeat in range(args.repeats):
        rate = matmul_rate()
        start = time.perf_counter()
        model.embed(texts)
        per_memory.append((time.perf_counter() - start) / len(texts) * 1000)
        floors.append(work / rate / len(texts) * 1000)
        query = f"which project did we discuss on day {repeat}?"  # new text: no cache
        frequencies = hybrid.DocumentFrequencies(default.lexical.dimensions)  # an empty store's
        start = time.perf_counter()
        default.embed_queries([query], frequencies)
        turns.append((time.perf_counter() - start) * 1000)
    ms, floor = statistics.median(per_memory), statistics.median(floors)
    ratios = statistics.median(p / f for p, f in zip(per_memory, floors))
    print(f"{len(texts)} short memories, {statistics.mean(lengths):.1f} tokens on average, "
          f"{THREADS} BLAS thread(s)")  # fmt: skip
    print(f"ms/memory     {ms:.2f}   (median of {args.repeats})")
    print(f"floor ms      {floor:.2f}   ({work / len(texts) / 1e6:.0f}M multiply-adds per memory)")
    print(f"ratio         {ratios:.2f}")
    print(f"chat turn ms  {statistics.median(turns):.1f}   (one query, hybrid, cold cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
