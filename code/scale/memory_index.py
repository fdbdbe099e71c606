"""MemoryIndex: the retriever's loop as matrix arithmetic, for a lifetime of memories.

`retriever.retrieve` scores memories one at a time in Python: about 0.05 ms each, so
about five seconds per query at a hundred thousand memories. The index keeps the same
numbers as arrays beside a MemoryStore and scores all of them at once in numpy:

    embeddings     (N, D) float32, one contiguous matrix of unit-length rows
    last_accessed  (N,)   float64 epoch seconds
    importance     (N,)   float64 ratings, 1-10
    live, kind, user      (N,) flags and small integer codes for the filters

A query is one pass over the matrix (`embeddings @ query`), a few passes over the
(N,) arrays, and a partial selection of the best. float32 rounds, and two memories
whose scores differ in the eighth digit could swap places, so the index never trusts
its fast scores for the final order: every memory whose fast score is within a proven
error bound of the k-th best (scale/matrix_scoring.py) is ranked exactly by the learner's
own `rank_memories`, on a Shortlist of just those memories. The fast scores are the
learner's `retrieval_scores` (notebook 09's exercise); until it is written, every memory
goes to `rank_memories`, slower and the same. The result is the reference's memories in
the reference's order, with the same scores, ties included.

    index = MemoryIndex()                # or MemoryIndex(store) to index an existing store
    index.add(memory); index.supersede("m1", "m2"); index.remove("m3")
    index.retrieve(query, now, k=3)      # == retriever.retrieve(index.store, query, now, k=3)

Change memories through the index (add, supersede, remove, retrieve). A change made
directly to the store or to a memory is invisible to the arrays: the index notices it
when the memory becomes a candidate and raises IndexOutOfStep; `resync()` rebuilds.

Deliberately left out: approximate nearest-neighbour structures (HNSW, IVF), which
give up exactness, and persistence (the arrays are rebuilt from the store).
"""

from __future__ import annotations

import numpy as np

import retriever
from base.defaults import DECAY_RATE, WEIGHTS
from base.unwritten import runs_on_learner_code
from base.validation import (
    KINDS,
    Weights,
    as_timestamp,
    check_decay_rate,
    check_int,
    check_k,
    check_kind,
    check_text,
    check_weights,
)
from memory_store import Memory, MemoryStore
from retriever import ScoredMemory, rank_memories
from scale.matrix_scoring import (
    Query,
    Shortlist,
    check_magnitudes,
    error_bound,
    fast_scores,
    magnitudes_ok,
    unit_rows,
    within_bound,
)
from scoring import relevance_score

WHO = ("user_id", "kinds", "candidates")  # retrieve's filters, as top_k's
BUILD_CHUNK = 65_536  # memories converted to float64 at a time when indexing a store


class IndexOutOfStep(RuntimeError):
    """The store or a memory changed without going through the index."""


class MemoryIndex:
    """A MemoryStore plus its memories as numpy arrays, kept in step on every change."""

    def __init__(self, store: MemoryStore | None = None) -> None:
        if store is None:
            store = MemoryStore(user_id=None)  # the index holds many users, filtered per query
        if not isinstance(store, MemoryStore):
            raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
        self.store = store
        self.rescored = 0  # memories scored exactly by the last query (for measurements)
        self.resync()

    # --- keeping the arrays in step with the store --------------------------------------

    def resync(self) -> None:
        """Rebuild every array from the store (after changes made behind the index's back)."""
        memories = list(self.store)
        n, dim = len(memories), self.store.dimension or 1
        self._matrix = np.zeros((max(n, 16), dim), dtype=np.float32)  # (capacity, D)
        self._last = np.zeros(len(self._matrix))  # epoch seconds
        self._imp = np.zeros(len(self._matrix))  # importance ratings, 1-10
        self._live = np.zeros(len(self._matrix), dtype=bool)
        self._kind = np.zeros(len(self._matrix), dtype=np.int8)  # index into KINDS
        self._user = np.zeros(len(self._matrix), dtype=np.int32)  # index into _user_names
        self._pos = np.zeros(len(self._matrix), dtype=np.int64)  # store order, for ties
        self._user_codes: dict[str, int] = {}
        self._user_names: list[str] = []
        self._memories: list[Memory] = []
        self._vectors: list[tuple] = []  # each row's embedding tuple, to notice replacements
        self._rows: dict[str, int] = {}
        self._n_superseded = 0
        self._next_pos = 0
        for start in range(0, n, BUILD_CHUNK):
            chunk = memories[start : start + BUILD_CHUNK]
            block = np.array([m.embedding for m in chunk], dtype=np.float64)  # (chunk, D)
            if not magnitudes_ok(block):
                for memory in chunk:  # find the one to name in the error
                    check_magnitudes(np.asarray(memory.embedding), f"memory {memory.id!r}")
            self._matrix[start : start + len(chunk)] = unit_rows(block)
            for memory in chunk:
                self._append(memory)

    def add(self, memory: Memory) -> Memory:
        """Add `memory` to the store and to the arrays; returns it (as MemoryStore.add)."""
        if isinstance(memory, Memory):
            check_magnitudes(np.asarray(memory.embedding), f"memory {memory.id!r}")
        self._check_in_step()
        self.store.add(memory)  # the store's own checks: duplicate id, model, dimension
        if len(self.store) == 1 and self._matrix.shape[1] != self.store.dimension:
            self._matrix = np.zeros((len(self._matrix), self.store.dimension), np.float32)
        self._grow_if_full()
        self._matrix[len(self._memories)] = unit_rows(np.asarray([memory.embedding]))[0]
        self._append(memory)
        return memory

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id` in the store; recall skips it from now on."""
        self._check_in_step()
        self.store.supersede(old_id, new_id)
        row = self._rows[old_id]
        if self._live[row]:
            self._live[row] = False
            self._n_superseded += 1

    def remove(self, memory_id: str) -> Memory:
        """Remove a memory from the store and the arrays (the last row moves into its place)."""
        self._check_in_step()
        memory = self.store.remove(memory_id)  # may refuse: see MemoryStore.remove
        row, last = self._rows.pop(memory_id), len(self._memories) - 1
        self._n_superseded -= int(not self._live[row])
        if row != last:  # order lives in _pos, so rows may move freely
            for array in self._arrays():
                array[row] = array[last]
            self._memories[row], self._vectors[row] = self._memories[last], self._vectors[last]
            self._rows[self._memories[row].id] = row
        self._memories.pop()
        self._vectors.pop()
        return memory

    def _append(self, memory: Memory) -> None:
        row = len(self._memories)
        self._last[row] = memory.last_accessed
        self._imp[row] = memory.importance
        self._live[row] = memory.superseded_by is None
        self._kind[row] = KINDS.index(memory.kind)
        self._user[row] = self._user_code(memory.user_id, create=True)
        self._pos[row] = self._next_pos
        self._next_pos += 1
        self._n_superseded += int(not self._live[row])
        self._memories.append(memory)
        self._vectors.append(memory.embedding)
        self._rows[memory.id] = row

    def _arrays(self):
        return self._matrix, self._last, self._imp, self._live, self._kind, self._user, self._pos

    def _grow_if_full(self) -> None:
        if len(self._memories) < len(self._matrix):
            return
        capacity = 2 * len(self._matrix)  # doubling, as a Python list does: adds stay O(1)
        for name in ("_matrix", "_last", "_imp", "_live", "_kind", "_user", "_pos"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _user_code(self, user_id: str, create: bool = False) -> int | None:
        if user_id not in self._user_codes:
            if not create:
                return None
            self._user_codes[user_id] = len(self._user_names)
            self._user_names.append(user_id)
        return self._user_codes[user_id]

    def _check_in_step(self) -> None:
        if len(self.store) != len(self._memories):
            raise IndexOutOfStep(
                f"the store holds {len(self.store)} memories but the index {len(self._memories)}:"
                " it was changed directly. Add, supersede and remove through the index, or"
                " call index.resync() after changing the store."
            )

    def _check_row(self, row: int) -> Memory:
        """The memory of `row`, after checking that nothing changed it behind our back."""
        m = self._memories[row]
        recorded = {
            "last_accessed": (m.last_accessed, self._last[row]),
            "importance": (m.importance, self._imp[row]),
            "superseded_by": (m.superseded_by is None, bool(self._live[row])),
            "kind": (m.kind, KINDS[self._kind[row]]),
            "user_id": (m.user_id, self._user_names[self._user[row]]),
            "embedding": (m.embedding is self._vectors[row], True),  # reassigning makes a new tuple
        }
        for field, (now_value, indexed) in recorded.items():
            if now_value != indexed:
                raise IndexOutOfStep(
                    f"memory {m.id!r} changed outside the index ({field} differs from the "
                    "indexed value). Change memories through the index, or call "
                    "index.resync() after changing them."
                )
        return m

    # --- recall ---------------------------------------------------------------------------

    @runs_on_learner_code
    def top_k(
        self,
        query_embedding,
        now,
        k: int = 3,
        weights: Weights = WEIGHTS,
        decay_rate: float = DECAY_RATE,
        user_id: str | None = None,
        kinds=None,
        candidates: int | None = None,
    ) -> list[ScoredMemory]:
        """The k best live memories as ScoredMemory rows, best first. Changes nothing.

        Inputs: as for retriever.rank_memories, plus
            k: how many rows to return, an int >= 1.
            user_id: only this user's memories compete (None: everyone's, as the reference).
                A user with no memories yet gets [], as an empty store does.
            kinds: a kind or a list of kinds to keep, e.g. "semantic" (None: all kinds).
            candidates: None ranks every memory exactly. An int c (e.g. 40) first keeps
                the c memories with the highest relevance_score (ties in store order),
                then ranks those with the full score, as systems built on a vector store
                do; it can miss a fresh or important memory (see docs/scale.md).
        Returns:
            with candidates=None, exactly rank_memories(store, ...)[:k] restricted to the
            filters: the same memories, scores and order, ties kept in store order.
        """
        query, now, weights, decay_rate, k = self._checked(
            query_embedding, now, weights, decay_rate, k
        )
        shortlist = self._shortlist(query, now, weights, decay_rate, k, user_id, kinds, candidates)
        if shortlist is None:
            return []
        ranking = rank_memories(
            shortlist, query.values, now, weights=weights, decay_rate=decay_rate
        )
        return ranking[:k]

    def _shortlist(self, query, now, weights, decay_rate, k, user_id, kinds, candidates):
        """A Shortlist of the memories that may be in the exact top k (None: none may)."""
        if candidates is not None:
            candidates = check_int(candidates, "candidates", 1, "memories to rerank, >= k, or None")
            if candidates < k:
                raise ValueError(
                    f"candidates ({candidates!r}) must be >= k ({k}): rerank at least as many "
                    "memories as you return"
                )
        allowed = self._allowed(user_id, kinds)  # (N,) bool, or None when all may compete
        n = len(self)
        count = n if allowed is None else int(np.count_nonzero(allowed))
        if count == 0:
            return None
        sims = self.embeddings @ query.unit  # (N,) float32: the one pass over the matrix
        if candidates is None or candidates >= count:
            pool = None if allowed is None else np.flatnonzero(allowed)
        else:
            pool = self._nearest(sims, allowed, int(candidates), query)
        rows = self._within_error_bound(sims, pool, now, weights, decay_rate, k)
        rows = rows[np.argsort(self._pos[rows])]  # store order, as the learner's loop expects
        self.rescored = len(rows)
        return Shortlist(self.store, [self._check_row(row) for row in rows.tolist()])

    @runs_on_learner_code
    def retrieve(self, query_embedding, now, k: int = 3, **options) -> list[Memory]:
        """retriever.retrieve over the index: the top k memories, refreshed to `now`.

        Same options as top_k. Sets last_accessed = now on exactly the returned
        memories, in the store and in the arrays.
        """
        user_id, kinds, candidates = (options.pop(name, None) for name in WHO)
        weights, decay_rate = options.pop("weights", WEIGHTS), options.pop("decay_rate", DECAY_RATE)
        if options:
            raise TypeError(f"unknown option(s): {', '.join(sorted(options))}")
        query, now, weights, decay_rate, k = self._checked(
            query_embedding, now, weights, decay_rate, k
        )
        shortlist = self._shortlist(query, now, weights, decay_rate, k, user_id, kinds, candidates)
        if shortlist is None:
            return []
        recalled = retriever.retrieve(  # the learner's: it decides and refreshes
            shortlist, query.values, now, k=k, weights=weights, decay_rate=decay_rate
        )
        for memory in recalled:  # the learner refreshed them: the arrays follow
            self._last[self._rows[memory.id]] = memory.last_accessed
        return recalled

    def _within_error_bound(self, sims, pool, now, weights, decay_rate, k):
        """Rows (of `pool`, or of all N) whose fast score may put them in the exact top k."""
        n = len(sims)
        last, imp = self._last[:n], self._imp[:n]
        if pool is not None:  # a filter or the rerank's candidates: score only those rows
            sims, last, imp = sims[pool], last[pool], imp[pool]
        picked = None
        if len(sims) > k:
            scores = fast_scores(sims, last, imp, now, weights, decay_rate)  # None: no shortcut
            if scores is not None:
                picked = within_bound(scores, k, error_bound(self._matrix.shape[1], weights))
        if picked is None:  # k or fewer, no usable bound, or no retrieval_scores: take all
            return np.arange(n) if pool is None else pool
        return picked if pool is None else pool[picked]

    def _nearest(self, sims, allowed, c, query):
        """Rows of the c allowed memories with the highest relevance_score, ties in store order.

        The float32 cosines settle every row but those within the relevance error bound of
        the c-th best; that band is ranked by the exact cosine, then by store order, so the
        candidates do not depend on float32 rounding or on where removals moved rows.
        """
        sims = sims.astype(np.float64)  # (N,): compare in float64, the bounds are that fine
        if allowed is not None:
            sims[~allowed] = -np.inf
        cth = np.partition(sims, len(sims) - c)[-c]  # the c-th best: finite, as c < allowed
        bound = 2.0 * error_bound(self._matrix.shape[1], (1.0, 0.0, 0.0))
        sure = np.flatnonzero(sims > cth + bound)  # certainly among the nearest c
        band = np.flatnonzero((sims >= cth - bound) & (sims <= cth + bound))
        if len(sure) + len(band) > c:  # the band holds more than the places left: order it
            exact = [
                relevance_score(query.values, self._check_row(row).embedding)
                for row in band.tolist()
            ]
            order = sorted(range(len(band)), key=lambda i: (-exact[i], self._pos[band[i]]))
            band = band[order[: c - len(sure)]]
        return np.concatenate([sure, band])

    def _allowed(self, user_id, kinds) -> np.ndarray | None:
        """(N,) bool: live and matching the filters; None when every memory may compete."""
        n = len(self)
        mask = self._live[:n].copy() if self._n_superseded else None
        if user_id is not None:
            check_text(user_id, "user_id", "a non-empty string or None")
            code = self._user_code(user_id)
            mine = self._user[:n] == code if code is not None else np.zeros(n, dtype=bool)
            mask = mine if mask is None else mask & mine
        if kinds is not None:
            if not isinstance(kinds, str | list | tuple | set | frozenset):
                raise TypeError(f"kinds must be a kind, a list of kinds or None, got {kinds!r}")
            wanted = [kinds] if isinstance(kinds, str) else list(kinds)
            if not wanted:
                raise ValueError("kinds must name at least one kind, or be None for all kinds")
            lookup = np.zeros(len(KINDS), dtype=bool)
            lookup[[KINDS.index(check_kind(kind)) for kind in wanted]] = True
            mask = lookup[self._kind[:n]] if mask is None else mask & lookup[self._kind[:n]]
        return mask

    def _checked(self, query_embedding, now, weights, decay_rate, k):
        """Validate a query's arguments with retrieve's rules and messages."""
        query = Query.of(query_embedding)
        self.store.check_query(query.values)  # the store's length, and retrieve's message
        now = as_timestamp(now, "now")
        weights = check_weights(weights)
        decay_rate = check_decay_rate(decay_rate)
        k = check_k(k)
        self._check_in_step()
        return query, now, weights, decay_rate, k

    def verify(self) -> None:
        """Raise IndexOutOfStep unless every row matches its memory in the store."""
        self._check_in_step()
        for row, memory in enumerate(self._memories):
            if self.store.get(memory.id) is not memory:
                raise IndexOutOfStep(f"memory {memory.id!r} was replaced in the store")
            self._check_row(row)

    @property
    def embeddings(self) -> np.ndarray:
        """The (N, D) float32 matrix of unit rows, read-only (a view: nothing is copied)."""
        view = self._matrix[: len(self._memories)]
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return len(self._memories)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._rows

    def __repr__(self) -> str:
        return f"MemoryIndex({len(self)} memories, dimension={self.store.dimension})"
