"""Milestone 5: the checks of kind_recency_score and retrieve_by_kind, and kind labels.

kind_recency = 0.5 ** (hours since last access / half_lives[kind]). The cases hold one and
two half-lives of an episode (0.5, 0.25), facts and skills that never fade (math.inf: 1.0),
other tables of half-lives and a last access in the future. The mistakes model the usual
slips: a half-life used as if it were a decay rate, an e-folding time instead of a
half-life, a straight line instead of halving, episodes that never fade, the kind ignored
(one half-life for everything), seconds, minutes or days instead of hours, the table
argument ignored. The retriever's scenarios are small stores with kinds, the answers written out
as ids, and what each mistake (one decay rate for all, half-lives not passed on,
recency from created_at, a superseded skill, the refresh forgotten) would return.

Also here: the labelling exercise of notebook 07a (is a memory an event, a fact or a
skill?), whose check explains each wrong label.

Deliberately left out: the reference solution; only answers and mistakes are written down.

    >>> check_kind_recency_score()   # prints "kind_recency_score: 10 checks passed"
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from base.defaults import HALF_LIVES
from memory_store import Memory, MemoryStore
from teaching.checks.core import (
    HOUR,
    NOW,
    Case,
    CheckFailed,
    Mistakes,
    call_learner,
    check_cases,
    learner_function,
    passed,
    report,
)
from teaching.checks.m4_retriever import (
    CREATED_AT,
    SUPERSEDED,
    created_mistake,
    describe,
    order_mistake,
    same_every_time,
    shape_mistake,
    touch_mistake,
)

INF = math.inf
DAY = 24.0  # hours
FAST = {"episodic": 24.0, "semantic": 240.0, "procedural": INF}  # hours per kind
STALE_SKILLS = {"episodic": 24.0, "semantic": INF, "procedural": 6.0}

HALF_LIFE_AS_RATE = (
    "a half-life is not a decay rate: raising the half-life to the hours grows without "
    "bound; recency halves once per half-life (hours / half_life half-lives have passed)"
)
EPISODES_NEVER_FADE = (
    "episodic memories never faded: events are the kind that fades; facts and skills "
    "are the ones with an infinite half-life (read half_lives[kind])"
)
KIND_IGNORED = (
    "the kind was ignored: one half-life (the episodic one) was used for every memory; "
    "use half_lives[kind], so facts and skills keep their own"
)
NOTHING_FADES = (
    "nothing faded: every kind kept recency 1.0; an episode halves every "
    "half_lives['episodic'] hours"
)


def _hours(now, last_accessed) -> float:
    return max(0.0, now - last_accessed) / HOUR


def _model(rule: Callable) -> Callable:
    """A mistake as a function of (hours since last access, kind, half-life table)."""

    def wrong(now, last_accessed, kind, half_lives=HALF_LIVES):
        return rule(_hours(now, last_accessed), kind, half_lives, now - last_accessed)

    return wrong


def _halving(hours, half_life) -> float:
    return 0.5 ** (hours / half_life)


def _episodes_forever(kind: str, table) -> float:
    return INF if kind == "episodic" else table[kind]


MISTAKES = Mistakes(
    models=[
        (HALF_LIFE_AS_RATE, _model(lambda h, kind, table, s: table[kind] ** h)),
        (
            "the half-life was inverted into a share kept per hour (1 / half_life per hour); "
            "recency halves once per half-life, whatever the half-life",
            _model(lambda h, kind, table, s: (1 / table[kind]) ** h),
        ),
        (
            EPISODES_NEVER_FADE,
            _model(
                lambda h, kind, table, s: _halving(h, INF if kind == "episodic" else table[kind])
            ),
        ),
        (KIND_IGNORED, _model(lambda h, kind, table, s: _halving(h, table["episodic"]))),
        (NOTHING_FADES, _model(lambda h, kind, table, s: 1.0)),
        (
            "this is recency_score (0.995 per hour, whatever the kind); recency here halves "
            "once per half-life of the memory's kind",
            _model(lambda h, kind, table, s: 0.995 ** max(0.0, h)),
        ),
        (
            "the gap was used in seconds; divide by 3600: half-lives are in hours",
            _model(lambda h, kind, table, s: _halving(max(0.0, s), table[kind])),
        ),
        (
            "recency fell to 1/e (about 0.37) after one half-life, not to one half: that is an "
            "e-folding time; after one half-life recency is exactly 0.5, after two 0.25",
            _model(lambda h, kind, table, s: math.exp(-h / table[kind])),
        ),
        (
            "the gap was used in minutes; divide the seconds by 3600: half-lives are in hours",
            _model(lambda h, kind, table, s: _halving(max(0.0, s) / 60, table[kind])),
        ),
        (
            "recency fell by the same amount every hour (a straight line down to 0 after two "
            "half-lives); it should halve once per half-life, then halve again",
            _model(lambda h, kind, table, s: max(0.0, 1 - h / (2 * table[kind]))),
        ),
        (
            "the gap was converted to days; half-lives are in hours (divide by 3600)",
            _model(lambda h, kind, table, s: _halving(h / DAY, table[kind])),
        ),
        (
            "hours and half-life were swapped: count how many half-lives fit in the hours, "
            "not how many times the hours fit in a half-life",
            _model(lambda h, kind, table, s: 0.5 ** (table[kind] / h)),
        ),
        (
            "this is the part forgotten, 1 - recency; return the part kept",
            _model(lambda h, kind, table, s: 1 - _halving(h, table[kind])),
        ),
        (
            "the half_lives argument was ignored (the default table was used)",
            _model(lambda h, kind, table, s: _halving(h, HALF_LIVES[kind])),
        ),
        (
            "a last access in the future must count as 0 hours (clamp the hours at 0)",
            _model(lambda h, kind, table, s: _halving(s / HOUR, table[kind])),
        ),
    ],
    limits=(0.0, 1.0, "recency above 1: a half-life is not a decay rate, and hours are never < 0"),
    crashes={
        "OverflowError": "the number overflowed: " + HALF_LIFE_AS_RATE,
        "ZeroDivisionError": "a division by zero: the hours since the last access can be 0 "
        "(just recalled); divide the hours by the half-life, not the half-life by the hours",
    },
)


def _case(hours_ago: float, kind: str, expected: float, half_lives=None, call: str = "") -> Case:
    kwargs = {} if half_lives is None else {"half_lives": dict(half_lives)}
    table = "" if half_lives is None else ", half_lives"
    shown = call or f"kind_recency_score(now, now - {hours_ago:g}*hour, {kind!r}{table})"
    return Case((NOW, NOW - hours_ago * HOUR, kind), expected, kwargs, shown)


CASES = [
    _case(0, "episodic", 1.0, call="kind_recency_score(now, now, 'episodic')  # just accessed"),
    _case(45 * DAY, "episodic", 0.5, call="kind_recency_score(now, now - 45 days, 'episodic')"),
    _case(90 * DAY, "episodic", 0.25, call="kind_recency_score(now, now - 90 days, 'episodic')"),
    _case(90 * DAY, "semantic", 1.0, call="kind_recency_score(now, now - 90 days, 'semantic')"),
    _case(
        400 * DAY, "procedural", 1.0, call="kind_recency_score(now, now - 400 days, 'procedural')"
    ),
    _case(24, "episodic", 0.5, FAST, "kind_recency_score(now, now - 24*hour, 'episodic', FAST)"),
    _case(
        24,
        "semantic",
        0.9330329915,
        FAST,
        "kind_recency_score(now, now - 24*hour, 'semantic', FAST)",
    ),
    _case(
        12,
        "procedural",
        0.25,
        STALE_SKILLS,
        "kind_recency_score(now, now - 12*hour, 'procedural', STALE_SKILLS)",
    ),
    _case(
        30 / 60,
        "episodic",
        0.9996791500,
        call="kind_recency_score(now, now - 30 minutes, 'episodic')",
    ),
    _case(
        -1, "episodic", 1.0, call="kind_recency_score(now, now + hour, 'episodic')  # clock skew"
    ),
]


def check_kind_recency_score(function: Callable | None = None) -> None:
    """Milestone 5: episodes halve per half-life, facts and skills never fade, other tables."""
    print(
        "tables used: FAST = {'episodic': 24, 'semantic': 240, 'procedural': inf}, "
        "STALE_SKILLS = {'episodic': 24, 'semantic': inf, 'procedural': 6} (hours)"
    )
    passed("kind_recency_score", check_cases("kind_recency_score", CASES, function, MISTAKES))


# --- the retriever -----------------------------------------------------------------------

# id, kind, embedding, hours since created, hours since last access, importance, superseded_by
KindRow = tuple[str, str, tuple[float, ...], float, float, float, str | None]

STREAM = (
    ("f1", "semantic", (1.0, 0.0), 2880, 2880, 7, None),  # a 120-day-old preference, on topic
    ("e1", "episodic", (0.8, 0.6), 3, 3, 4, None),  # a related episode, 3 hours old
    ("e2", "episodic", (1.0, 0.0), 2160, 1, 5, None),  # an old incident, recalled an hour ago
    ("e4", "episodic", (0.9, 0.44), 4320, 4320, 6, None),  # 180 days, never recalled: faded
    ("p1", "procedural", (0.6, 0.8), 9000, 48, 6, None),  # today's practice
    ("p0", "procedural", (0.9, 0.1), 9000, 9000, 9, "p1"),  # the practice p1 replaced
    ("e3", "episodic", (0.0, 1.0), 1, 0, 8, None),  # off topic, fresh and important
)
TIED = (  # a fact and a skill that both never fade: equal scores, store order decides
    ("t1", "semantic", (1.0, 0.0), 500, 500, 5, None),
    ("t2", "procedural", (1.0, 0.0), 900, 900, 5, None),
    ("t3", "episodic", (1.0, 0.0), 5, 5, 5, None),
)

ONE_RATE = (
    "the kind was ignored: recency_score with one decay rate was used; use "
    "kind_recency_score(now, memory.last_accessed, memory.kind, half_lives)"
)
HALF_LIVES_DROPPED = "the half_lives argument was not passed on to kind_recency_score"


@dataclass(frozen=True)
class KindScenario:
    """A store with kinds, a query, and the ids retrieve_by_kind must return (best first)."""

    title: str
    rows: tuple[KindRow, ...]
    query: tuple[float, ...]
    k: int
    ranking: tuple[str, ...]  # every live memory, best first
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    half_lives: dict = field(default_factory=lambda: dict(HALF_LIVES))
    mistakes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def expected(self) -> list[str]:
        return list(self.ranking[: self.k])

    def memories(self) -> list[dict]:
        """The store's memories as plain values (what the grader's worker builds from)."""
        return [
            {"id": i, "kind": kind, "embedding": list(vector), "created_at": NOW - created * HOUR,
             "last_accessed": NOW - accessed * HOUR, "importance": importance}
            for i, kind, vector, created, accessed, importance, _ in self.rows
        ]  # fmt: skip

    def superseded(self) -> list[list[str]]:
        return [[i, by] for i, *_, by in self.rows if by]

    def tie_key(self, row: KindRow) -> tuple:
        """What decides a memory's score: two rows with the same key score the same
        (a kind that never fades has recency 1.0, however long ago its last access)."""
        _, kind, vector, _, accessed, importance, _ = row
        half_life = self.half_lives[kind]
        return vector, importance, "never" if half_life == INF else (half_life, accessed)

    def build(self) -> MemoryStore:
        store = MemoryStore()
        for row in self.memories():
            store.add(Memory(row.pop("id"), f"memory of kind {row['kind']}", **row))
        for old, new in self.superseded():
            store.supersede(old, new)
        return store

    def call(self) -> str:
        table = "" if self.half_lives == dict(HALF_LIVES) else f", half_lives={self.half_lives}"
        return (
            f"retrieve_by_kind(store, {list(self.query)}, now, k={self.k}, "
            f"weights={self.weights}{table})   # {self.title}"
        )


KIND_SCENARIOS = [
    KindScenario(
        "a standing fact outlasts the episodes",
        STREAM,
        (1.0, 0.0),
        3,
        ("f1", "e2", "p1", "e1", "e3", "e4"),
        mistakes={
            ONE_RATE: ("e2", "e1", "p1"),
            CREATED_AT: ("f1", "p1", "e1"),
            SUPERSEDED: ("p0", "f1", "e2"),
        },
    ),
    KindScenario(
        "fast half-lives: episodes 1 day, facts 10 days, skills never",
        STREAM,
        (1.0, 0.0),
        3,
        ("e2", "p1", "e1", "e3", "f1", "e4"),
        half_lives=FAST,
        mistakes={
            HALF_LIVES_DROPPED: ("f1", "e2", "p1"),
            ONE_RATE: ("e2", "e1", "p1"),
            CREATED_AT: ("p1", "e1", "e3"),
            SUPERSEDED: ("p0", "e2", "p1"),
        },
    ),
    KindScenario(
        "the retrieval-augmented-memory weights 0.55 / 0.25 / 0.20",
        STREAM,
        (1.0, 0.0),
        4,
        ("f1", "e2", "e1", "p1", "e4", "e3"),
        weights=(0.55, 0.25, 0.2),
        mistakes={
            "the weights argument was not passed on to the scoring": ("f1", "e2", "p1", "e1")
        },
    ),
    KindScenario(
        "a fact and a skill tie",
        TIED,
        (1.0, 0.0),
        2,
        ("t1", "t2", "t3"),
        mistakes={
            "equal scores must keep the store's order: sort with reverse=True instead of "
            "sorting ascending and reversing the list": ("t2", "t1"),
            ONE_RATE: ("t3", "t1"),
        },
    ),
    KindScenario(
        "k larger than the store", STREAM, (1.0, 0.0), 10, ("f1", "e2", "p1", "e1", "e3", "e4")
    ),
    KindScenario("an empty store", (), (1.0, 0.0), 3, ()),
]


def run_kind_scenario(scenario: KindScenario, function: Callable | None = None) -> None:
    """Run retrieve_by_kind on one store; raise CheckFailed naming the likely mistake."""
    name = "retrieve_by_kind"
    function = function or learner_function(name)
    store = scenario.build()
    before = {m.id: m.last_accessed for m in store}
    created = {m.id: m.created_at for m in store}
    call = scenario.call()
    result = call_learner(
        name,
        function,
        call,
        scenario.expected,
        store,
        list(scenario.query),
        NOW,
        k=scenario.k,
        weights=scenario.weights,
        half_lives=dict(scenario.half_lives),
    )
    mistake = shape_mistake(result, store)
    if mistake:
        mistake = mistake.replace("retrieve returned", f"{name} returned")
        raise report(call, scenario.expected, describe(result), mistake, name)
    got = [m.id for m in result]
    if got != scenario.expected:
        raise report(call, scenario.expected, got, order_mistake(got, scenario), name)
    mistake = touch_mistake(store, before, set(got))
    if mistake:
        touched = {m.id: "now" if m.last_accessed == NOW else "unchanged" for m in store}
        expected = {i: "now" if i in got else "unchanged" for i in before}
        raise report(call + "\n  last_accessed after the call", expected, touched, mistake, name)
    created_mistake(store, created, call, name)


def check_retrieve_by_kind(function: Callable | None = None) -> None:
    """Milestone 5: facts outlast episodes, other half-lives and weights, ties, k, refreshing."""
    function = function or learner_function("retrieve_by_kind")
    for scenario in KIND_SCENARIOS:
        if scenario.rows is TIED:
            same_every_time(scenario, function, "retrieve_by_kind")
        run_kind_scenario(scenario, function)
    passed("retrieve_by_kind", len(KIND_SCENARIOS))


# --- labelling memories by kind (notebook 07a) ------------------------------------------

WHY = {
    "episodic": "it records something that happened, at a time (an event: it fades)",
    "semantic": "it states something believed true now (a fact: replaced, not faded)",
    "procedural": "it says how to do something (a skill or practice: replaced when it changes)",
}
TO_LABEL = (  # id, memory, its kind
    ("k1", "On 12 March we debugged a connection-pool leak together", "episodic"),
    ("k2", "Deploys on Fridays are forbidden", "semantic"),
    ("k3", "To release, tag the commit, then run the publish workflow", "procedural"),
    ("k4", "The user is allergic to shellfish", "semantic"),
    ("k5", "Yesterday the user asked for a shorter summary of the report", "episodic"),
    ("k6", "Always run the formatter before committing", "procedural"),
    ("k7", "The team's default API provider is Groq", "semantic"),
    ("k8", "Last Tuesday's deploy failed because of a missing migration", "episodic"),
)


LABELS = "07a.labels"  # the labels' key on the hint ladder
SORTING_TEST = (
    "the test: did it happen at a time (episodic), is it true until replaced (semantic), or "
    "does it say how to do something (procedural)?"
)


def _labels_off(labels: dict, wrong: list[str]) -> list[str]:
    """What is off, by category of the learner's own labels: never which kind is right."""
    lines = []
    for given in sorted({labels[i] for i in wrong}, key=str):
        if given not in WHY:
            ids = ", ".join(i for i in wrong if labels[i] == given)
            lines.append(f"  {given!r} ({ids}) is not a kind: use {', '.join(map(repr, WHY))}")
            continue
        called = [i for i, *_ in TO_LABEL if labels[i] == given]
        off = sum(1 for i in wrong if labels[i] == given)
        lines.append(
            f"  of the {len(called)} you called {given}, {off} {'is' if off == 1 else 'are'} not"
        )
    return lines


def check_kind_labels(labels, *, reveal: bool = False) -> None:
    """Every memory of TO_LABEL given its kind, on the hint ladder.

    A first wrong set says how many labels are off and in which of your categories; a
    second, different one names the memories that are off; only reveal=True shows each
    right kind and why.
    """
    from teaching.checks.ladder import reveal_hint, revealed, was_revealed, wrong_try

    if reveal and not isinstance(labels, dict):
        labels = {}
    if not isinstance(labels, dict):
        raise CheckFailed(
            f"labels must be a dict {{memory id: kind}}, e.g. {{'k1': 'episodic'}}; "
            f"got a {type(labels).__name__}"
        )
    missing = [i for i, *_ in TO_LABEL if i not in labels]
    if missing and not reveal:
        raise CheckFailed(f"no label yet for {', '.join(missing)}: give every memory one kind")
    wrong = [memory_id for memory_id, _, kind in TO_LABEL if labels.get(memory_id) != kind]
    if not wrong:
        said = " (as the answer said)" if was_revealed(LABELS) else ""
        print(f"kind labels: all {len(TO_LABEL)} right{said}")
        return
    if reveal:
        revealed(LABELS)
        explained = [
            f"  {memory_id} {text!r}: {kind}, {WHY[kind]}"
            + (f" (you said {labels[memory_id]!r})" if memory_id in labels else "")
            for memory_id, text, kind in TO_LABEL
            if memory_id in wrong
        ]
        raise CheckFailed("the answer, as asked:\n" + "\n".join(explained))
    rung = wrong_try(LABELS, tuple(str(labels[i]) for i, *_ in TO_LABEL))
    lines = [f"{len(wrong)} of {len(TO_LABEL)} labels are off:", *_labels_off(labels, wrong)]
    if rung >= 2:
        lines.append(f"  next step: look again at {', '.join(wrong)}; for each, ask the test")
    lines.append(f"  {SORTING_TEST}")
    lines.append(reveal_hint("check_kind_labels(labels, reveal=True)"))
    raise CheckFailed("\n".join(lines))
