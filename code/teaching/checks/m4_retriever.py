"""Milestone 4: the checks of rank_memories and retrieve, on small known stores.

A retriever can be wrong in more ways than a formula: it can sort worst first, return
ids instead of memories, forget to refresh what it returned (or refresh everything, or
change created_at too), recall a superseded fact, measure recency from created_at, use
the raw rating, or break ties by id or at random. Each scenario below is a tiny store
with the answer written out, plus what each of those mistakes would return on it, so a
wrong answer is named, not just flagged. Ties are recognised from the rows themselves
(equal memories score alike), and a store with equal scores is ranked several times, so
a random tie-break cannot pass by luck.

Deliberately left out: the reference solution; only answers and mistakes are written down.

    >>> check_retrieve()          # prints "retrieve: 7 checks passed"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory_store import Memory, MemoryStore
from teaching.checks.core import HOUR, NOW, call_learner, learner_function, passed, report

# id, embedding, hours since created, hours since last access, importance, superseded_by
Row = tuple[str, tuple[float, ...], float, float, float, str | None]

FIVE = (
    ("a", (1.0, 0.0), 300, 300, 3, None),  # on topic, but untouched for 300 hours
    ("b", (0.8, 0.6), 30, 1, 5, None),
    ("c", (0.0, 1.0), 2, 0, 9, None),  # off topic, fresh and important
    ("d", (0.6, 0.8), 8760, 2, 6, None),  # created a year ago, recalled 2 hours ago
    ("e", (1.0, 0.1), 5, 0, 10, "b"),  # would win, but "b" replaced it
    ("f", (0.6, -0.8), 50, 50, 2, None),
)
COURSE_TIE = (  # the course's example 3: same vector, m1 fresher and more important
    ("m0", (1.0, 0.0, 0.0), 1e6 / HOUR, 1e6 / HOUR, 1, None),
    ("m1", (1.0, 0.0, 0.0), 10 / HOUR, 10 / HOUR, 8, None),
)
TIES = (  # three groups of three identical memories, added interleaved; within each group
    # the store's order is neither the ids' order nor its reverse, so every wrong tie-break
    # (reversed, by id either way, random) gives another ranking
    ("t4", (1.0, 0.0), 5, 5, 5, None),
    ("t2", (0.6, 0.8), 5, 5, 5, None),
    ("t9", (0.0, 1.0), 5, 5, 5, None),
    ("t1", (1.0, 0.0), 5, 5, 5, None),
    ("t8", (0.6, 0.8), 5, 5, 5, None),
    ("t3", (0.0, 1.0), 5, 5, 5, None),
    ("t7", (1.0, 0.0), 5, 5, 5, None),
    ("t5", (0.6, 0.8), 5, 5, 5, None),
    ("t6", (0.0, 1.0), 5, 5, 5, None),
)


@dataclass(frozen=True)
class Scenario:
    """A store, a query, and the ids retrieve must return (best first)."""

    title: str
    rows: tuple[Row, ...]
    query: tuple[float, ...]
    k: int
    ranking: tuple[str, ...]  # every live memory, best first; retrieve returns the first k
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    decay_rate: float = 0.995
    mistakes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def expected(self) -> list[str]:
        return list(self.ranking[: self.k])

    def memories(self) -> list[dict]:
        """The store's memories as plain values (what the grader's worker builds from)."""
        return [
            {"id": i, "embedding": list(vector), "created_at": NOW - created * HOUR,
             "last_accessed": NOW - accessed * HOUR, "importance": importance}
            for i, vector, created, accessed, importance, _ in self.rows
        ]  # fmt: skip

    def superseded(self) -> list[list[str]]:
        return [[i, by] for i, *_, by in self.rows if by]

    def tie_key(self, row: Row) -> tuple:
        """What decides a memory's score: two rows with the same key score the same."""
        _, vector, _, accessed, importance, _ = row
        return vector, accessed, importance

    def build(self) -> MemoryStore:
        store = MemoryStore()
        for memory_id, vector, created, accessed, importance, _ in self.rows:
            store.add(
                Memory(
                    memory_id,
                    f"memory {memory_id}",
                    created_at=NOW - created * HOUR,
                    last_accessed=NOW - accessed * HOUR,
                    importance=importance,
                    embedding=vector,
                )
            )
        for memory_id, *_, replaced_by in self.rows:
            if replaced_by:
                store.supersede(memory_id, replaced_by)
        return store

    def call(self) -> str:
        return (
            f"retrieve(store, {list(self.query)}, now, k={self.k}, weights={self.weights}, "
            f"decay_rate={self.decay_rate})   # {self.title}"
        )


SUPERSEDED = "a superseded memory was returned: skip memories whose superseded_by is set"
CREATED_AT = "recency was measured from created_at; measure it from last_accessed"
SCENARIOS = [
    Scenario("the course's relevance tie", COURSE_TIE, (1.0, 0.0, 0.0), 1, ("m1", "m0")),
    Scenario(
        "five live memories, one superseded",
        FIVE,
        (1.0, 0.0),
        3,
        ("b", "d", "c", "f", "a"),
        mistakes={
            SUPERSEDED: ("e", "b", "d"),
            CREATED_AT: ("b", "c", "f"),
            "only recency counted: combine all three signals": ("c", "b", "d"),
            "only relevance counted: combine all three signals": ("a", "b", "d"),
        },
    ),
    Scenario(
        "unequal weights",
        FIVE,
        (1.0, 0.0),
        3,
        ("b", "a", "d", "f", "c"),
        weights=(2.0, 0.5, 1.0),
        mistakes={"the weights argument was not passed on to the scoring": ("b", "d", "c")},
    ),
    Scenario(
        "a faster decay",
        FIVE,
        (1.0, 0.0),
        4,
        ("b", "d", "c", "a", "f"),
        decay_rate=0.9,
        mistakes={"the decay_rate argument was not passed on to recency": ("b", "d", "c", "f")},
    ),
    Scenario(
        "equal scores",
        TIES,
        (1.0, 0.0),
        4,
        ("t4", "t1", "t7", "t2", "t8", "t5", "t9", "t3", "t6"),
        mistakes={
            "equal scores must keep the store's order: sort with reverse=True instead of "
            "sorting ascending and reversing the list": ("t7", "t1", "t4", "t5"),
        },
    ),
    Scenario("k larger than the store", FIVE, (1.0, 0.0), 10, ("b", "d", "c", "f", "a")),
    Scenario("an empty store", (), (1.0, 0.0), 3, ()),
]


def describe(result) -> str:
    if not isinstance(result, list):
        return f"a {type(result).__name__}"
    return "[" + ", ".join(_label(item) for item in result) + "]"


def _label(item) -> str:
    return repr(item.id) if isinstance(item, Memory) else f"{type(item).__name__} {item!r:.40}"


def shape_mistake(result, store: MemoryStore) -> str | None:
    """What is wrong with the *kind* of thing returned, if anything."""
    if result is None:
        return "retrieve returned None: is the `return` line missing?"
    if not isinstance(result, list):
        return f"retrieve returned a {type(result).__name__}; return a list of Memory objects"
    for item in result:
        if hasattr(item, "memory") and hasattr(item, "score"):
            return "ranking rows were returned; return row.memory for each of the top k"
        if isinstance(item, str):
            return "ids were returned; return the Memory objects themselves"
        if isinstance(item, (int, float)):
            return "scores were returned; return the Memory objects, best first"
        if isinstance(item, tuple):
            return "tuples were returned; return just the Memory objects"
        if not isinstance(item, Memory):
            return f"a {type(item).__name__} was returned; return Memory objects"
        if item.id not in store or store.get(item.id) is not item:
            return "copies were returned; return the store's own Memory objects"
    return None


TIES_BY_ID_DOWN = (
    "equal scores were put in the ids' reverse order (a key of score and id, sorted with "
    "reverse=True, reverses the ids too): equal scores keep the store's order, the order "
    "the memories were added, whatever their ids"
)
TIES_BY_ID_UP = (
    "equal scores were put in the ids' order: equal scores keep the store's order, the "
    "order the memories were added, whatever their ids"
)
TIES_REVERSED = (
    "equal scores came out in the reverse of the store's order: sort with reverse=True "
    "instead of sorting ascending and reversing the list"
)
TIES_RANDOM = (
    "equal scores came out in a different order on two runs over the same store: the "
    "tie-break is random (a shuffle, a random key, or a set's order); equal scores keep the "
    "store's order, which a sort on the score alone keeps (Python's sort is stable)"
)
TIES_OTHER = (
    "the right scores, but equal scores in another order than the store's: equal scores "
    "keep the order the memories were added"
)


def tie_groups(scenario) -> list[list[str]]:
    """The runs of equal scores in the ranking (ids in the store's order), from the rows alone."""
    key = {row[0]: scenario.tie_key(row) for row in scenario.rows}
    groups: list[list[str]] = []
    for memory_id in scenario.ranking:
        if groups and key[groups[-1][0]] == key[memory_id]:
            groups[-1].append(memory_id)
        else:
            groups.append([memory_id])
    return groups


def tie_mistake(got: list[str], scenario, k: int | None = None) -> str | None:
    """How the ties were broken, if the answer is the ranking with its ties reordered.

    Works from the rows, so it holds for any store (ids renamed, rows shuffled).
    """
    groups = tie_groups(scenario)
    k = len(scenario.ranking) if k is None else k
    expected = list(scenario.ranking[:k])
    orders = [
        (TIES_BY_ID_DOWN, lambda group: sorted(group, reverse=True)),
        (TIES_REVERSED, lambda group: group[::-1]),
        (TIES_BY_ID_UP, sorted),
    ]
    for label, order in orders:
        variant = [i for group in groups for i in order(group)][:k]
        if variant != expected and got == variant:
            return label
    position = {i: n for n, group in enumerate(groups) for i in group}
    same_runs = [position[i] for i in got if i in position] == [position[i] for i in expected]
    if got != expected and same_runs and len(got) == len(expected) and len(set(got)) == len(got):
        return TIES_OTHER
    return None


def order_mistake(got: list[str], scenario: Scenario) -> str:
    k, ranking = scenario.k, list(scenario.ranking)
    for label, ids in scenario.mistakes.items():
        if got == list(ids):
            return label
    ties = tie_mistake(got, scenario, k)
    if ties:
        return ties
    if got == ranking[::-1][:k]:
        return "sorted worst first: sort by score with reverse=True (highest first)"
    if got == ranking[: k + 1] and len(ranking) > k:
        return "one result too many: keep only the first k ([:k])"
    if got == ranking[: k - 1] and k <= len(ranking):
        return "one result too few: keep the first k ([:k]), not k - 1"
    if got == ranking and len(ranking) > k:
        return "every memory was returned: keep only the first k"
    if sorted(got) == sorted(ranking[:k]):
        return "the right memories in the wrong order: sort by score, highest first"
    return "none of the usual mistakes matches: print rank_memories(...) to see the scores"


def touch_mistake(store: MemoryStore, before: dict[str, float], returned: set[str]) -> str | None:
    """Exactly the returned memories must have last_accessed == now; no others may change."""
    after = {m.id: m.last_accessed for m in store}
    not_now = [i for i in returned if after[i] != NOW]
    if not_now and all(after[i] == before[i] for i in not_now):
        return "the returned memories were not refreshed: set last_accessed = now on each"
    if not_now:
        return "last_accessed was set, but not to `now`: use the now argument, not the clock"
    others = sorted(i for i in before if i not in returned and after[i] != before[i])
    if others and all(t == NOW for t in after.values()):
        return "every memory was refreshed: refresh only the k you return"
    if others:
        return f"memories that were not returned were refreshed too: {others}"
    return None


CREATED_AT_CHANGED = (
    "created_at was changed: created_at is when the memory was made; a recall changes "
    "only last_accessed"
)


def created_mistake(store: MemoryStore, before: dict[str, float], call: str, name: str) -> None:
    """No memory's created_at may change: raise CheckFailed naming those that did."""
    changed = sorted(m.id for m in store if m.created_at != before[m.id])
    if changed:
        raise report(
            call + "\n  created_at after the call",
            "unchanged on every memory",
            f"changed on {changed}",
            CREATED_AT_CHANGED,
            name,
        )


def run_scenario(scenario: Scenario, function: Callable | None = None) -> None:
    """Run retrieve on one scenario; raise CheckFailed naming the likely mistake."""
    function = function or learner_function("retrieve")
    store = scenario.build()
    before = {m.id: m.last_accessed for m in store}
    created = {m.id: m.created_at for m in store}
    call = scenario.call()
    result = call_learner(
        "retrieve",
        function,
        call,
        scenario.expected,
        store,
        list(scenario.query),
        NOW,
        k=scenario.k,
        weights=scenario.weights,
        decay_rate=scenario.decay_rate,
    )
    mistake = shape_mistake(result, store)
    if mistake:
        raise report(call, scenario.expected, describe(result), mistake, "retrieve")
    got = [m.id for m in result]
    if got != scenario.expected:
        mistake = order_mistake(got, scenario)
        raise report(call, scenario.expected, got, mistake, "retrieve")
    mistake = touch_mistake(store, before, set(got))
    if mistake:
        touched = {m.id: "now" if m.last_accessed == NOW else "unchanged" for m in store}
        expected = {i: "now" if i in got else "unchanged" for i in before}
        raise report(
            call + "\n  last_accessed after the call", expected, touched, mistake, "retrieve"
        )
    created_mistake(store, created, call, "retrieve")


REPEATS = 5  # runs of a store with equal scores: a random tie-break passes all 5 by luck
# with a chance below one in a million (rank_memories: 1/216 per run; retrieve: 1/18)


def check_retrieve(function: Callable | None = None) -> None:
    """Milestone 4: the course's tie, weights, decay, ties, k, empty store and refreshing."""
    function = function or learner_function("retrieve")
    for scenario in SCENARIOS:
        if scenario.rows is TIES:
            same_every_time(scenario, function, "retrieve")
        run_scenario(scenario, function)
    passed("retrieve", len(SCENARIOS))


def same_every_time(scenario, function: Callable, name: str) -> None:
    """Run `function` REPEATS times on fresh copies of a store with equal scores; a ranking
    that changes from run to run is a random tie-break, named as such (a single run could
    pass by luck, or look like another tie-break)."""
    call = scenario.call() if name != "rank_memories" else rank_call(scenario)
    expected = scenario.expected if name != "rank_memories" else list(scenario.ranking)
    kwargs = {"weights": scenario.weights}
    if isinstance(scenario, Scenario):
        kwargs["decay_rate"] = scenario.decay_rate
    else:
        kwargs["half_lives"] = dict(scenario.half_lives)
    if name != "rank_memories":
        kwargs["k"] = scenario.k
    answers = []
    for _ in range(REPEATS):
        got = call_learner(name, function, call, expected, scenario.build(),
                           list(scenario.query), NOW, **kwargs)  # fmt: skip
        if not isinstance(got, list):
            return  # the full check names the shape
        answers.append([getattr(getattr(item, "memory", item), "id", item) for item in got])
    if any(answer != answers[0] for answer in answers):
        wrong = next((a for a in answers if a != expected), answers[0])
        raise report(call, expected, wrong, TIES_RANDOM, name)


RAW_IMPORTANCE = (
    "importance was used as the raw rating (1-10): it then outweighs relevance and recency, "
    "which lie in 0-1; score it with importance_score (0.1-1.0), like the other two signals"
)
SIGNALS = ("relevance", "recency", "importance", "score")


def signal_mistake(rows) -> str | None:
    """A slip visible in the rows' own signals, whatever the order."""
    for row in rows:
        raw, used = getattr(row.memory, "importance", None), row.importance
        if isinstance(used, (int, float)) and used > 1 and used == raw:
            return RAW_IMPORTANCE
    return None


def check_rank_memories(function: Callable | None = None) -> None:
    """Milestone 4: every live memory, best first, as rows with the signals; nothing touched."""
    function = function or learner_function("rank_memories")
    scenario = SCENARIOS[1]
    store = scenario.build()
    before = {m.id: m.last_accessed for m in store}
    created = {m.id: m.created_at for m in store}
    call = "rank_memories(store, [1.0, 0.0], now)   # five live memories, one superseded"
    expected = list(scenario.ranking)
    rows = call_learner("rank_memories", function, call, expected, store, [1.0, 0.0], NOW)
    if not isinstance(rows, list) or not all(
        all(hasattr(r, field) for field in ("memory", *SIGNALS)) for r in rows
    ):
        mistake = "return a list of ScoredMemory(memory, relevance, recency, importance, score)"
        raise report(call, expected, describe(rows), mistake, "rank_memories")
    got = [getattr(row.memory, "id", row.memory) for row in rows]
    mistake = signal_mistake(rows)
    if mistake:
        shown = ", ".join(f"{i!r}: {row.importance:g}" for i, row in zip(got, rows))
        raise report(call + "\n  importance of each row", "ratings / 10, from 0.1 to 1.0",
                     shown, mistake, "rank_memories")  # fmt: skip
    if got != expected:
        mistake = {
            ("e", *expected): SUPERSEDED,
            ("b", "c", "f", "a", "d"): CREATED_AT,
            tuple(expected[::-1]): "sorted worst first: use reverse=True",
        }.get(tuple(got), "sort every live memory by score, highest first")
        raise report(call, expected, got, mistake, "rank_memories")
    top = rows[0]
    signals = (top.relevance, top.recency, top.importance, top.score)
    if [round(x, 4) for x in signals] != [0.8, 0.995, 0.5, 2.295]:
        raise report(
            call + "\n  signals of the top row 'b'",
            "relevance 0.8, recency 0.995, importance 0.5, score 2.295",
            ", ".join(f"{x:.4f}" for x in signals),
            "compute each signal with your scoring functions, in this order",
            "rank_memories",
        )
    changed = sorted(m.id for m in store if m.last_accessed != before[m.id])
    if changed:
        raise report(
            call,
            "no memory changed",
            f"last_accessed changed on {changed}",
            "rank_memories only ranks; refreshing belongs to retrieve",
            "rank_memories",
        )
    created_mistake(store, created, call, "rank_memories")
    _check_weights_are_passed_on(function)
    _check_ties_keep_store_order(function)
    passed("rank_memories", 6)


def _check_weights_are_passed_on(function: Callable) -> None:
    """Unequal weights change the order: caught here, not later in retrieve."""
    scenario = weights_scenario()
    call, expected = rank_call(scenario), list(scenario.ranking)
    rows = call_learner("rank_memories", function, call, expected, scenario.build(),
                        list(scenario.query), NOW, weights=scenario.weights)  # fmt: skip
    got = [row.memory.id for row in rows]
    if got != expected:
        ((label, equal_weights),) = scenario.mistakes.items()
        mistake = (
            f"{label}: the order is the one of equal weights"
            if tuple(got[: len(equal_weights)]) == equal_weights
            else "sort every live memory by score, highest first, at the weights given"
        )
        raise report(call, expected, got, mistake, "rank_memories")


def _check_ties_keep_store_order(function: Callable) -> None:
    """Equal scores come out in the store's order: caught here, where the sort is written,
    rather than later in retrieve, which only takes the first k of this ranking.

    Three groups of three equal scores: a random tie-break gets all three right once in
    216 runs, and the store is ranked REPEATS times, so a random order fails every time.
    """
    scenario = tie_scenario()
    same_every_time(scenario, function, "rank_memories")
    call, expected = rank_call(scenario), list(scenario.ranking)
    rows = call_learner("rank_memories", function, call, expected, scenario.build(),
                        list(scenario.query), NOW)  # fmt: skip
    got = [row.memory.id for row in rows]
    if got != expected:
        mistake = tie_mistake(got, scenario) or (
            "sort every live memory by score, highest first, ties in the store's order"
        )
        raise report(call, expected, got, mistake, "rank_memories")


def weights_scenario() -> Scenario:
    """The scenario of unequal weights: rank_memories must pass them on to the score."""
    return next(s for s in SCENARIOS if s.weights != (1.0, 1.0, 1.0))


def rank_call(scenario: Scenario) -> str:
    """The rank_memories call that ranks `scenario`'s store, as a learner would type it."""
    extra = "" if scenario.weights == (1.0, 1.0, 1.0) else f", weights={scenario.weights}"
    extra += "" if scenario.decay_rate == 0.995 else f", decay_rate={scenario.decay_rate}"
    return f"rank_memories(store, {list(scenario.query)}, now{extra})   # {scenario.title}"


def tie_scenario() -> Scenario:
    """The scenario of equal scores: rank_memories must keep them in the store's order."""
    return next(s for s in SCENARIOS if s.rows is TIES)
