"""Time recall at 1k to 1M memories: the learner's loop, MemoryIndex, and one matrix pass.

    python benchmarks/bench_memory_index.py                       # 1k, 10k, 100k, 1M
    python benchmarks/bench_memory_index.py --sizes 1000,10000    # a quick run
    python benchmarks/bench_memory_index.py --svg docs/scale.svg  # also redraw the plot

For each size N it builds one synthetic store (384-dimensional embeddings around 32
topics, last accesses from minutes to a year ago, importance 1-10), indexes it and
reports medians over repeats (timeit) of:

    index ms       MemoryIndex.retrieve(query, now, k=10): exact, refreshes the winners
    pass ms        embeddings @ query, one read of the (N, D) float32 matrix: the floor
    index/pass     how far the index is from that floor
    loop ms        retriever.retrieve, the readable loop (only up to --loop-max memories)
    speed-up       loop ms / index ms
    rerank ms      retrieve(..., candidates=40): the nearest 40 by similarity, rescored
    changed        how often those 40 give a different top 10 than the exact ranking
    kept           the share of the exact top 10 that the rerank still returns
    rescored       memories the index scored exactly per query (the rest only in numpy)

The machine's other work makes single timings noisy: the three fast timings are taken
in turns (pass, index, rerank, pass, ...) so that they share the same load, and medians
and ratios from the same run are what to compare. BLAS runs on one thread unless
OPENBLAS_NUM_THREADS says otherwise: a query is limited by memory bandwidth, not by
arithmetic, and on a busy machine a second thread mostly waits for a free core.
Needs ~6 GB of memory for the 1M store.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import sys
import time
import timeit
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads BLAS; see above
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from base.validation import KINDS  # noqa: E402
from memory_store import Memory, MemoryStore  # noqa: E402
from retriever import rank_memories, retrieve  # noqa: E402
from scale.memory_index import MemoryIndex  # noqa: E402

NOW = 1_000_000_000.0  # epoch seconds
HOUR = 3600.0
TOPICS = 32
QUANTUM = 1 / 1024  # embedding values are multiples of this (see synthetic_store)


def synthetic_store(n: int, dim: int, seed: int = 0) -> tuple[MemoryStore, np.ndarray]:
    """A store of n memories around TOPICS topic directions, and the topic centres.

    Two shortcuts keep a million memories within a minute and ~6 GB, and change nothing
    a query does: values are rounded to multiples of 1/1024 so that the 384 floats of
    every embedding tuple are shared Python objects (a tuple of fresh floats is 12 kB,
    of shared ones 3 kB), and the Memory objects skip their per-value validation (0.2
    ms each, 3 minutes at a million), which the generated values pass by construction.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((TOPICS, dim)) / np.sqrt(dim)  # (T, D), length ~1
    pool = np.empty(4097, dtype=object)  # one Python float object per level
    pool[:] = (np.arange(-2048, 2049) * QUANTUM).tolist()
    store = MemoryStore()
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        topics = rng.integers(TOPICS, size=m)
        vectors = centres[topics] + rng.standard_normal((m, dim)) / np.sqrt(dim)  # (m, D)
        codes = np.clip(np.rint(vectors / QUANTUM), -2048, 2048).astype(np.int64) + 2048
        shared = pool[codes].tolist()  # (m, D) nested lists of the pool's float objects
        hours = 10 ** rng.uniform(-1, 3.9, size=m)  # 6 minutes to ~11 months ago
        importance = rng.integers(1, 11, size=m).tolist()
        kinds = rng.integers(len(KINDS), size=m).tolist()
        for i, row in enumerate(shared):
            t = NOW - float(hours[i]) * HOUR
            memory = object.__new__(Memory)  # see the docstring: values valid by construction
            memory.__dict__.update(
                id=f"m{start + i}",
                text=f"memory {start + i} about topic {topics[i]}",
                kind=KINDS[kinds[i]],
                created_at=t,
                last_accessed=t,
                importance=importance[i],
                embedding=tuple(row),
                embedding_model=None,
                superseded_by=None,
                metadata={},
                user_id="default",
                _ready=True,
            )
            store.add(memory)
    for memory in itertools.islice(store, 100):  # the shortcut made valid memories
        Memory.from_dict(memory.to_dict())
    return store, centres


def queries(centres: np.ndarray, count: int, seed: int) -> list[np.ndarray]:
    """Queries near a topic, as an embedding model would give for a question about it."""
    rng = np.random.default_rng(seed)
    dim = centres.shape[1]
    picks = rng.integers(len(centres), size=count)
    return list(centres[picks] + 0.7 * rng.standard_normal((count, dim)) / np.sqrt(dim))


def calls_per_run(timer: timeit.Timer, min_seconds: float = 0.1) -> int:
    """How many calls make one timed run last at least min_seconds."""
    number = 1
    while timer.timeit(number) < min_seconds and number < 10_000:
        number *= 2 if number < 8 else 4
    return number


def median_ms_in_turns(statements: dict, repeat: int = 7) -> dict[str, float]:
    """Median milliseconds per call of each statement, runs taken in turns."""
    timers = {name: timeit.Timer(fn) for name, fn in statements.items()}
    numbers = {name: calls_per_run(timer) for name, timer in timers.items()}
    runs: dict[str, list[float]] = {name: [] for name in statements}
    for _ in range(repeat):
        for name, timer in timers.items():
            runs[name].append(timer.timeit(numbers[name]) / numbers[name])
    return {name: statistics.median(times) * 1e3 for name, times in runs.items()}


def measure(n: int, dim: int, k: int, loop_max: int, rerank: int, seed: int) -> dict:
    started = time.perf_counter()
    store, centres = synthetic_store(n, dim, seed)
    index = MemoryIndex(store)
    built = time.perf_counter() - started
    qs = queries(centres, 200, seed + 1)
    matrix = index.embeddings  # a read-only view: the same memory the index reads
    units = [(q / np.linalg.norm(q)).astype(np.float32) for q in qs]
    cycle_q, cycle_u = itertools.cycle(qs), itertools.cycle(units)
    rescored = []

    def recall():
        index.retrieve(next(cycle_q), NOW, k=k)
        rescored.append(index.rescored)

    result = {"n": n, "dim": dim, "k": k, "build_s": round(built, 1)}
    timings = median_ms_in_turns(
        {
            "pass_ms": lambda: matrix @ next(cycle_u),
            "index_ms": recall,
            "rerank_ms": lambda: index.retrieve(next(cycle_q), NOW, k, candidates=rerank),
        }
    )
    result.update(timings, rescored=statistics.median(rescored))
    probe = queries(centres, 50, seed + 2)  # fresh queries, compared without refreshing
    exact = [[r.memory.id for r in index.top_k(q, NOW, k)] for q in probe]
    reranked = [[r.memory.id for r in index.top_k(q, NOW, k, candidates=rerank)] for q in probe]
    result["rerank_changed"] = statistics.mean(a != b for a, b in zip(exact, reranked))
    result["rerank_kept"] = statistics.mean(
        len(set(a) & set(b)) / k for a, b in zip(exact, reranked)
    )
    if n <= loop_max:
        result["agrees_with_loop"] = all(
            [r.memory.id for r in index.top_k(q, NOW, k)]
            == [r.memory.id for r in rank_memories(store, q, NOW)[:k]]
            for q in probe[:2]
        )
        # last, because the loop refreshes memories behind the index's back
        loop = timeit.Timer(lambda: retrieve(store, next(cycle_q), NOW, k=k))
        result["loop_ms"] = statistics.median(loop.repeat(repeat=3, number=1)) * 1e3
    return result


def print_row(r: dict) -> None:
    ratio = r["index_ms"] / r["pass_ms"]
    loop = f"{r['loop_ms']:9.1f} {r['loop_ms'] / r['index_ms']:8.0f}x" if "loop_ms" in r else ""
    print(
        f"{r['n']:>9,} {r['index_ms']:9.3f} {r['pass_ms']:8.3f} {ratio:10.2f} {loop:>19}"
        f" {r['rerank_ms']:9.3f} {r['rerank_changed']:8.0%} {r['rerank_kept']:5.0%}"
        f" {r['rescored']:8.0f}",
        flush=True,
    )


def svg_plot(results: list[dict], path: Path) -> None:
    """Milliseconds per query against N, log-log, as a small self-contained SVG."""
    series = [
        ("learner's loop", "loop_ms", "#d62728"),
        ("MemoryIndex (exact)", "index_ms", "#1f77b4"),
        ("rerank nearest 40", "rerank_ms", "#2ca02c"),
        ("one pass: matrix @ q", "pass_ms", "#7f7f7f"),
    ]
    timed_loop = [r for r in results if "loop_ms" in r]
    per_memory = timed_loop[-1]["loop_ms"] / timed_loop[-1]["n"] if timed_loop else None
    guessed = [(r["n"], per_memory * r["n"]) for r in results if per_memory and "loop_ms" not in r]
    values = [r[key] for r in results for _, key, _ in series if key in r]
    values += [ms for _, ms in guessed]
    ns = [r["n"] for r in results]
    x_lo, x_hi = np.log10(min(ns)) - 0.15, np.log10(max(ns)) + 0.15
    y_lo, y_hi = np.floor(np.log10(min(values))), np.ceil(np.log10(max(values)))
    width, height, left, right, top, bottom = 700, 400, 70, 230, 30, 50

    def x(n):
        return left + (np.log10(n) - x_lo) / (x_hi - x_lo) * (width - left - right)

    def y(ms):
        return top + (y_hi - np.log10(ms)) / (y_hi - y_lo) * (height - top - bottom)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="14">Recall time per query against store size '
        f"(k={results[0]['k']}, median)</text>",
    ]
    for e in range(int(y_lo), int(y_hi) + 1):
        yy = y(10.0**e)
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>'
        )
        label = f"{10**e:,}" if e >= 0 else f"{10.0**e:g}"  # 100,000 rather than 1e+05
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{label}</text>')
    for n in ns:
        out.append(
            f'<text x="{x(n):.1f}" y="{height - bottom + 18}" text-anchor="middle">{n:,}</text>'
        )
    out.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">'
        f"memories in the store (N), {results[0]['dim']} dimensions</text>"
    )
    out.append(
        f'<text transform="translate(16 {(top + height - bottom) / 2}) rotate(-90)" '
        'text-anchor="middle">milliseconds per query</text>'
    )

    def line(points, colour, dash=""):
        d = " ".join(
            f"{'M' if j == 0 else 'L'}{x(n):.1f},{y(ms):.1f}" for j, (n, ms) in enumerate(points)
        )
        out.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')

    for i, (name, key, colour) in enumerate(series):
        points = [(r["n"], r[key]) for r in results if key in r]
        line(points, colour)
        out.extend(
            f'<circle cx="{x(n):.1f}" cy="{y(ms):.1f}" r="3.5" fill="{colour}"/>'
            for n, ms in points
        )
        if key == "loop_ms" and guessed:
            line(points[-1:] + guessed, colour, ' stroke-dasharray="5 4"')
        ly, lx = top + 10 + 20 * i, width - right + 15
        out.append(
            f'<line x1="{lx}" x2="{lx + 20}" y1="{ly}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{lx + 26}" y="{ly + 4}">{name}</text>')
    if guessed:
        out.append(
            f'<text x="{width - right + 15}" y="{top + 100}" font-size="11" fill="#555">'
            "dashed: the loop extrapolated</text>"
        )
        out.append(
            f'<text x="{width - right + 15}" y="{top + 114}" font-size="11" fill="#555">'
            "in proportion to N, not measured</text>"
        )
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="comma-separated N")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rerank", type=int, default=40, help="candidates for the rerank option")
    parser.add_argument("--loop-max", type=int, default=10_000, help="largest N to time the loop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--svg", type=Path, help="also draw ms per query against N here")
    parser.add_argument("--replot", type=Path, help="only redraw --svg from a saved --json")
    args = parser.parse_args(argv)
    if args.replot:
        svg_plot(json.loads(args.replot.read_text()), args.svg or Path("scale.svg"))
        return
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes must be comma-separated whole numbers, got {args.sizes!r}")
    if min(sizes) < args.k or args.k < 1 or args.dim < 1 or args.rerank < args.k:
        parser.error("need 1 <= k <= every size, k <= --rerank and --dim >= 1")

    threads = os.environ["OPENBLAS_NUM_THREADS"]
    print(
        f"k={args.k}, {args.dim} dimensions, medians of timeit runs, numpy {np.__version__}, "
        f"{threads} BLAS thread(s)"
    )
    print(
        f"{'N':>9} {'index ms':>9} {'pass ms':>8} {'index/pass':>10} {'loop ms':>9} "
        f"{'speed-up':>9} {'rerank ms':>9} {'changed':>8} {'kept':>5} {'rescored':>8}"
    )
    results = []
    for n in sizes:
        results.append(measure(n, args.dim, args.k, args.loop_max, args.rerank, args.seed))
        gc.collect()  # free this size's store before building the next
        print_row(results[-1])
    for r in results:
        if "agrees_with_loop" in r and not r["agrees_with_loop"]:
            print(f"WARNING: at N={r['n']:,} the index disagreed with the loop")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if args.svg:
        svg_plot(results, args.svg)


if __name__ == "__main__":
    main()
