"""Measure retrieval honestly: rank with a strategy, score the ranking, compare strategies.

    evalset = load_dataset("data/eval/one_year.json")     # conversation_dataset.py
    reports = ablation(evalset)                            # every strategy, same data
    print(format_table(reports))

    python code/evaluation.py --data data/eval/one_year.json --k 1 3 5 10 --strategy course

Each question is asked at its own moment (`asked_at`): only memories made by then are
candidates, and recency is measured from then. Ranking here never touches a memory, so
every question sees the dataset exactly as the file describes it.

Every strategy is the learner's own scoring (scoring.py) with different settings: which
weights, which decay per kind (kinds.py), whether superseded facts are dropped, and
whether each signal is min-max normalised over the candidates first. Metrics: recall@k
(the share of a question's evidence found in the top k) and reciprocal rank (1 / rank of
the first piece of evidence, 0 if none is ranked), averaged overall and per category.

Deliberately left out: the dataset format (conversation_dataset.py), generating the year
of memories (eval_data.py), and speed beyond "fast enough" for hundreds of memories.
"""

from __future__ import annotations

import argparse
import numbers
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conversation_dataset import DatasetError, EvalSet, Question, load_dataset
from embedding_helpers import Embedder
from kinds import DEFAULT_HALF_LIVES, decay_rate_for_half_life
from memory_store import KINDS
from retriever import ScoredMemory
from scoring import (
    check_decay_rate,
    check_weights,
    importance_score,
    recency_score,
    retrieval_score,
)

DEFAULT_DATA = Path(__file__).resolve().parent.parent / "data" / "eval" / "one_year.json"
DEFAULT_KS = (1, 3, 5, 10)


# --- strategies ----------------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """One way to rank: weights (relevance, recency, importance) and how recency decays.

    decay_rates: hourly decay rate per kind, as recency_score takes it.
    exclude_superseded: drop a fact once its replacement exists.
    min_max: rescale each signal to [0, 1] over the candidates before weighting.
    """

    name: str
    weights: tuple[float, float, float]
    decay_rates: dict[str, float]
    exclude_superseded: bool = False
    min_max: bool = False
    source: str = ""

    def __post_init__(self) -> None:  # refuse bad settings now, not midway through a run
        object.__setattr__(self, "weights", check_weights(self.weights))
        missing = [kind for kind in KINDS if kind not in self.decay_rates]
        if missing:
            raise ValueError(
                f"decay_rates has no rate for {missing[0]!r}: give one per kind "
                f"({', '.join(KINDS)}), e.g. same_decay(0.995)"
            )
        rates = {kind: check_decay_rate(self.decay_rates[kind]) for kind in KINDS}
        object.__setattr__(self, "decay_rates", rates)


def same_decay(rate: float) -> dict[str, float]:
    """One hourly decay rate for every kind, as the course's formula has it."""
    return {kind: rate for kind in KINDS}


def decay_from_half_lives(half_lives: dict[str, float]) -> dict[str, float]:
    """Per-kind half-lives in hours (math.inf: never fades) to hourly decay rates."""
    return {kind: decay_rate_for_half_life(half_lives[kind]) for kind in KINDS}


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy("relevance", (1.0, 0.0, 0.0), same_decay(0.995),
                 source="plain vector search: cosine only"),
        Strategy("course", (1.0, 1.0, 1.0), same_decay(0.995),
                 source="the course: equal weights, recency 0.995 per hour for every kind"),
        # The retrieval-augmented-memory text: 0.55/0.25/0.20, episodes halve every 45
        # days, facts do not fade, and a contradicted fact is dropped, not down-weighted.
        Strategy("ram", (0.55, 0.25, 0.20), decay_from_half_lives(DEFAULT_HALF_LIVES),
                 exclude_superseded=True,
                 source="retrieval-augmented memory: 0.55/0.25/0.20, half-life per kind, "
                 "superseded facts excluded"),
        # Generative Agents (joonspk-research/generative_agents, reverie/backend_server/
        # persona/cognitive_modules/retrieve.py, new_retrieve): each signal is min-max
        # normalised over the candidates, then gw = [0.5, 3, 2] multiplies recency,
        # relevance and importance, in that order: relevance 3, recency 0.5, importance 2.
        # Recency decays 0.995 per hour as the paper describes (the released code instead
        # uses 0.99 per step of access order).
        Strategy("generative-agents", (3.0, 0.5, 2.0), same_decay(0.995), min_max=True,
                 source="Generative Agents: min-max normalised, relevance 3, recency 0.5, "
                 "importance 2"),
        # LangChain's TimeWeightedVectorStoreRetriever (libs/langchain/langchain/retrievers/
        # time_weighted_retriever.py, _get_combined_score): (1.0 - decay_rate) **
        # hours_passed + vector_relevance with the default decay_rate = 0.01, that is
        # recency at 0.99 per hour plus relevance, no importance. Here every memory is
        # scored, not only the top 100 of a vector search.
        Strategy("langchain", (1.0, 1.0, 0.0), same_decay(0.99),
                 source="LangChain time-weighted retriever: 0.99 ** hours + relevance"),
    ]
}  # fmt: skip


def rank(evalset: EvalSet, question: Question, strategy: Strategy) -> list[ScoredMemory]:
    """Every candidate memory for `question`, best first (ties keep file order)."""
    now = question.asked_at
    relevances = evalset.relevances(question)
    made = {m.id: m.created_at for m in evalset.store}
    rows = []
    for memory, rel in zip(evalset.store, relevances):
        if memory.created_at > now:
            continue  # not said yet when the question is asked
        newer = memory.superseded_by
        if strategy.exclude_superseded and newer is not None and made[newer] <= now:
            continue  # its replacement exists by now: a contradicted fact is wrong
        rec = recency_score(now, memory.last_accessed, strategy.decay_rates[memory.kind])
        rows.append([memory, rel, rec, importance_score(memory.importance)])
    if strategy.min_max and rows:
        for col in (1, 2, 3):
            _min_max(rows, col)
    scored = [
        ScoredMemory(m, rel, rec, imp, retrieval_score(rel, rec, imp, weights=strategy.weights))
        for m, rel, rec, imp in rows
    ]
    return sorted(scored, key=lambda row: row.score, reverse=True)


def _min_max(rows: list[list], col: int) -> None:
    low = min(row[col] for row in rows)
    high = max(row[col] for row in rows)
    for row in rows:  # all equal: 0.5 for everyone, as Generative Agents does
        row[col] = 0.5 if high == low else (row[col] - low) / (high - low)


# --- metrics -------------------------------------------------------------------------


def recall_at_k(ranked_ids: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of the evidence found in the first k ids: recall_at_k(['a','b'], ['b'], 1) -> 0.0"""
    evidence = set(evidence)
    if not evidence:
        raise ValueError("evidence must name at least one id")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return len(evidence.intersection(ranked_ids[:k])) / len(evidence)


def reciprocal_rank(ranked_ids: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / (position of the first evidence id, counting from 1), or 0.0 if none is ranked."""
    evidence = set(evidence)
    if not evidence:
        raise ValueError("evidence must name at least one id")
    for position, memory_id in enumerate(ranked_ids, start=1):
        if memory_id in evidence:
            return 1.0 / position
    return 0.0


@dataclass
class Report:
    """One strategy's scores: per question, and averaged overall and per category."""

    strategy: Strategy
    ks: tuple[int, ...]
    per_question: dict[str, dict[str, float]]  # question id -> {"R@1": .., "MRR": ..}
    overall: dict[str, float]
    by_category: dict[str, dict[str, float]]


def evaluate(evalset: EvalSet, strategy: Strategy, ks: Sequence[int] = DEFAULT_KS) -> Report:
    """Rank every question with `strategy` and average recall@k and reciprocal rank."""
    ks = tuple(ks)
    per_question, groups = {}, {}
    for question in evalset.questions:
        ids = [row.memory.id for row in rank(evalset, question, strategy)]
        scores = {f"R@{k}": recall_at_k(ids, question.evidence, k) for k in ks}
        scores["MRR"] = reciprocal_rank(ids, question.evidence)
        per_question[question.id] = scores
        groups.setdefault(question.category, []).append(scores)
    by_category = {c: _mean(rows) for c, rows in sorted(groups.items())}
    return Report(strategy, ks, per_question, _mean(list(per_question.values())), by_category)


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: sum(row[key] for row in rows) / len(rows) for key in rows[0]}


def ablation(
    evalset: EvalSet,
    strategies: Iterable[Strategy] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[str], None] | None = None,
) -> list[Report]:
    """Evaluate each strategy on the same data, in order; `progress` hears each step."""
    strategies = list(STRATEGIES.values() if strategies is None else strategies)
    evalset.prepare(progress)  # relevance does not depend on the strategy: compute it once
    reports = []
    for i, strategy in enumerate(strategies, start=1):
        if progress:
            progress(f"[{i}/{len(strategies)}] {strategy.name}: {len(evalset.questions)} questions")
        reports.append(evaluate(evalset, strategy, ks))
    return reports


def format_table(reports: Sequence[Report], category_metric: str = "MRR") -> str:
    """Overall metrics, one row per strategy; then one metric per category and strategy."""
    if not reports:
        raise ValueError("format_table needs at least one report, got none")
    columns = list(reports[0].overall)
    if category_metric not in columns:
        raise ValueError(
            f"category_metric must be one of {', '.join(columns)}, got {category_metric!r}"
        )
    names = [r.strategy.name for r in reports]
    lines = [_row("strategy", columns, 6), _row("", ["-" * 6] * len(columns), 6)]
    lines += [_row(r.strategy.name, [f"{r.overall[c]:.3f}" for c in columns], 6) for r in reports]
    widths = [max(6, len(n)) for n in names]
    lines += ["", f"{category_metric} by category", _row("category", names, widths)]
    for category in reports[0].by_category:
        cells = [f"{r.by_category[category][category_metric]:.3f}" for r in reports]
        lines.append(_row(category, cells, widths))
    return "\n".join(lines)


def _row(name: str, cells: Sequence[str], widths: int | Sequence[int]) -> str:
    widths = [widths] * len(cells) if isinstance(widths, int) else widths
    return f"{name:<21}" + "".join(f" {cell:>{w}}" for cell, w in zip(cells, widths))


# --- the command ---------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line on stderr (the usage is what --help is for)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="evaluation.py", description="Print the ablation table for a dataset.")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="dataset JSON file")
    parser.add_argument("--k", type=int, nargs="+", default=list(DEFAULT_KS), help="cut-offs")
    parser.add_argument("--strategy", action="append", choices=sorted(STRATEGIES),
                        help="repeat to pick several (default: all)")  # fmt: skip
    parser.add_argument("--embed-model", default=None, help="default: from config.py")
    args = parser.parse_args(argv)
    if any(k < 1 for k in args.k):
        parser.error(f"--k values must be >= 1, got {args.k}")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    say(f"loading and embedding {_shown(Path(args.data))}")
    try:
        evalset = load_dataset(args.data, Embedder(args.embed_model))
    # a bad file, model name or path, or an embedding model that fails (RuntimeError)
    except (DatasetError, ValueError, OSError, RuntimeError) as err:
        say(f"error: {err}")
        return 2
    say(f"{len(evalset.store)} memories, {len(evalset.questions)} questions")
    chosen = [STRATEGIES[name] for name in (args.strategy or STRATEGIES)]
    reports = ablation(evalset, chosen, ks=sorted(set(args.k)), progress=say)
    print(f"{evalset.name}: {len(evalset.store)} memories, {len(evalset.questions)} questions, "
          f"embeddings {evalset.embedder.model}\n")  # fmt: skip
    print(format_table(reports, "MRR"))
    return 0


def _shown(path: Path) -> Path:
    """The path relative to the working directory when it is below it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


if __name__ == "__main__":
    sys.exit(main())
