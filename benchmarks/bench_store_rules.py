"""Time what the store's rules cost: float32 rounding of a vector, the link check.

    python benchmarks/bench_store_rules.py            # medians over 7 repeats (timeit)

    as_vector 384          checking a 384-dimensional vector (what a query costs)
    as_float32_vector 384  checking it and rounding it to float32 (what a memory costs)
    Memory(...) 384        making one memory with such a vector
    link_problems N        checking every link of a store of N memories
    transaction N          an empty `with store.transaction():` on that store (it saves
                           every field for the rollback and checks the links at the end)

Compare medians from the same run: the machine's other work makes single timings noisy.
"""

from __future__ import annotations

import random
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "code"))

from base.links import link_problems
from base.validation import as_float32_vector, as_vector
from memory_store import Memory, MemoryStore


def median_us(call, number: int) -> float:
    """Median microseconds per call over 7 repeats of `number` calls."""
    return statistics.median(timeit.repeat(call, number=number, repeat=7)) / number * 1e6


def main(sizes=(1_000, 10_000)) -> None:
    vector = [random.random() for _ in range(384)]
    print(f"{'as_vector 384':28} {median_us(lambda: as_vector(vector), 2000):9.1f} us")
    print(
        f"{'as_float32_vector 384':28} {median_us(lambda: as_float32_vector(vector), 2000):9.1f} us"
    )
    made = median_us(lambda: Memory("m1", "t", created_at=0.0, embedding=vector), 2000)
    print(f"{'Memory(...) 384':28} {made:9.1f} us")
    for n in sizes:
        store = MemoryStore()
        for i in range(n):
            store.add(Memory(f"m{i}", "t", created_at=0.0, embedding=[1.0, 0.0]))
        for i in range(0, n - 1, 2):
            store.supersede(f"m{i}", f"m{i + 1}")  # half the store is history

        links = median_us(lambda store=store: link_problems(store._memories), 5) / 1000
        print(f"{'link_problems ' + format(n, ','):28} {links:9.2f} ms")
        empty = median_us(lambda store=store: _empty_transaction(store), 5) / 1000
        print(f"{'transaction ' + format(n, ','):28} {empty:9.2f} ms")


def _empty_transaction(store: MemoryStore) -> None:
    with store.transaction():
        pass


if __name__ == "__main__":
    main()
