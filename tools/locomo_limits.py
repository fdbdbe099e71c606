"""How far one vector per memory gets on LoCoMo's tuning half, and what lies past it.

The default embedding (code/embeddings/hybrid.py) scores relevance as
a * semantic + (1 - a) * lexical, one vector per memory made from the memory's own text.
This script measures, on LoCoMo's tuning conversations only (evaluation/locomo.py's
TUNING: 26, 41, 43, 47, 49), what each way of changing that vector or its query would
buy, beside the ideas that need more than one vector per memory:

    python tools/locomo_limits.py data/locomo         # about two minutes on 2 cores

Each row is R@10 of relevance alone (each turn a memory, every question asked at the
conversation's end, pooled over questions, through evaluation/metrics.evaluate, the
figure `python code/run.py evaluate --dataset locomo` prints) at the best of a few
mixes a, with the MRR of relevance on data/eval/one_year.json at that mix where the row
changes the embedding. Rows:

- the default as shipped, the default before (MiniLM of the whole question, idf squared),
  MiniLM alone (of the whole question, and without the store's common words), the lexical
  half alone; BM25 (evaluation/bm25.py);
- lexical variants: no hashing at all (each stored word its own dimension: the ceiling
  of any bucket count), 3,616 buckets (halfvec), query words no memory has left out;
- query-side variants: each query word joined by its nearest stored words by MiniLM
  (term expansion), pseudo-relevance feedback (the top memories' vectors added to the
  query), questions stripped of their question words for MiniLM;
- two indexes: BM25's own score (scaled by its top score) mixed with MiniLM's cosine,
  and reciprocal-rank fusion of the two rankings;
- past one memory's text: each turn's vector folded with the turn before it (its
  context), and BM25 over the same turn-plus-previous-turn texts, for fairness.

It ends with the share of missed evidence turns that share no content word with their
question (speaker names aside): what no lexical change can reach.

The variants change the default one thing at a time, its semantic half always MiniLM of
the question without the store's common words (Hybrid.topic), as the default's is.
Only the tuning conversations are read, so nothing here is chosen on the acceptance half.
Deliberately left out: making any variant the default (docs/evaluation.md says why).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

import numpy as np  # noqa: E402

from base.text import tokenize  # noqa: E402
from embedding_helpers import Embedder  # noqa: E402
from embeddings import hybrid, minilm  # noqa: E402
from embeddings.hashed_words import HashedWords  # noqa: E402
from evaluation.bm25 import BM25  # noqa: E402
from evaluation.cli import DEFAULT_DATA  # noqa: E402
from evaluation.dataset import EvalSet, load_dataset  # noqa: E402
from evaluation.locomo import ACCEPTANCE, TUNING, load_locomo  # noqa: E402
from evaluation.metrics import evaluate  # noqa: E402
from evaluation.strategies import STRATEGIES  # noqa: E402

MIXES = (0.3, 0.4, 0.5, 0.6)
_QUESTION_WORDS = re.compile(
    r"^\s*(?:what|when|where|who|whom|which|why|how)"
    r"(?:\s+(?:kind|type|sort|many|much|long|often|of))*\s+"
    r"|^\s*(?:did|does|do|is|was|were|are|has|have|had|would|could|can|will)\s+",
    re.IGNORECASE,
)


class Case:
    """One conversation (or the year): its texts, MiniLM vectors and the scoring inputs."""

    def __init__(self, evalset: EvalSet, year: bool = False):
        self.evalset, self.year = evalset, year
        self.memories = list(evalset.store)
        self.texts = [m.text for m in self.memories]
        self.questions = [q.text for q in evalset.questions]
        self.memory_vectors = minilm.embed_texts(self.texts).astype(np.float64)
        self.query_vectors = minilm.embed_texts(self.questions).astype(np.float64)
        self.semantic = self.query_vectors @ self.memory_vectors.T
        self.topic = self._topic_semantic()  # the default's: without the store's common words
        self.words = [sorted(set(tokenize(t))) for t in self.texts]
        self.asked = [tokenize(q) for q in self.questions]
        self.document_frequency: dict[str, int] = {}
        for words in self.words:
            for w in words:
                self.document_frequency[w] = self.document_frequency.get(w, 0) + 1
        previous = [
            i - 1 if i and _session(self.memories, i) else i for i in range(len(self.texts))
        ]
        self.previous = np.array(previous)

    def _topic_semantic(self) -> np.ndarray:
        """MiniLM of each question as the default's query side embeds it (Hybrid.topic)."""
        buckets = HashedWords(hybrid.LEXICAL)
        frequencies = hybrid.DocumentFrequencies(hybrid.LEXICAL)
        for i, text in enumerate(self.texts):
            for position in buckets.filled(text):
                frequencies.counts[position] += 1
            frequencies.seen[str(i)] = (None, ())
        model = hybrid.Hybrid(minilm.MiniLM(), buckets)
        self.topics = [model.topic(q, frequencies) for q in self.questions]
        self.topic_vectors = minilm.embed_texts(self.topics).astype(np.float64)
        return self.topic_vectors @ self.memory_vectors.T

    def score(self, relevance: np.ndarray, metric: str) -> float:
        """The pooled metric of relevance alone, exactly as the evaluate command ranks."""
        self.evalset._relevance = {q: list(row) for q, row in zip(self.questions, relevance)}
        report = evaluate(self.evalset, STRATEGIES["relevance"], ks=(10,))
        return sum(r[metric] for r in report.per_question.values())


def _session(memories, i: int) -> bool:
    """Whether memory i - 1 is the turn before memory i in the same session."""
    return memories[i - 1].id.rsplit(":", 1)[0] == memories[i].id.rsplit(":", 1)[0]


def lexical(
    case: Case,
    dimensions: int | None = 1616,
    drop_unseen: bool = False,
    power: float = hybrid.IDF_POWER,
    expand: Callable[[Case, str], list[tuple[str, float]]] | None = None,
    with_previous: float = 0.0,
) -> np.ndarray:
    """The hybrid's lexical cosine (memory: each word once; query: idf ** power a word).

    dimensions=None gives every stored word its own dimension (no hashing).
    """
    vocabulary = {w: i for i, w in enumerate(case.document_frequency)}
    if dimensions is None:
        size, position = len(vocabulary) + 1, lambda w: vocabulary.get(w, len(vocabulary))
    else:
        buckets = HashedWords(dimensions)
        size, position = dimensions, buckets.bucket
    memories = np.zeros((len(case.texts), size))
    for i, words in enumerate(case.words):
        memories[i, [position(w) for w in words]] = 1.0
    frequency = (memories > 0).sum(axis=0)
    if with_previous:
        memories = memories + with_previous * memories[case.previous]
    n = len(case.texts)
    idf = np.log(1.0 + (n - frequency + 0.5) / (frequency + 0.5)) ** power
    queries = np.zeros((len(case.questions), size))
    for q, words in enumerate(case.asked):
        for w in words:
            if drop_unseen and w not in case.document_frequency:
                continue
            queries[q, position(w)] += idf[position(w)]
            for other, weight in expand(case, w) if expand else ():
                queries[q, position(other)] += weight * idf[position(other)]
    return _unit(queries) @ _unit(memories).T


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


class Neighbours:
    """Each query word's nearest stored words by MiniLM (cosine of the one-word texts)."""

    def __init__(self, cases: Sequence[Case], top: int = 10, floor: float = 0.5, weight=0.3):
        words = sorted({w for c in cases for ws in c.words + c.asked for w in ws})
        vectors = minilm.embed_texts(words).astype(np.float64)
        self.vector = dict(zip(words, vectors))
        self.top, self.floor, self.weight = top, floor, weight

    def __call__(self, case: Case, word: str) -> list[tuple[str, float]]:
        stored = list(case.document_frequency)
        if not hasattr(case, "_stored_vectors"):
            case._stored_vectors = np.array([self.vector[w] for w in stored])
        similarity = case._stored_vectors @ self.vector[word]
        best = np.argsort(-similarity)[: self.top + 1]
        return [
            (stored[j], self.weight * similarity[j])
            for j in best
            if stored[j] != word and similarity[j] >= self.floor
        ]


def feedback(case: Case, lexical_part: np.ndarray, a: float, top: int = 3, beta: float = 0.2):
    """Pseudo-relevance feedback on the semantic half: add the top memories' mean vector."""
    first = a * case.topic + (1 - a) * lexical_part
    best = np.argsort(-first, axis=1)[:, :top]
    query = case.topic_vectors + beta * case.memory_vectors[best].mean(axis=1)
    return a * (_unit(query) @ case.memory_vectors.T) + (1 - a) * lexical_part


def strip_question_words(question: str) -> str:
    """'When did Caroline go to the support group?' -> 'Caroline go to the support group'."""
    text = question
    for _ in range(3):
        text = _QUESTION_WORDS.sub("", text, count=1)
    return text.rstrip("?").strip() or question


def bm25_scores(texts: Sequence[str], questions: Sequence[str]) -> np.ndarray:
    index = BM25(texts)
    return np.array([index.scores(q) for q in questions])


def ranks(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, axis=1, kind="stable")
    out = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    out[rows, order] = np.arange(1, scores.shape[1] + 1)
    return out


def measure(conversations: Sequence[Case], year: Case | None):
    """(label, R@10 on the tuning half, a, year MRR or None) for every row, in order."""
    questions = sum(len(c.questions) for c in conversations)
    cases = list(conversations) + ([year] if year else [])
    rows = []

    def row(label: str, relevance: Callable[[Case, float], np.ndarray], mixes=MIXES, on_year=True):
        """mixes=None: a row with no mix of its own (a is shown as '-')."""
        best = None
        for a in mixes or (None,):
            recall = sum(c.score(relevance(c, a), "R@10") for c in conversations) / questions
            if best is None or recall > best[0] + 1e-12:
                best = (recall, a)
        mrr = None
        if year is not None and on_year:
            mrr = year.score(relevance(year, best[1]), "MRR") / len(year.questions)
        rows.append((label, best[0], best[1], mrr))
        print(f"  {label}: R@10 {best[0]:.3f}", file=sys.stderr, flush=True)

    def cached(make: Callable[[Case], np.ndarray]) -> Callable[[Case], np.ndarray]:
        store: dict[int, np.ndarray] = {}
        return lambda c: store.setdefault(id(c), make(c))

    default = cached(lambda c: lexical(c))
    row(
        f"the default ({hybrid.NAME}{hybrid.LEXICAL})",
        lambda c, a: a * c.topic + (1 - a) * default(c),
        (hybrid.MIX,),
    )
    squared = cached(lambda c: lexical(c, power=2))
    row(
        "before: MiniLM of the whole question, idf squared",
        lambda c, a: a * c.semantic + (1 - a) * squared(c),
        (hybrid.MIX,),
    )
    for power in (1.5, 2):
        weighted = cached(lambda c, power=power: lexical(c, power=power))
        row(f"the default, its query's words weighted by idf ** {power:g}",
            lambda c, a, weighted=weighted: a * c.topic + (1 - a) * weighted(c),
            (0.5, 0.55, 0.6))  # fmt: skip
    row("MiniLM alone", lambda c, a: c.semantic, None)
    row("MiniLM of the question without the store's common words", lambda c, a: c.topic, None)
    row("its lexical half alone", lambda c, a: default(c), None)
    bm25 = cached(lambda c: bm25_scores(c.texts, c.questions))
    row("BM25", lambda c, a: bm25(c), None, on_year=False)
    for label, make in (
        ("no hashing: each stored word its own dimension", lambda c: lexical(c, None)),
        ("3,616 buckets (halfvec)", lambda c: lexical(c, 3616)),
        ("query words no memory has left out", lambda c: lexical(c, drop_unseen=True)),
    ):
        part = cached(make)
        row(label, lambda c, a, part=part: a * c.topic + (1 - a) * part(c))
    neighbours = Neighbours(cases)
    expanded = cached(lambda c: lexical(c, expand=neighbours))
    row("term expansion by MiniLM word neighbours",
        lambda c, a: a * c.topic + (1 - a) * expanded(c))  # fmt: skip
    row("pseudo-relevance feedback (top 3)", lambda c, a: feedback(c, default(c), a))
    stripped = cached(
        lambda c: (
            minilm.embed_texts([strip_question_words(q) for q in c.topics]).astype(np.float64)
            @ c.memory_vectors.T
        )
    )
    row("MiniLM asked without question words",
        lambda c, a: a * stripped(c) + (1 - a) * default(c))  # fmt: skip

    def scaled_bm25(c: Case) -> np.ndarray:
        scores = bm25(c)
        top = scores.max(axis=1, keepdims=True)
        return scores / np.where(top == 0, 1.0, top)

    row("two indexes: BM25 / its top score, mixed with MiniLM",
        lambda c, a: a * c.topic + (1 - a) * scaled_bm25(c), on_year=False)  # fmt: skip
    row("two indexes: reciprocal-rank fusion (k = 60)",
        lambda c, a: 1 / (60 + ranks(c.topic)) + 1 / (60 + ranks(bm25(c))),
        None, on_year=False)  # fmt: skip
    with_previous = cached(lambda c: lexical(c, with_previous=0.5))

    def folded(c: Case) -> np.ndarray:
        vectors = _unit(c.memory_vectors + 0.3 * c.memory_vectors[c.previous])
        return c.topic_vectors @ vectors.T

    folded_cached = cached(folded)
    row("past the text: each turn folded with the turn before it",
        lambda c, a: a * folded_cached(c) + (1 - a) * with_previous(c),
        on_year=False)  # fmt: skip
    context_bm25 = cached(
        lambda c: bm25_scores(
            [
                c.texts[p] + " " + t if p != i else t
                for i, (p, t) in enumerate(zip(c.previous, c.texts))
            ],
            c.questions,
        )
    )
    row(
        "BM25 over the same turn-plus-previous-turn texts",
        lambda c, a: context_bm25(c),
        None,
        on_year=False,
    )
    return rows, unreachable(conversations, default)


def unreachable(conversations: Sequence[Case], default) -> tuple[int, int, int]:
    """(evidence turns, missed by the default's top 10, of those sharing no content word)."""
    total = missed = no_word = 0
    for c in conversations:
        names = {w for m in c.memories for w in tokenize(m.text.split(":", 1)[0])}
        relevance = hybrid.MIX * c.topic + (1 - hybrid.MIX) * default(c)
        top = np.argsort(-relevance, axis=1, kind="stable")[:, :10]
        index = {m.id: i for i, m in enumerate(c.memories)}
        for q, question in enumerate(c.evalset.questions):
            asked = set(c.asked[q]) - names
            for evidence in question.evidence:
                total += 1
                i = index[evidence]
                if i not in top[q]:
                    missed += 1
                    no_word += not (asked & set(c.words[i]))
    return total, missed, no_word


def report(rows, counts) -> str:
    bm25 = next(recall for label, recall, _, _ in rows if label == "BM25")
    lines = [
        f"LoCoMo's tuning half ({', '.join(TUNING)}): R@10 of relevance alone, best a",
        "",
        f"{'variant':<58} {'R@10':>6} {'vs BM25':>8} {'a':>5} {'year MRR':>9}",
    ]
    for label, recall, a, mrr in rows:
        gain = f"{100 * (recall / bm25 - 1):+.1f}%" if bm25 else "-"
        year = f"{mrr:.3f}" if mrr is not None else "-"
        mix = f"{a:g}" if a is not None else "-"
        lines.append(f"{label:<58} {recall:6.3f} {gain:>8} {mix:>5} {year:>9}")
    total, missed, no_word = counts
    lines += [
        "",
        f"The default misses {missed} of {total} evidence turns at k = 10; {no_word} of those "
        f"({100 * no_word / max(missed, 1):.0f}%) share no content word with their question "
        "(speaker names aside).",
        f"Beating BM25 by 15% takes R@10 {1.15 * bm25:.3f}.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="a local LoCoMo copy (tools/locomo_data.py)")
    parser.add_argument("--no-year", action="store_true", help="skip data/eval's MRR column")
    parser.add_argument(
        "--conversations", nargs="+", default=list(TUNING), help=argparse.SUPPRESS
    )  # the test's small synthetic conversation; the tuning half otherwise
    args = parser.parse_args(argv)
    chosen = [c if str(c).startswith("conv-") else f"conv-{c}" for c in args.conversations]
    if set(chosen) & set(ACCEPTANCE):
        parser.error(
            "the acceptance conversations are never measured while choosing; "
            f"this tool reads the tuning half ({', '.join(TUNING)})"
        )
    print("reading the conversations and embedding them with MiniLM...", file=sys.stderr)
    embedder = Embedder(minilm.MODEL_NAME)
    conversations = [Case(e) for e in load_locomo(args.path, chosen, embedder)]
    year = None if args.no_year else Case(load_dataset(DEFAULT_DATA, embedder), year=True)
    rows, counts = measure(conversations, year)
    print(report(rows, counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
