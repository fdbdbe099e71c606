"""The learner's three-signal score in SQL, and exactly the learner's ranking from it.

    rows = sql_rank(store, query, now, k=3)     # == rank_memories(store, query, now)[:3]
    retrieve_sql(store, query, now, k=3)        # == retrieve(store, query, now, k=3)
    recall(store, query, now, k=3)              # the learner's retrieve, on that shortlist

The database scores every live memory of the store's user in one statement,

    w_rel * (1 - (embedding <=> q))                        relevance: pgvector's cosine
  + w_rec * power(decay_rate, greatest(0, hours))          recency since last access
  + w_imp * (importance / 10)                              importance

and keeps its top k. pgvector sums in float32, so two memories whose scores differ in the
seventh digit could swap. As scale/memory_index.py does, the database's order is never
trusted for the answer: error_bound() says how far a SQL score can be from the learner's,
every memory within twice that of the k-th best SQL score is fetched (usually k and a few
more), and those are rescored by the learner's own functions (scoring.py) and sorted as
rank_memories sorts: score, then store order. So the result is the learner's, ties included.

recall() is what a chat turn on PostgreSQL runs: SQL ranks, the learner decides. The
memories whose SQL score lies within the bound of the k-th (the same shortlist) are
handed, in store order, to the learner's own `retrieve` as a small in-memory store
(Shortlist: the store's own Memory objects, so retrieve's refreshes are the store's),
and what it returns is saved. Since the shortlist holds every memory that can be in the
exact top k, and keeps the store's order for ties, any correct retrieve returns on it
exactly what it returns on the whole store.

candidates_then_rerank() is the course's production path: an HNSW index finds the
`candidates` nearest memories by similarity alone (`ORDER BY embedding <=> q LIMIT 40`),
and only those are scored exactly. It is fast at any size, but approximate twice over:
HNSW may miss a near neighbour, and a recent, important memory that is not among the
nearest by similarity is never scored. benchmarks/bench_postgres.py measures its recall.

Deliberately left out: kind filters (retrieve_by_kind's half-lives are not in the SQL
score), and embedding the query (the hybrid weighs a query's words by their rarity in
the store: it reads them from the database's position_counts, which each write updates in
its own transaction: storage/store.py's position_counts()).
"""

from __future__ import annotations

import math

from base.defaults import DECAY_RATE, TOP_K, WEIGHTS
from base.units import SECONDS_PER_HOUR
from base.unwritten import runs_on_learner_code
from base.validation import as_timestamp, check_decay_rate, check_int, check_k, check_weights
from memory_store import Memory
from retriever import ScoredMemory, rank_memories
from scale.matrix_scoring import Shortlist
from storage.postgres_database import SCHEMA, TRUSTED_NORM, bare_connection
from storage.postgres_store import PostgresMemoryStore

FLOAT32_UNIT = 2.0**-24  # relative rounding error of one float32 operation
FLOAT64_UNIT = 2.0**-53
CANDIDATES = 40  # the course's shortlist for candidate-then-rerank
HNSW_EF_SEARCH = 100  # how wide the index searches (>= CANDIDATES)
SCORED_FIELDS = ("last_accessed", "importance", "embedding", "superseded_by")  # what SQL reads

# One row per live memory: id and its SQL score. %(q)s is the query as a pgvector value.
SCORE_SQL = f"""
SELECT id, seq,
       %(w_rel)s * (1 - coalesce(nullif(embedding <=> %(q)s, 'NaN'), 1))
     + %(w_rec)s * (CASE WHEN hours * ln(%(decay)s) < -700 THEN 0
                         ELSE power(%(decay)s, hours) END)
     + %(w_imp)s * (importance / 10) AS score,
       NOT norm_trusted AS untrusted
FROM (SELECT id, seq, embedding, importance, norm_trusted,
             greatest(0, (%(now)s - last_accessed) / {SECONDS_PER_HOUR}) AS hours
      FROM {SCHEMA}.memories
      WHERE user_id = (SELECT {SCHEMA}.session_user_id()) AND superseded_by IS NULL) AS live
"""
# Every memory whose SQL score may put it in the exact top k (see error_bound).
WITHIN_BOUND_SQL = f"""
WITH s AS MATERIALIZED ({SCORE_SQL}),
kth AS (SELECT score FROM s ORDER BY score DESC LIMIT 1 OFFSET %(k)s - 1)
SELECT id, seq FROM s
WHERE untrusted OR score >= coalesce((SELECT score FROM kth), '-Infinity') - 2 * %(bound)s
"""
# The usual case in one top-N sort: the best %(n)s rows by SQL score, and every memory whose
# vector is too short or too long for float32 (a partial index finds them at once). When
# the n-th score is already below the k-th minus twice the bound, these are all the
# memories WITHIN_BOUND_SQL would return; otherwise (many near ties) that query runs.
TOP_SQL = f"""
(SELECT id, seq, score, untrusted FROM ({SCORE_SQL}) AS scored ORDER BY score DESC LIMIT %(n)s)
UNION ALL
SELECT id, seq, NULL, true FROM {SCHEMA}.memories
WHERE user_id = (SELECT {SCHEMA}.session_user_id()) AND superseded_by IS NULL
  AND NOT norm_trusted
"""
PADDING = 16  # rows beyond k that TOP_SQL fetches: near ties past that fall back


def error_bound(dimension: int, weights) -> float:
    """How far the SQL score can be from the learner's, for vectors of `dimension` values.

    pgvector sums q.m, |q|^2 and |m|^2 in float32 (any order): each is within
    gamma = D u / (1 - D u) of its exact value relative to |q||m| (Cauchy-Schwarz), so
    the cosine is within 2 gamma / (1 - gamma); the query rounded to float32 moves it by
    at most 2u more (the stored vectors are float32 already). The float64 parts (recency,
    importance, the sum, the learner's own rounding) are ~1e-15 per weight.

        error_bound(384, (1.0, 1.0, 1.0)) -> 4.6e-05 (approximately)
    """
    dimension = check_int(dimension, "dimension", 1, "the length of the vectors")
    gamma = dimension * FLOAT32_UNIT / (1 - dimension * FLOAT32_UNIT)
    relevance = 2 * gamma / (1 - gamma) + 3 * FLOAT32_UNIT + 8 * dimension * FLOAT64_UNIT
    w_rel, w_rec, w_imp = (abs(w) for w in weights)
    return w_rel * (relevance + 1e-10) + (w_rel + w_rec + w_imp + 1.0) * 64 * FLOAT64_UNIT


def sql_scores(store: PostgresMemoryStore, query_embedding, now, weights=WEIGHTS,
               decay_rate=DECAY_RATE) -> dict[str, float]:  # fmt: skip
    """{memory id: the SQL score} for every live memory: the fast, float32 numbers."""
    params = _params(store, query_embedding, now, weights, decay_rate)
    return {memory_id: score for memory_id, _, score, _ in store.select(SCORE_SQL, params)}


@runs_on_learner_code
def sql_rank(
    store: PostgresMemoryStore,
    query_embedding,
    now,
    k: int = TOP_K,
    weights=WEIGHTS,
    decay_rate=DECAY_RATE,
) -> list[ScoredMemory]:
    """The top k rows of rank_memories(store, ...), found in SQL. Changes nothing."""
    k = check_k(k)
    params = _params(store, query_embedding, now, weights, decay_rate)
    return _rescore(store, _within_bound(store, params, k), params)[:k]


def shortlist_ids(
    store: PostgresMemoryStore,
    query_embedding,
    now,
    k: int = TOP_K,
    weights=WEIGHTS,
    decay_rate=DECAY_RATE,
) -> list[str]:
    """The ids, in store order, of every live memory that may be in the exact top k."""
    k = check_k(k)
    params = _params(store, query_embedding, now, weights, decay_rate)
    return _within_bound(store, params, k)


def _within_bound(store, params, k) -> list[str]:
    params["k"] = k
    params["bound"] = error_bound(store.dimension or 1, params["weights"])
    if not (math.isfinite(params["bound"]) and _norm_trusted(params["query"])):
        return [m.id for m in store.live()]  # a query too short or too long for float32
    params["n"] = n = k + PADDING
    rows = store.select(TOP_SQL, params)  # (id, seq, score, untrusted); seq: the store's order
    top = [row for row in rows if row[2] is not None]
    if len(top) == n and top[k - 1][2] - 2 * params["bound"] <= top[-1][2]:
        rows = store.select(WITHIN_BOUND_SQL, params)  # the n-th may still be in: ask all
        return [memory_id for memory_id, _ in sorted(rows, key=lambda row: row[1])]
    if len(top) >= k:  # every row from the n-th on is below the k-th minus twice the bound
        threshold = top[k - 1][2] - 2 * params["bound"]
        rows = [row for row in rows if row[3] or row[2] is None or row[2] >= threshold]
    chosen = {memory_id: seq for memory_id, seq, _, _ in rows}  # an untrusted row twice: once
    return sorted(chosen, key=chosen.get)


def shortlist(store, query_embedding, now, k: int = TOP_K, weights=WEIGHTS,
              decay_rate=DECAY_RATE) -> Shortlist:  # fmt: skip
    """A Shortlist of the memories that may be in the exact top k: retrieve's input."""
    ids = shortlist_ids(store, query_embedding, now, k, weights, decay_rate)
    return Shortlist(store, [store.get(memory_id) for memory_id in ids])


@runs_on_learner_code
def recall(store, query_embedding, now, k: int = TOP_K, weights=WEIGHTS,
           decay_rate=DECAY_RATE, retrieve=None) -> list[Memory]:  # fmt: skip
    """`retrieve` (default: the learner's, retriever.retrieve) on the SQL shortlist; saved.

    Returns what retrieve(store, ...) would return over the whole store, with the same
    memories refreshed, and writes their last_accessed to the database.
    """
    if retrieve is None:
        from retriever import retrieve
    candidates = shortlist(store, query_embedding, now, k, weights, decay_rate)
    before = [(memory, memory.last_accessed) for memory in candidates]
    try:
        recalled = retrieve(candidates, query_embedding, now=now, k=k, weights=weights,
                            decay_rate=decay_rate)  # fmt: skip
        store.save(only=list(candidates))  # what retrieve refreshed: the shortlist, no scan
    except BaseException:
        # subtle: a recall that failed (say, the connection was lost while saving) recalls
        # nothing; a retry must rank the memories as they were, not as half-refreshed
        for memory, last_accessed in before:
            memory.last_accessed = last_accessed
        raise
    return recalled


@runs_on_learner_code
def retrieve_sql(store, query_embedding, now, k: int = TOP_K, weights=WEIGHTS,
                 decay_rate=DECAY_RATE) -> list[Memory]:  # fmt: skip
    """retrieve() through SQL: the same k memories, and their last_accessed set to now.

    The learner's retrieve decides, on the SQL shortlist (recall), and the refreshes are saved.
    """
    return recall(store, query_embedding, now, k=k, weights=weights, decay_rate=decay_rate)


@runs_on_learner_code
def candidates_then_rerank(
    store: PostgresMemoryStore,
    query_embedding,
    now,
    k: int = TOP_K,
    candidates: int = CANDIDATES,
    weights=WEIGHTS,
    decay_rate=DECAY_RATE,
) -> list[ScoredMemory]:
    """The `candidates` nearest memories by similarity (HNSW when indexed), exact top k of them.

    Uses the index made by create_hnsw_index for the store's dimension, searched with
    pgvector 0.8's iterative scan so that the per-user filter cannot empty the shortlist.
    """
    k = check_k(k)
    candidates = check_int(candidates, "candidates", k, "the shortlist size, at least k")
    params = _params(store, query_embedding, now, weights, decay_rate)
    d = int(store.dimension or len(params["query"]))
    params["c"] = candidates
    mine = (
        f"FROM {SCHEMA}.memories WHERE user_id = (SELECT {SCHEMA}.session_user_id()) "
        f"AND superseded_by IS NULL AND vector_dims(embedding) = {d} "
    )
    rows = store.select(
        f"SELECT id, seq {mine}ORDER BY embedding::vector({d}) <=> %(q)s::vector({d}) LIMIT %(c)s",
        params,
        settings={  # for this query only
            "hnsw.iterative_scan": "relaxed_order",
            "hnsw.ef_search": max(HNSW_EF_SEARCH, candidates),
            # the planner has no statistics of the lab's tables (nothing of any user's rows
            # may show in an estimate), so it would sort the user's rows instead: asked to
            # avoid a sort, it takes the index, as this path means to
            "enable_sort": "off",
        },
    )
    if len(rows) < candidates:
        # subtle: the index holds every user's rows; when others' lie nearer, the iterative
        # scan stops (hnsw.max_scan_tuples) before it has found `candidates` of this user's.
        # Then the shortlist is exact: ordered by an expression the index does not hold.
        live = store.select(f"SELECT count(*) {mine}", params)[0][0]
        if live > len(rows):
            rows = store.select(
                f"SELECT id, seq {mine}ORDER BY embedding <=> %(q)s LIMIT %(c)s", params
            )
    ids = [memory_id for memory_id, _ in sorted(rows, key=lambda row: row[1])]
    return _rescore(store, ids, params)[:k]


def create_hnsw_index(admin_url: str, dimension: int) -> None:
    """Build the HNSW cosine index for `dimension`-long vectors (as the administrator).

    pgvector indexes only vectors of one declared length, so the index is on
    embedding::vector(dimension) for the rows of that length.
    """
    d = check_int(dimension, "dimension", 1, "the length of the vectors")
    if d > 2000:
        raise ValueError(f"pgvector's HNSW index holds at most 2000 dimensions, got {d}")
    db = bare_connection(admin_url)
    try:
        db.execute(
            f"CREATE INDEX IF NOT EXISTS memories_hnsw_{d} ON {SCHEMA}.memories "
            f"USING hnsw ((embedding::vector({d})) vector_cosine_ops) "
            f"WHERE vector_dims(embedding) = {d}"
        )
        db.execute(f"ANALYZE {SCHEMA}.memories")  # row counts, so the planner picks the index
    finally:
        db.close()


# --- shared steps -------------------------------------------------------------------------


def _params(store, query_embedding, now, weights, decay_rate) -> dict:
    """Validate as retrieve does; the store saved, so the database holds what it holds."""
    import numpy as np

    if not isinstance(store, PostgresMemoryStore):
        raise TypeError(f"store must be a PostgresMemoryStore, got {type(store).__name__}")
    query = store.check_query(query_embedding)
    now = as_timestamp(now, "now")
    weights = check_weights(weights)
    decay_rate = check_decay_rate(decay_rate)
    if store.unsaved(SCORED_FIELDS):  # in-place touches (last_accessed) must reach SQL
        store.save()
    w_rel, w_rec, w_imp = weights
    low, high = TRUSTED_NORM
    return {
        "q": np.asarray(query, dtype=np.float32), "query": query, "now": now,
        "weights": weights, "decay": decay_rate,
        "w_rel": w_rel, "w_rec": w_rec, "w_imp": w_imp, "lo": low, "hi": high,
    }  # fmt: skip


def _norm_trusted(query) -> bool:
    norm = math.sqrt(math.fsum(x * x for x in query))
    low, high = TRUSTED_NORM
    return low <= norm <= high


def _rescore(store, ids, params) -> list[ScoredMemory]:
    """The learner's rank_memories on the memories of `ids` (in store order): exact scores,
    sorted as it sorts (score, then store order)."""
    candidates = Shortlist(store, [store.get(memory_id) for memory_id in ids])
    return rank_memories(candidates, params["query"], params["now"], weights=params["weights"],
                         decay_rate=params["decay"])  # fmt: skip
