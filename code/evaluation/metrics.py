"""Measure retrieval honestly: score each ranking, average, compare strategies.

    evalset = load_dataset("data/eval/one_year.json")     # evaluation/dataset.py
    reports = ablation(evalset)                            # every strategy, same data
    print(format_table(reports))

Metrics: recall@k (the share of a question's evidence found in the top k) and reciprocal
rank (1 / rank of the first piece of evidence, 0 if none is ranked), averaged overall
and per category. Both are yours (code/practice/exercises.py, notebook 08's exercise): until they
are written, evaluating says "not implemented yet" and names them.

Deliberately left out: the dataset format (evaluation/dataset.py), the strategies
(evaluation/strategies.py), generating the year of memories (tools/eval_data.py), and
speed beyond "fast enough" for hundreds of memories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from base.unwritten import runs_on_learner_code
from evaluation.dataset import EvalSet
from evaluation.strategies import STRATEGIES, Strategy, rank
from practice import exercises

DEFAULT_KS = (1, 3, 5, 10)


@runs_on_learner_code
def recall_at_k(ranked_ids: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of the evidence found in the first k ids: recall_at_k(['a','b'], ['b'], 1) -> 0.0

    Yours: code/practice/exercises.py, notebook 08's exercise.
    """
    return exercises.recall_at_k(ranked_ids, evidence, k)


@runs_on_learner_code
def reciprocal_rank(ranked_ids: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / (position of the first evidence id, counting from 1), or 0.0 if none is ranked.

    Yours: code/practice/exercises.py, notebook 08's exercise.
    """
    return exercises.reciprocal_rank(ranked_ids, evidence)


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


def verdict(reports: Sequence[Report], metric: str = "MRR") -> str:
    """The table's outcome in words: which rule wins overall, and relevance alone against the
    course's three signals (the question a learner asks first), with the margins.

    Example: "best overall: ram (MRR 0.609). relevance alone 0.455 against the course's three
    signals 0.353: relevance alone is ahead by 0.102."
    """
    if not reports:
        raise ValueError("verdict needs at least one report, got none")
    if metric not in reports[0].overall:
        raise ValueError(f"metric must be one of {', '.join(reports[0].overall)}, got {metric!r}")
    by_name = {r.strategy.name: r.overall[metric] for r in reports}
    best = max(by_name, key=by_name.get)  # the first of equals: the table's order
    runner_up = max((v for n, v in by_name.items() if n != best), default=None)
    line = f"best overall: {best} ({metric} {by_name[best]:.3f})"
    if runner_up is not None:
        line += f", ahead of the next by {by_name[best] - runner_up:.3f}"
    line += "."
    if "relevance" in by_name and "course" in by_name:
        alone, course = by_name["relevance"], by_name["course"]
        ahead = "relevance alone" if alone > course else "the course's rule"
        line += (
            f" relevance alone {alone:.3f} against the course's three signals {course:.3f}: "
            + (f"{ahead} is ahead by {abs(alone - course):.3f}." if alone != course else "level.")
        )
    return line


def _row(name: str, cells: Sequence[str], widths: int | Sequence[int]) -> str:
    widths = [widths] * len(cells) if isinstance(widths, int) else widths
    return f"{name:<21}" + "".join(f" {cell:>{w}}" for cell, w in zip(cells, widths))
