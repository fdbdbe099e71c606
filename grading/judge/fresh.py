"""Fresh inputs for every graded cell: drawn per grading, judged by the reference.

The student edition ships its public checks with their inputs and answers, so a table of
those answers would pass them without computing anything. The grader keeps each public
case's shape (the same function and kind of input: an hour ago, a future access, a zero
vector, unequal weights, a superseded memory, a tie) and draws new numbers for it, from a
secret drawn for this grading alone (os.urandom: the sandbox never sees it, and two
gradings of one submission get different inputs), then computes the expected value here,
in the trusted parent,
with the instructor's reference solution. A draw must keep the cell's power: every known
mistake the notebook's own cases catch must still be caught, or it is drawn again.
Hidden cells are drawn the same way from the instructor's cases: whatever a learner's
code carries out of a sandbox (a side channel: the page cache, timing) is an input of a
grading that is over, and says nothing of the next one or a classmate's.

Stores (Milestones 4 and 5) keep their scores: vectors are turned by a random rotation
(cosines unchanged) and rounded to 4 decimals, memories renamed and shuffled. The
expected ranking is the reference's on the new store; what each named mistake returns
there comes from `mistaken`, a ranker with that mistake switched on. A draw with two
different scores closer than 1e-4 is refused, so float32 and float64 rank alike.

    rng = seeded("ana", [scoring_bytes, retriever_bytes])   # a fresh secret each call
    cells = fresh_cells(CELLS, rng)      # hidden cells too: their inputs never show

Deliberately left out: keeping the secret (a grading needs it only while it draws).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import os
import random
import sys
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from grading.layout import ASSIGNMENT, ROOT

if str(ROOT / "code") not in sys.path:
    sys.path.insert(0, str(ROOT / "code"))  # the instructor's solution; never a submission's
import retriever as reference_retriever
import scoring as reference
from base.defaults import DECAY_RATE, HALF_LIVES
from grading.judge.verdict import CELLS, MISTAKES, RANKS, Cell
from teaching.checks import core
from teaching.checks import m4_retriever as m4
from teaching.checks import m5_kinds as m5
from teaching.checks.core import HOUR, NOW, Case

DRAWS = 20  # attempts at a draw that keeps the cell's power, before keeping the notebook's
GAP = 1e-4  # the least relative gap between two different scores of a drawn store
TIE = (
    "equal scores must keep the store's order: sort with reverse=True instead of "
    "sorting ascending and reversing the list"
)
VARIANTS = {  # a scenario's named mistake -> the switch that makes `mistaken` commit it
    m4.SUPERSEDED: {"superseded": True},
    m4.CREATED_AT: {"created": True},
    "only recency counted: combine all three signals": {"signals": (0, 1, 0)},
    "only relevance counted: combine all three signals": {"signals": (1, 0, 0)},
    "the weights argument was not passed on to the scoring": {"weights": (1.0, 1.0, 1.0)},
    "the decay_rate argument was not passed on to recency": {"decay_rate": DECAY_RATE},
    TIE: {"reverse_ties": True},
    m5.ONE_RATE: {"one_rate": True},
    m5.HALF_LIVES_DROPPED: {"half_lives": dict(HALF_LIVES)},
}
NAMES = [f"{letter}{digit}" for letter in "abcdefghjkmnpqrstuvwxyz" for digit in range(1, 10)]


SECRET_BYTES = 32


def seeded(student: str, files: Iterable[bytes], secret: bytes | None = None) -> random.Random:
    """The generator of one grading's inputs: a fresh secret unless one is given (tests).

    The same secret, student and files give the same draw; no secret (grading) gives a
    new one each time, from os.urandom, held only by the trusted parent.
    """
    secret = os.urandom(SECRET_BYTES) if secret is None else secret
    digest = hashlib.sha256(secret + f"\0{ASSIGNMENT}\0{student}\0".encode())
    for data in files:
        digest.update(len(data).to_bytes(8, "big") + data)
    return random.Random(digest.digest())


def fresh_cells(cells: list[Cell], rng: random.Random) -> list[Cell]:
    """The cells with new cases, hidden ones too (each keeps its power, or its own cases)."""
    drawn = []
    for cell in cells:
        if cell.function in VALUES:
            drawn.append(dataclasses.replace(cell, cases=VALUES[cell.function](cell, rng)))
        elif cell.function in NUMBERS:
            drawn.append(dataclasses.replace(cell, cases=_numbers(cell, rng)))
        else:
            cases = [_store(cell, scenario, rng) for scenario in cell.cases]
            drawn.append(dataclasses.replace(cell, cases=cases))
    return drawn


# --- plain values (optional milestones) --------------------------------------------------
#
# Their answers are ints, None, True/False: no new number can be drawn that keeps every
# slip's answer known. So a draw changes what a lookup of the shipped inputs would need
# and keeps what the slips see. A reply is framed by neutral words (no digit, no number
# word, no scale) before and after, kept only when the reference reads the same rating
# from it; a memory is moved in time (created_at, last_accessed and now by one random
# offset, of up to ten years: every age and gap, hence every rule, unchanged) and gets a
# new id, text and embedding. Each case keeps its slips: the cell keeps its power.

PREFIXES = ("", "Rating: ", "My rating: ", "I'd rate it ", "Answer: ", "Poignancy: ",
            "I would say ", "Score: ")  # fmt: skip
SUFFIXES = ("", ".", "!", " (poignancy)", " overall", " I think", ", roughly")


def _replies(cell: Cell, rng: random.Random) -> list[Case]:
    from practice import importance_parsing as reference_parsing

    cases = []
    for case in cell.cases:
        (reply,) = case.args
        framed = f"{rng.choice(PREFIXES)}{reply}{rng.choice(SUFFIXES)}"
        same = reference_parsing.parse_importance(framed) == case.expected
        if same and type(reference_parsing.parse_importance(framed)) is type(case.expected):
            cases.append(dataclasses.replace(case, args=(framed,), call=""))
        else:
            cases.append(case)  # this frame changes the reading: keep the notebook's reply
    return cases


def _memories(cell: Cell, rng: random.Random) -> list[Case]:
    from memory_store import Memory
    from practice import forgetting_rule as reference_rule

    cases = []
    for case in cell.cases:
        memory, now = case.args
        shift = float(rng.randint(-3650 * 86400, 3650 * 86400))  # whole seconds: exact sums
        fields = memory.to_dict()
        fields.update(
            id=rng.choice([name for name in NAMES if name != memory.superseded_by]),
            text=f"memory {rng.randrange(10**6)}",
            created_at=memory.created_at + shift,
            last_accessed=memory.last_accessed + shift,
            embedding=_vector(len(memory.embedding), rng),
        )
        moved = (Memory.from_dict(fields), now + shift)
        if reference_rule.should_forget(*moved, **case.kwargs) is case.expected:
            cases.append(dataclasses.replace(case, args=moved))
        else:  # cannot happen with whole seconds; kept as the rule's safety net
            cases.append(case)
    return cases


# reflection_groups, memory_to_record, memory_from_record: their cases are exact by
# construction (cosines of exactly 0, 1 or a tie; float32 values and times whose every digit
# is what is checked), so a draw moves only what keeps that exact: each embedding is
# padded with zeros to a new length and its coordinates permuted and their signs flipped,
# the same for every memory of a case (every dot product and length, hence every cosine,
# is the same sum of the same products); a memory's id (not reflection's: its slips are
# written as ids) and text are new, and so are the users of a record, in its refusal's
# names too. Times and ratings stay: their digits are what is checked. A drawn case is
# kept only when the reference gives the expected answer on it.


def _signed_permutation(size: int, rng: random.Random) -> Callable[[list], list[float]]:
    length = size + rng.randint(0, 3)
    places = rng.sample(range(length), size)
    signs = [rng.choice((-1.0, 1.0)) for _ in range(size)]

    def move(vector: list) -> list[float]:
        out = [0.0] * length
        for value, place, sign in zip(vector, places, signs):
            out[place] = sign * float(value) if value else 0.0  # no -0.0: it prints as such
        return out

    return move


def _groups(cell: Cell, rng: random.Random) -> list[Case]:
    from practice import reflection as reference_reflection
    from teaching.checks import m8_reflection as m8

    cases = []
    for case in cell.cases:
        (rows,) = case.args
        if not rows:
            cases.append(case)
            continue
        move = _signed_permutation(len(rows[0]["embedding"]), rng)
        moved = ([{**row, "embedding": move(row["embedding"])} for row in rows],)
        drawn = dataclasses.replace(case, args=moved)
        memories = m8.build_memories(moved[0])
        same = reference_reflection.reflection_groups(memories, **case.kwargs) == case.expected
        cases.append(drawn if same else case)
    return cases


def _renamed_fields(fields: dict, users: dict, move, rng: random.Random) -> dict:
    names = [n for n in NAMES if n != fields.get("superseded_by")]  # never its own successor
    return {
        **fields,
        "id": rng.choice(names),
        "text": f"memory {rng.randrange(10**6)} \u2014 caf\u00e9 {rng.randrange(100)}",
        "embedding": move(fields["embedding"]),
        "user_id": users.get(fields["user_id"], fields["user_id"]),
    }


def _records(cell: Cell, rng: random.Random) -> list[Case]:
    from practice import persistence as reference_persistence
    from teaching.checks import m9_persistence as m9

    cases = []
    for case in cell.cases:
        if cell.function == "memory_to_record":
            (fields,) = case.args
            move = _signed_permutation(len(fields["embedding"]), rng)
            user = f"user-{rng.randrange(10**4):04d}"
            new = _renamed_fields(fields, {fields["user_id"]: user}, move, rng)
            drawn = dataclasses.replace(case, args=(new,), expected=new)
            ok = reference_persistence.memory_to_record(m9.build_memory(new)) == new
            cases.append(drawn if ok else case)
            continue
        record, user_id = case.args
        owners = {record.get("user_id"), user_id} - {None}
        names = rng.sample(range(10**4), len(owners))  # 'user-0412': no name inside another
        users = dict(zip(sorted(owners, key=str), (f"user-{n:04d}" for n in names)))
        move = _signed_permutation(len(record.get("embedding", [0.0])), rng)
        new = {**record, **{k: v for k, v in _renamed_fields(
            {"embedding": [], "user_id": None, **record}, users, move, rng).items()
            if k in record}}  # fmt: skip
        expected = case.expected
        if "raises" in expected:
            naming = [users.get(name, name) for name in expected["naming"]]
            expected = {**expected, "naming": naming}
        else:
            expected = {**expected, **{k: new[k] for k in ("id", "text", "embedding", "user_id")}}
        drawn = dataclasses.replace(case, args=(new, users.get(user_id, user_id)),
                                    expected=expected)  # fmt: skip
        cases.append(drawn if _reference_agrees(reference_persistence, drawn) else case)
    return cases


def _reference_agrees(reference_persistence, case: Case) -> bool:
    """Whether the reference's memory_from_record gives the case's expected answer."""
    import json

    record, user_id = json.loads(json.dumps(case.args[0])), case.args[1]
    try:
        memory = reference_persistence.memory_from_record(record, user_id)
    except (ValueError, TypeError) as error:
        want = case.expected.get("raises")
        return (want in {c.__name__ for c in type(error).__mro__}
                and all(name in str(error) for name in case.expected["naming"]))  # fmt: skip
    if "raises" in case.expected:
        return False
    got = {**memory.to_dict(), "embedding": [float(x) for x in memory.embedding]}
    return all(got[k] == v for k, v in case.expected.items())


VALUES = {
    "parse_importance": _replies,
    "should_forget": _memories,
    "reflection_groups": _groups,
    "memory_to_record": _records,
    "memory_from_record": _records,
}


# --- numbers -----------------------------------------------------------------------------


def _numbers(cell: Cell, rng: random.Random) -> list[Case]:
    models = MISTAKES[cell.function].models
    caught = {label for label, model in models if _catches(model, cell.cases)}
    for _ in range(DRAWS):
        cases = []
        draw = (HIDDEN if cell.hidden else NUMBERS)[cell.function]
        for case in cell.cases:
            args, kwargs, call = draw(case, rng)
            expected = getattr(reference, cell.function)(*args, **kwargs)
            shown = float(f"{expected:.12g}")  # 1.46, not 1.4600000000000002: well within 1e-6
            cases.append(Case(tuple(args), shown, kwargs, call))
        if all(_catches(model, cases) for label, model in models if label in caught):
            return cases
    return list(cell.cases)  # no draw kept the cell's power: the notebook's own cases


def _catches(model: Callable, cases: list[Case]) -> bool:
    return any(not core._matches(model, case, case.expected) for case in cases)


def _hours(hours: float, rng: random.Random) -> float:
    """About as many hours ago (0 stays 0; a future access stays in the future)."""
    if hours == 0:
        return 0.0
    if hours < 0:
        return -round(rng.uniform(0.5, 3.0), 2)
    return round(hours * rng.uniform(0.5, 1.5), 2) or 0.01


def _ago(hours: float) -> str:
    if hours == 0:
        return "now"
    return f"now - {hours:g}*hour" if hours > 0 else f"now + {-hours:g}*hour"


def _comment(case: Case) -> str:
    return f"  # {case.call.split('#', 1)[1].strip()}" if "#" in case.call else ""


def _recency(case: Case, rng: random.Random):
    hours = _hours((case.args[0] - case.args[1]) / HOUR, rng)
    kwargs = dict(case.kwargs)
    if kwargs.get("decay_rate", 1.0) != 1.0:  # 1.0 is the shape "never fades": kept
        kwargs["decay_rate"] = rng.choice([r / 1000 for r in range(900, 1000) if r != 995])
    shown = "".join(f", {key}={value!r}" for key, value in kwargs.items())
    call = f"recency_score(now, {_ago(hours)}{shown}){_comment(case)}"
    return (NOW, NOW - hours * HOUR), kwargs, call


# The instructor's hidden ratings: a public draw never lands on one, so no public "got"
# line in the feedback equals what a hidden case of the notebook was written with.
HIDDEN_RATINGS = {
    case.args[0]
    for cell in CELLS
    if cell.hidden and cell.function == "importance_score"
    for case in cell.cases
}


def _importance(case: Case, rng: random.Random):
    rating = case.args[0]
    if rating not in (1, 10):  # the ends of the scale are kept
        choices = [
            whole + part
            for whole in range(2, 10)
            for part in ((0,) if float(rating).is_integer() else (0.25, 0.5, 0.75))
        ]
        fresh = [value for value in choices if value not in HIDDEN_RATINGS] or choices
        rating = rng.choice(fresh)
    return (rating,), {}, f"importance_score({rating!r})"


def _vector(size: int, rng: random.Random) -> list[float]:
    return [float(rng.choice((-1, 1)) * rng.randint(1, 5)) for _ in range(size)]


def _relevance(case: Case, rng: random.Random):
    query, memory = case.args
    size, expected = len(query), case.expected
    scale = float(rng.choice((0.5, 2.0, 3.0)))
    if not any(query):  # a zero vector
        query, memory = [0.0] * size, _vector(size, rng)
    elif "rounding" in case.call:  # the same direction, where an unclamped cosine passes 1.0
        query, memory = _past_one(size, rng)
    elif expected in (1.0, -1.0):  # the same direction, or the opposite
        query = _vector(size, rng)
        memory = [expected * scale * v for v in query]
    elif expected == 0.0 and size == 2:  # orthogonal, exactly, in float32 too
        query = _vector(2, rng)
        memory = [-query[1] * scale, query[0] * scale]
    else:
        while True:  # a plain angle, far from 0 and from ±1
            query, memory = _vector(size, rng), _vector(size, rng)
            if 0.2 <= abs(reference.relevance_score(query, memory)) <= 0.95:
                break
    shown = f"relevance_score({_list(query)}, {_list(memory)}){_comment(case)}"
    return (query, memory), {}, shown


def _past_one(size: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """Two vectors of one direction whose plain cosine rounds to a hair above 1.0."""
    while True:
        query = [rng.choice((-1, 1)) * rng.randint(1, 9) / 10 for _ in range(size)]
        scale = rng.choice((1, 2, 3))
        memory = [round(scale * v, 6) for v in query]  # as shown: -2.1, not -2.0999999999999996
        dot = sum(a * b for a, b in zip(query, memory))
        squares = sum(a * a for a in query), sum(b * b for b in memory)
        two_roots = dot / (math.sqrt(squares[0]) * math.sqrt(squares[1]))
        one_root = dot / math.sqrt(squares[0] * squares[1])
        if two_roots > 1.0 and one_root > 1.0:  # subtle: only a clamped cosine passes it
            return query, memory


def _list(vector) -> str:
    return "[" + ", ".join(f"{v:g}" for v in vector) + "]"


def _retrieval(case: Case, rng: random.Random):
    while True:
        signals = (round(rng.uniform(0.05, 0.95), 2), round(rng.uniform(0.05, 1.0), 2),
                   rng.randint(1, 10) / 10)  # fmt: skip
        if len(set(signals)) == 3:
            break
    kwargs = {k: v for k, v in case.kwargs.items() if k == "weights"}
    weights = kwargs.get("weights")
    if weights is not None and len(set(weights)) > 1:  # equal weights stay equal
        while True:
            drawn = tuple(0.0 if w == 0 else round(rng.uniform(0.1, 3.0), 2) for w in weights)
            if len({w for w in drawn if w}) == sum(1 for w in drawn if w):
                break
        kwargs["weights"] = drawn
    if case.args:
        return signals, kwargs, ""
    return (), {"rel": signals[0], "rec": signals[1], "imp": signals[2], **kwargs}, ""


def _kind_recency(case: Case, rng: random.Random):
    now, last_accessed, kind = case.args
    hours = _hours((now - last_accessed) / HOUR, rng)
    kwargs, table = {}, ""
    if "half_lives" in case.kwargs:
        drawn = {k: v if v == math.inf else round(v * rng.uniform(0.5, 1.5), 1)
                 for k, v in case.kwargs["half_lives"].items()}  # fmt: skip
        kwargs, table = {"half_lives": drawn}, f", half_lives={drawn}"
    call = f"kind_recency_score(now, {_ago(hours)}, {kind!r}{table}){_comment(case)}"
    return (NOW, NOW - hours * HOUR, kind), kwargs, call


# Hidden cases keep more of the instructor's shape: a datetime stays a datetime, a vector's
# extremes stay extreme (its coordinates are permuted, signs flipped and it is rescaled,
# which keeps the cosine's case), a rate or a weight moves only around its own value.


def _moved(value: float, rng: random.Random, digits: int = 3) -> float:
    """`value` moved by up to 30% (0 stays 0, the sign stays)."""
    return round(value * rng.uniform(0.7, 1.3), digits) if value else value


def _times(now, last_accessed, rng: random.Random):
    """(now, a last access about as many hours before it), as datetimes if they were."""
    if isinstance(now, datetime):
        hours = _hours((now - last_accessed).total_seconds() / HOUR, rng)
        return now, now - timedelta(hours=hours)
    return now, now - _hours((now - last_accessed) / HOUR, rng) * HOUR


def _hidden_recency(case: Case, rng: random.Random):
    kwargs = dict(case.kwargs)
    rate = kwargs.get("decay_rate")
    if rate is not None and rate != 1.0:
        kwargs["decay_rate"] = round(min(0.9999, rate ** rng.uniform(0.8, 1.25)), 6)
    return _times(*case.args[:2], rng), kwargs, ""


def _hidden_importance(case: Case, rng: random.Random):
    return _importance(case, rng)[0], {}, ""


def _hidden_relevance(case: Case, rng: random.Random):
    query, memory = (list(v) for v in case.args)
    order = rng.sample(range(len(query)), len(query)) if len(query) == len(memory) else None
    signs = [rng.choice((-1.0, 1.0)) for _ in query]
    if order is not None:
        query = [signs[i] * query[j] for i, j in enumerate(order)]
        memory = [signs[i] * memory[j] for i, j in enumerate(order)]
    scale = 2.0 ** rng.randint(-2, 2), 2.0 ** rng.randint(-2, 2)  # exact in binary
    return ([v * scale[0] for v in query], [v * scale[1] for v in memory]), {}, ""


def _hidden_retrieval(case: Case, rng: random.Random):
    signals = [_moved(v, rng) for v in case.args]
    kwargs = dict(case.kwargs)
    weights = kwargs.get("weights")
    if weights is not None and len(set(weights)) > 1:  # equal weights stay equal
        kwargs["weights"] = tuple(_moved(w, rng, 2) for w in weights)
    return tuple(signals), kwargs, ""


def _hidden_kind_recency(case: Case, rng: random.Random):
    now, last_accessed, kind = case.args
    kwargs = {}
    if "half_lives" in case.kwargs:
        kwargs["half_lives"] = {k: v if v == math.inf else _moved(v, rng, 1)
                                for k, v in case.kwargs["half_lives"].items()}  # fmt: skip
    return (*_times(now, last_accessed, rng), kind), kwargs, ""


HIDDEN = {
    "recency_score": _hidden_recency,
    "importance_score": _hidden_importance,
    "relevance_score": _hidden_relevance,
    "retrieval_score": _hidden_retrieval,
    "kind_recency_score": _hidden_kind_recency,
}

NUMBERS = {
    "recency_score": _recency,
    "importance_score": _importance,
    "relevance_score": _relevance,
    "retrieval_score": _retrieval,
    "kind_recency_score": _kind_recency,
}


# --- stores ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Drawn(m4.Scenario):
    """A drawn store of Milestone 4, with its top row's signals by the reference."""

    signals: tuple[float, ...] = ()


def mistaken(scenario, **switch) -> list[tuple[float, str]]:
    """(score, id) of every memory ranked as a retriever with one mistake would rank them."""
    store = scenario.build()
    query = store.check_query(list(scenario.query))  # float32, as the retriever sees it
    kinds = isinstance(scenario, m5.KindScenario)
    weights = switch.get("weights", scenario.weights)
    mask = switch.get("signals", (1, 1, 1))
    rows = []
    for memory in store:
        if memory.superseded_by is not None and not switch.get("superseded"):
            continue
        when = memory.created_at if switch.get("created") else memory.last_accessed
        if kinds and not switch.get("one_rate"):
            table = switch.get("half_lives", scenario.half_lives)
            rec = reference.kind_recency_score(NOW, when, memory.kind, table)
        else:
            rate = switch.get("decay_rate", getattr(scenario, "decay_rate", DECAY_RATE))
            rec = reference.recency_score(NOW, when, rate)
        rel = reference.relevance_score(query, memory.embedding)
        imp = reference.importance_score(memory.importance)
        score = reference.retrieval_score(rel * mask[0], rec * mask[1], imp * mask[2], weights)
        rows.append((score, memory.id))
    if switch.get("reverse_ties"):
        return sorted(rows, key=lambda row: row[0])[::-1]
    return sorted(rows, key=lambda row: row[0], reverse=True)


def _store(cell: Cell, scenario, rng: random.Random):
    full = cell.function == RANKS  # rank_memories: the whole ranking is the answer
    for _ in range(DRAWS):
        drawn = _redraw(scenario, rng) if scenario.rows else scenario
        judged = _judge(drawn, full)
        if judged is not None:
            return judged
    return _judge(scenario, full) or scenario


def _redraw(scenario, rng: random.Random):
    """The same store, turned, rounded, renamed and shuffled."""
    kinds = isinstance(scenario, m5.KindScenario)
    turn = _rotation(len(scenario.query), rng)
    names = dict(zip((row[0] for row in scenario.rows), rng.sample(NAMES, len(scenario.rows))))
    rows = []
    for row in scenario.rows:
        at = 2 if kinds else 1  # where the embedding sits in the row
        by = row[-1] and names[row[-1]]
        rows.append((names[row[0]], *row[1:at], turn(row[at]), *row[at + 1 : -1], by))
    replaced = [row for row in rows if row[-1]]  # in the order the store supersedes them
    rng.shuffle(rows)
    slots = [i for i, row in enumerate(rows) if row[-1]]
    for i, row in zip(slots, replaced):  # subtle: a chain a -> b -> c is applied in order
        rows[i] = row
    return dataclasses.replace(scenario, rows=tuple(rows), query=turn(scenario.query))


def _rotation(size: int, rng: random.Random) -> Callable:
    """A random rotation of `size`-dimensional vectors, then rounding to 4 decimals."""
    matrix = [[float(i == j) for j in range(size)] for i in range(size)]
    for _ in range(3 * size):  # a product of random plane rotations
        i, j = rng.sample(range(size), 2) if size > 1 else (0, 0)
        angle = rng.uniform(0, 2 * math.pi)
        c, s = math.cos(angle), math.sin(angle)
        for row in matrix:
            row[i], row[j] = c * row[i] - s * row[j], s * row[i] + c * row[j]
    return lambda v: tuple(round(sum(m * x for m, x in zip(row, v)), 4) for row in matrix)


def _judge(scenario, full: bool):
    """The scenario with its expected ranking and mistakes, or None if it lost its power."""
    right = mistaken(scenario)
    ranking = tuple(i for _, i in right)
    if list(ranking) != _reference_ranking(scenario):
        raise AssertionError(f"mistaken() disagrees with the reference on {scenario.title!r}")
    for (a, _), (b, _) in itertools.pairwise(right):
        if a != b and a - b < GAP * max(1.0, abs(a)):
            return None  # two scores so close that rounding could order them either way
    k = len(ranking) if full else scenario.k
    mistakes = {}
    for label in scenario.mistakes:
        ids = tuple(i for _, i in mistaken(scenario, **VARIANTS[label]))[:k]
        if list(ids) == list(ranking[:k]):
            return None  # this mistake would pass on this store
        mistakes[label] = ids
    drawn = dataclasses.replace(scenario, ranking=ranking, mistakes=mistakes)
    if isinstance(scenario, m5.KindScenario):
        return drawn
    top = reference_retriever.rank_memories(scenario.build(), list(scenario.query), NOW,
                                            scenario.weights, scenario.decay_rate)  # fmt: skip
    signals = (top[0].relevance, top[0].recency, top[0].importance, top[0].score) if top else ()
    fields = {f.name: getattr(drawn, f.name) for f in dataclasses.fields(m4.Scenario)}
    return Drawn(**{**fields, "k": k if full else scenario.k}, signals=signals)


def _reference_ranking(scenario) -> list[str]:
    store, query = scenario.build(), list(scenario.query)
    if isinstance(scenario, m5.KindScenario):
        k = max(1, len(scenario.rows))
        result = reference_retriever.retrieve_by_kind(store, query, NOW, k, scenario.weights,
                                                      scenario.half_lives)  # fmt: skip
        return [memory.id for memory in result]
    rows = reference_retriever.rank_memories(store, query, NOW, scenario.weights,
                                             scenario.decay_rate)  # fmt: skip
    return [row.memory.id for row in rows]
