"""Tune the hybrid embedding's mix `a` and lexical size N on half of the evaluation set.

The default embedding (code/embeddings/hybrid.py) scores relevance as
a * semantic + (1 - a) * lexical. This script picks a and N on the *tuning half* of
data/eval/one_year.json (questions 1, 3, 5, ... of each category) by the MRR of plain
relevance, then reports every strategy on the *held-out half* (questions 2, 4, 6, ...)
with hashed words, MiniLM, the hybrid and BM25, so the choice is never graded on the
questions that made it.

    python tools/tune_hybrid.py          # the grid, the choice, the held-out table
    python tools/tune_hybrid.py --locomo data/locomo   # and R@10 on LoCoMo's tuning half

The grid uses the identity above on precomputed halves (a few seconds); the held-out
table goes through the real Embedder, so it measures exactly what the lab ships.

The year alone is not what the default is chosen by: it is chosen by R@10 on LoCoMo's
tuning conversations (26, 41, 43, 47, 49: `--locomo PATH` adds that grid; `python
code/run.py evaluate --dataset locomo PATH --conversations 26 41 43 47 49` measures a
candidate through the real Embedder) and this MRR together (docs/evaluation.md).

Deliberately left out: tuning the strategies' weights (notebook 08 does that by hand).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from config import OFFLINE_EMBED_MODEL, TOY_EMBED_MODEL  # noqa: E402
from embedding_helpers import Embedder  # noqa: E402
from embeddings import hybrid, minilm  # noqa: E402
from embeddings.hashed_words import HashedWords  # noqa: E402
from embeddings.minilm import MiniLM  # noqa: E402
from evaluation.cli import DEFAULT_DATA  # noqa: E402
from evaluation.dataset import EvalSet, load_dataset  # noqa: E402
from evaluation.metrics import evaluate  # noqa: E402
from evaluation.strategies import STRATEGIES  # noqa: E402

MIXES = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
SIZES = [256, 1024, 1616]


def split(evalset: EvalSet) -> tuple[EvalSet, EvalSet]:
    """(tuning half, held-out half): alternate questions within each category."""
    seen: dict[str, int] = {}
    tune, held = [], []
    for q in evalset.questions:
        seen[q.category] = seen.get(q.category, 0) + 1
        (tune if seen[q.category] % 2 else held).append(q)
    return replace(evalset, questions=tune, _relevance={}), replace(
        evalset, questions=held, _relevance={}
    )


def grid(semantic_set: EvalSet) -> dict[tuple[float, int], float]:
    """Tuning-half MRR of relevance alone for every (a, N)."""
    import numpy as np

    tune, _ = split(semantic_set)
    texts = [m.text for m in semantic_set.store]
    memories = np.array([m.embedding for m in semantic_set.store])
    queries = minilm.embed_texts([q.text for q in tune.questions]).astype(np.float64)
    semantic = queries @ memories.T
    results = {}
    for size in SIZES:
        words = HashedWords(size)
        lexical = np.array([words.presence(t) for t in texts])  # the memory side
        frequencies = hybrid.DocumentFrequencies(size)
        frequencies.counts = list((lexical > 0).sum(axis=0))
        frequencies.seen = {str(i): (None, ()) for i in range(len(texts))}
        words_only = hybrid.Hybrid(MiniLM(), words, mix=0.0)  # the query's lexical half alone
        queries = words_only.embed_queries([q.text for q in tune.questions], frequencies)
        q_lex = np.array([v[minilm.DIMENSIONS :] for v in queries])
        words = q_lex @ lexical.T
        for a in MIXES:
            relevance = a * semantic + (1 - a) * words
            tune._relevance = {q.text: list(row) for q, row in zip(tune.questions, relevance)}
            results[(a, size)] = evaluate(tune, STRATEGIES["relevance"]).overall["MRR"]
    return results


def locomo_grid(path) -> dict[tuple[float, int], float]:
    """R@10 of relevance alone for every (a, N) on LoCoMo's tuning conversations, pooled.

    Only evaluation/locomo.py's TUNING conversations are read: the acceptance half is
    never looked at while choosing.
    """
    import numpy as np

    from evaluation.locomo import TUNING, load_locomo

    conversations = load_locomo(path, TUNING, Embedder(MiniLM().name))
    scores: dict[tuple[float, int], list[float]] = {}
    for conversation in conversations:
        texts = [m.text for m in conversation.store]
        memories = np.array([m.embedding for m in conversation.store])
        asked = [q.text for q in conversation.questions]
        for size in SIZES:
            words = HashedWords(size)
            lexical = np.array([words.presence(t) for t in texts])
            frequencies = hybrid.DocumentFrequencies(size)
            frequencies.counts = list((lexical > 0).sum(axis=0))
            frequencies.seen = {str(i): (None, ()) for i in range(len(texts))}
            words_only = hybrid.Hybrid(MiniLM(), words, mix=0.0)
            topics = [words_only.topic(q, frequencies) for q in asked]  # as the default's
            semantic = minilm.embed_texts(topics).astype(np.float64) @ memories.T
            queries = words_only.embed_queries(asked, frequencies)
            shared = np.array([v[minilm.DIMENSIONS :] for v in queries]) @ lexical.T
            for a in MIXES:
                relevance = a * semantic + (1 - a) * shared
                conversation._relevance = {t: list(row) for t, row in zip(asked, relevance)}
                report = evaluate(conversation, STRATEGIES["relevance"], ks=(10,))
                scores.setdefault((a, size), []).extend(
                    row["R@10"] for row in report.per_question.values()
                )
    return {key: sum(values) / len(values) for key, values in scores.items()}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", help="a local LoCoMo copy: also grid its tuning half")
    args = parser.parse_args(argv)
    if args.locomo:
        real = locomo_grid(args.locomo)
        print("LoCoMo tuning half, R@10 of relevance alone (rows: a, columns: dimensions)")
        print("   a " + "".join(f"{n:>7}" for n in SIZES))
        for a in MIXES:
            print(f"{a:4.2f} " + "".join(f"{real[(a, n)]:7.3f}" for n in SIZES))
        print()
    semantic_set = load_dataset(DEFAULT_DATA, Embedder(MiniLM().name))
    results = grid(semantic_set)
    print("tuning half, MRR of relevance alone (rows: a, columns: lexical dimensions)")
    print("   a " + "".join(f"{n:>7}" for n in SIZES))
    for a in MIXES:
        print(f"{a:4.2f} " + "".join(f"{results[(a, n)]:7.3f}" for n in SIZES))
    # a hybrid keeps some words (a < 1); among equal MRRs, the most weight on words, then
    # the smaller vector
    hybrids = [key for key in results if key[0] < 1.0]
    best = max(hybrids, key=lambda key: (round(results[key], 3), -key[0], -key[1]))
    print(f"meaning alone (a = 1): MRR {results[(1.0, SIZES[0])]:.3f}")
    print(f"best hybrid: a = {best[0]}, N = {best[1]} (MRR {results[best]:.3f}); shipped: "
          f"a = {hybrid.MIX}, N = {hybrid.LEXICAL}\n")  # fmt: skip
    columns = {
        "hashed words": TOY_EMBED_MODEL,
        "MiniLM": MiniLM().name,
        "hybrid": OFFLINE_EMBED_MODEL,
    }
    models = list(columns.values())
    sets = {m: split(load_dataset(DEFAULT_DATA, Embedder(m)))[1] for m in models}
    names = [n for n in STRATEGIES if n != "bm25"]
    print("held-out half, MRR (R@5 in brackets)")
    print(f"{'strategy':<20}" + "".join(f"{column:>22}" for column in columns))
    for name in names:
        cells = []
        for m in models:
            overall = evaluate(sets[m], STRATEGIES[name]).overall
            cells.append(f"{overall['MRR']:.3f} ({overall['R@5']:.3f})")
        print(f"{name:<20}" + "".join(f"{c:>22}" for c in cells))
    bm25 = evaluate(sets[models[0]], STRATEGIES["bm25"]).overall
    print(f"{'bm25':<20}{bm25['MRR']:.3f} ({bm25['R@5']:.3f}), the same for every embedding")
    for m in models:
        by = evaluate(sets[m], STRATEGIES["relevance"]).by_category["paraphrase"]["MRR"]
        print(f"paraphrase MRR, relevance alone, {m}: {by:.3f}")
    return 0 if math.isfinite(results[best]) else 1


if __name__ == "__main__":
    sys.exit(main())
