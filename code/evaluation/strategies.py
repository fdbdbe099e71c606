"""Retrieval strategies: the learner's scoring with different settings, and ranking by one.

Every strategy is the learner's own scoring (scoring.py) with different settings: which
weights, which decay per kind (extensions/kinds.py), whether superseded facts are
dropped, and whether each signal is min-max normalised over the candidates first.

    rank(evalset, question, STRATEGIES["course"])[0].memory   # the best memory for it

Each question is asked at its own moment (`asked_at`): only memories made by then are
candidates, and recency is measured from then. Ranking here never touches a memory, so
every question sees the dataset exactly as the file describes it.

Deliberately left out: scoring a ranking (evaluation/metrics.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from base.decay import decay_rate_for_half_life, min_max
from base.unwritten import runs_on_learner_code
from base.validation import KINDS, check_decay_rate, check_weights
from evaluation.dataset import EvalSet, Question
from extensions.kinds import DEFAULT_HALF_LIVES
from retriever import ScoredMemory
from scoring import importance_score, recency_score, retrieval_score

RELEVANCE_KINDS = ("embedding", "bm25")


@dataclass(frozen=True)
class Strategy:
    """One way to rank: weights (relevance, recency, importance) and how recency decays.

    decay_rates: hourly decay rate per kind, as recency_score takes it.
    exclude_superseded: drop a fact once its replacement exists.
    min_max: rescale each signal to [0, 1] over the candidates before weighting.
    relevance: "embedding" (the learner's cosine of the two vectors) or "bm25" (Okapi
        BM25 over the words, evaluation/bm25.py: the classic keyword search, no vectors).
    """

    name: str
    weights: tuple[float, float, float]
    decay_rates: dict[str, float]
    exclude_superseded: bool = False
    min_max: bool = False
    source: str = ""
    relevance: str = "embedding"

    def __post_init__(self) -> None:  # refuse bad settings now, not midway through a run
        if self.relevance not in RELEVANCE_KINDS:
            raise ValueError(
                f"relevance must be one of {', '.join(RELEVANCE_KINDS)}, got {self.relevance!r}"
            )
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
        # Okapi BM25 (k1 = 1.2, b = 0.75) over the lab's words: what a keyword search
        # engine ranks by, and the usual baseline an embedding must beat.
        Strategy("bm25", (1.0, 0.0, 0.0), same_decay(0.995), relevance="bm25",
                 source="Okapi BM25 over the words (k1 1.2, b 0.75): keyword search only"),
    ]
}  # fmt: skip


@runs_on_learner_code
def rank(evalset: EvalSet, question: Question, strategy: Strategy) -> list[ScoredMemory]:
    """Every candidate memory for `question`, best first (ties keep file order)."""
    now = question.asked_at
    if strategy.relevance == "bm25":
        relevances = evalset.bm25_scores(question)
    else:
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
        for col in (1, 2, 3):  # each signal rescaled over the candidates
            for row, value in zip(rows, min_max([row[col] for row in rows])):
                row[col] = value
    scored = [
        ScoredMemory(m, rel, rec, imp, retrieval_score(rel, rec, imp, weights=strategy.weights))
        for m, rel, rec, imp in rows
    ]
    return sorted(scored, key=lambda row: row.score, reverse=True)
