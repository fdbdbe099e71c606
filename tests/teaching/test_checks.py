"""The checks that teach: they pass the reference and name each common mistake.

Each wrong implementation below is a mistake a learner makes; its check must fail
with a message that shows expected and got and names that mistake.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from base.defaults import HALF_LIVES
from retriever import rank_memories, retrieve, retrieve_by_kind
from scoring import importance_score, recency_score, relevance_score, retrieval_score
from teaching import checks
from teaching.checks import (
    CheckFailed,
    NotImplementedYet,
    ladder,
    m1_recency,
    m2_importance_relevance,
    m3_retrieval_score,
    m4_retriever,
)


def test_the_reference_solution_passes_every_check(capsys):
    checks.check_recency_score()
    checks.check_importance_score()
    checks.check_relevance_score()
    checks.check_retrieval_score()
    checks.check_rank_memories()
    checks.check_retrieve()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "recency_score: 7 checks passed",
        "importance_score: 4 checks passed",
        "relevance_score: 8 checks passed",
        "retrieval_score: 7 checks passed",
        "rank_memories: 6 checks passed",
        "retrieve: 7 checks passed",
    ]


@pytest.mark.parametrize(
    ("cases", "name", "function"),
    [
        (m1_recency.CASES, "recency_score", recency_score),
        (m2_importance_relevance.IMPORTANCE_CASES, "importance_score", importance_score),
        (m2_importance_relevance.RELEVANCE_CASES, "relevance_score", relevance_score),
        (m3_retrieval_score.CASES, "retrieval_score", retrieval_score),
    ],
)
def test_every_written_out_answer_is_what_the_reference_computes(cases, name, function):
    for case in cases:
        assert function(*case.args, **case.kwargs) == pytest.approx(case.expected, abs=1e-9)


def test_every_scenario_answer_is_what_the_reference_retriever_returns():
    for scenario in m4_retriever.SCENARIOS:
        store = scenario.build()
        rows = rank_memories(
            store, scenario.query, checks.NOW, scenario.weights, scenario.decay_rate
        )
        assert tuple(row.memory.id for row in rows) == scenario.ranking, scenario.title


def _stub(*args, **kwargs):
    raise NotImplementedError()


@pytest.mark.parametrize(
    ("check", "where"),
    [
        (checks.check_recency_score, "code/scoring.py, Milestone 1 (01_recency.ipynb)"),
        (checks.check_relevance_score, "code/scoring.py, Milestone 2"),
        (checks.check_retrieval_score, "code/scoring.py, Milestone 3"),
        (checks.check_retrieve, "code/retriever.py, Milestone 4"),
        (checks.check_rank_memories, "code/retriever.py, Milestone 4"),
    ],
)
def test_a_stub_is_reported_as_not_implemented_with_its_file_and_milestone(check, where):
    with pytest.raises(NotImplementedYet, match="not implemented yet") as failure:
        check(_stub)
    assert where in str(failure.value)


HOUR = 3600.0

WRONG_RECENCY = [
    ("seconds", lambda now, last, decay_rate=0.995: decay_rate ** (now - last)),
    ("days", lambda now, last, decay_rate=0.995: decay_rate ** ((now - last) / 86400)),
    ("multiplied", lambda now, last, decay_rate=0.995: decay_rate * (now - last) / HOUR),
    ("part forgotten", lambda now, last, decay_rate=0.995: 1 - decay_rate ** ((now - last) / HOUR)),
    ("LangChain", lambda now, last, decay_rate=0.995: (1 - decay_rate) ** ((now - last) / HOUR)),
    ("ignored", lambda now, last, decay_rate=0.995: 0.995 ** ((now - last) / HOUR)),
    (
        "future must count as 0",
        lambda now, last, decay_rate=0.995: decay_rate ** ((now - last) / HOUR),
    ),
    ("returned None", lambda now, last, decay_rate=0.995: None),
    ("division by zero", lambda now, last, decay_rate=0.995: 1 / 0),
]
WRONG_IMPORTANCE = [
    ("returned as is", lambda importance: importance),
    ("floor division", lambda importance: importance // 10),
    ("divided by 100", lambda importance: importance / 100),
    ("min-max", lambda importance: (importance - 1) / 9),
    ("cut to a whole number", lambda importance: int(importance) / 10),
]


def _dot(q, m):
    return sum(a * b for a, b in zip(q, m))


def _norm(v):
    return math.sqrt(_dot(v, v))


WRONG_RELEVANCE = [
    ("bare dot product", _dot),
    ("query's length only", lambda q, m: _dot(q, m) / _norm(q)),
    ("cosine distance", lambda q, m: 1 - _dot(q, m) / (_norm(q) * _norm(m))),
    ("Euclidean", lambda q, m: math.dist(q, m)),
    ("absolute value", lambda q, m: abs(_dot(q, m) / (_norm(q) * _norm(m)))),
    (
        "zero length",  # NaN on the zero vector
        lambda q, m: _dot(q, m) / (_norm(q) * _norm(m)) if _norm(q) else float("nan"),
    ),
    ("division by zero", lambda q, m: _dot(q, m) / (_norm(q) * _norm(m))),
    ("a list", lambda q, m: [_dot(q, m)]),
    ("clamp the result", lambda q, m: _dot(q, m) / (_norm(q) * _norm(m)) if _norm(q) else 0.0),
]


def _weighted(order, divide_by=1.0):
    """A weighted sum pairing weight i with signal order[i] (a wrong order is a mistake)."""
    return lambda rel, rec, imp, weights=(1, 1, 1): (
        sum(weights[i] * s for i, s in zip(order, (rel, rec, imp))) / divide_by
    )


WRONG_RETRIEVAL_SCORE = [
    ("recency and importance weights are swapped", _weighted((0, 2, 1))),
    ("relevance and recency weights are swapped", _weighted((1, 0, 2))),
    ("weights rotated", _weighted((1, 2, 0))),
    ("weights were ignored", lambda rel, rec, imp, weights=(1, 1, 1): rel + rec + imp),
    ("a mean", _weighted((0, 1, 2), divide_by=3)),
    ("multiplied together", lambda rel, rec, imp, weights=(1, 1, 1): rel * rec * imp),
]


@pytest.mark.parametrize(
    ("check", "mistake", "wrong"),
    [(checks.check_recency_score, m, f) for m, f in WRONG_RECENCY]
    + [(checks.check_importance_score, m, f) for m, f in WRONG_IMPORTANCE]
    + [(checks.check_relevance_score, m, f) for m, f in WRONG_RELEVANCE]
    + [(checks.check_retrieval_score, m, f) for m, f in WRONG_RETRIEVAL_SCORE],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_wrong_scoring_function_fails_naming_its_mistake(check, mistake, wrong):
    with pytest.raises(CheckFailed) as failure:
        check(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert mistake in message, message


def _ranked(store, q, now, weights, decay_rate):
    return rank_memories(store, q, now, weights=weights, decay_rate=decay_rate)


def _retrieve_variant(
    select=lambda rows, k: rows[:k],
    touch="returned",
    returns="memory",
    skip_superseded=True,
    clock=None,
):
    """A retrieve with one deliberate mistake, built on the reference ranking."""

    def wrong(store, q, now, k=3, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        rows = _ranked(store, q, now, weights, decay_rate)
        if not skip_superseded:
            superseded = [m for m in store if m.superseded_by is not None]
            for memory in superseded:
                memory.superseded_by = None
            rows = _ranked(store, q, now, weights, decay_rate)
        top = select(rows, k)
        chosen = {"returned": top, "all": rows, "none": []}[touch]
        for row in chosen:
            row.memory.last_accessed = clock if clock is not None else now
        pick = {
            "memory": lambda row: row.memory,
            "row": lambda row: row,
            "id": lambda row: row.memory.id,
            "score": lambda row: row.score,
        }[returns]
        return [pick(row) for row in top]

    return wrong


def _created_at_retrieve(store, q, now, k=3, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    saved = {m.id: m.last_accessed for m in store}
    for m in store:
        m.last_accessed = m.created_at
    rows = _ranked(store, q, now, weights, decay_rate)[:k]
    for m in store:
        m.last_accessed = saved[m.id]
    for row in rows:
        row.memory.last_accessed = now
    return [row.memory for row in rows]


WRONG_RETRIEVE = [
    ("worst first", _retrieve_variant(select=lambda rows, k: rows[::-1][:k])),
    ("one result too many", _retrieve_variant(select=lambda rows, k: rows[: k + 1])),
    ("one result too few", _retrieve_variant(select=lambda rows, k: rows[: k - 1])),
    ("ranking rows were returned", _retrieve_variant(returns="row")),
    ("ids were returned", _retrieve_variant(returns="id")),
    ("scores were returned", _retrieve_variant(returns="score")),
    ("not refreshed", _retrieve_variant(touch="none")),
    ("every memory was refreshed", _retrieve_variant(touch="all")),
    ("not to `now`", _retrieve_variant(clock=123.0)),
    ("superseded memory was returned", _retrieve_variant(skip_superseded=False)),
    ("from created_at", _created_at_retrieve),
    (
        "keep the store's order",
        _retrieve_variant(select=lambda rows, k: sorted(rows, key=lambda r: r.score)[::-1][:k]),
    ),
    (
        "weights argument was not passed on",
        lambda store, q, now, k=3, weights=None, decay_rate=0.995: retrieve(
            store, q, now, k=k, decay_rate=decay_rate
        ),
    ),
    (
        "decay_rate argument was not passed on",
        lambda store, q, now, k=3, weights=(1, 1, 1), decay_rate=None: retrieve(
            store, q, now, k=k, weights=weights
        ),
    ),
]


@pytest.mark.parametrize(("mistake", "wrong"), WRONG_RETRIEVE, ids=[m for m, _ in WRONG_RETRIEVE])
def test_a_wrong_retriever_fails_naming_its_mistake(mistake, wrong):
    with pytest.raises(CheckFailed) as failure:
        checks.check_retrieve(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert mistake in message, message


def test_a_ranking_that_puts_ties_backwards_is_caught_in_rank_memories():
    def ascending_then_reversed(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        rows = rank_memories(store, q, now, weights, decay_rate)  # right, ties in store order
        order = {m.id: i for i, m in enumerate(store)}
        rows.sort(key=lambda row: order[row.memory.id])  # back to the store's order
        return sorted(rows, key=lambda row: row.score)[::-1]  # the slip: ties come out last-first

    with pytest.raises(CheckFailed) as failure:
        checks.check_rank_memories(ascending_then_reversed)
    message = str(failure.value)
    assert "got:      ['t7', 't1', 't4', 't5', 't8', 't2', 't6', 't3', 't9']" in message
    assert "sorting ascending and reversing the list" in message
    assert "code/retriever.py, Milestone 4" in message


def test_a_ranking_that_refreshes_memories_fails():
    def touching(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        rows = rank_memories(store, q, now, weights, decay_rate)
        for row in rows:
            row.memory.last_accessed = now
        return rows

    with pytest.raises(CheckFailed, match="refreshing belongs to retrieve"):
        checks.check_rank_memories(touching)


@pytest.mark.slow
def test_in_a_notebook_a_stub_and_a_failed_check_show_a_short_message_not_a_traceback(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    code_dir = str(Path(checks.__file__).parents[2])
    stub = "def retrieve(*a):\n    raise NotImplementedError()\nretrieve()"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import sys; sys.path.insert(0, {code_dir!r})\nfrom teaching import checks"
        ),
        nbformat.v4.new_code_cell(stub),  # importing the checks installs nothing
        nbformat.v4.new_code_cell(
            "from teaching.notebook import setup\nassert setup() and setup()  # a rerun is quiet\n"
            "assert 'IPython.extensions.autoreload' in get_ipython().extension_manager.loaded"
        ),
        nbformat.v4.new_code_cell(stub),
        nbformat.v4.new_code_cell("checks.check_importance_score(lambda importance: importance)"),
        nbformat.v4.new_code_cell("raise NotImplementedError('not a learner function')"),
    ]
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute()
    assert nb.cells[2].outputs == []  # the set-up cell ran clean
    before, stub, wrong, other = (nb.cells[i].outputs[-1] for i in (1, 3, 4, 5))
    assert before.ename == "NotImplementedError" and len(before.traceback) > 2
    assert stub.output_type == wrong.output_type == other.output_type == "error"
    assert stub.ename == "NotImplementedYet"
    assert "code/retriever.py, Milestone 4" in stub.evalue
    assert len(stub.traceback) == 2  # the title and the message: no stack of frames
    assert wrong.ename == "CheckFailed"
    assert "the rating was returned as is" in "\n".join(wrong.traceback)
    assert other.ename == "NotImplementedError" and len(other.traceback) > 2


def test_outside_ipython_the_notebook_set_up_does_nothing():
    from teaching.notebook import show_stubs_as_messages

    assert show_stubs_as_messages() is False


def test_require_milestones_prints_one_line_when_all_pass(capsys):
    checks.require_milestones("notebook 07")
    assert (
        capsys.readouterr().out == "Milestones 1-4 pass: notebook 07 runs on your own functions.\n"
    )


def test_require_milestones_stops_at_the_first_unfinished_milestone(monkeypatch):
    import retriever

    monkeypatch.setattr(retriever, "rank_memories", _stub)
    checks.require_milestones("notebook 08", up_to=3)  # Milestone 4 is not needed there
    with pytest.raises(NotImplementedYet, match="rank_memories.*Milestone 4"):
        checks.require_milestones("notebook 09")


CRASHING_SCORING = """\
def recency_score(now, last_accessed, decay_rate=0.995):
    hours = (now - last_accessed) / 3600.0
    return decay_rate ** hours / (hours - hours)
"""


def test_a_crash_names_the_learners_file_line_and_source_before_the_hint(tmp_path):
    import importlib.util

    path = tmp_path / "code" / "scoring.py"  # a learner file by its place: code/scoring.py
    path.parent.mkdir()
    path.write_text(CRASHING_SCORING)
    spec = importlib.util.spec_from_file_location("crashing_scoring", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(CheckFailed) as failure:
        checks.check_recency_score(module.recency_score)
    lines = str(failure.value).splitlines()
    got = next(i for i, line in enumerate(lines) if line.startswith("  got:"))
    assert "ZeroDivisionError" in lines[got]
    assert lines[got + 1].strip() == (
        "at code/scoring.py, line 3: `return decay_rate ** hours / (hours - hours)`"
    )
    assert lines[got + 2].startswith("  likely mistake: a division by zero")


def test_a_crash_outside_the_learners_files_names_no_line():
    def crashing(now, last_accessed, decay_rate=0.995):
        raise TypeError("unsupported operand")

    with pytest.raises(CheckFailed) as failure:
        checks.check_recency_score(crashing)
    message = str(failure.value)
    assert "TypeError: unsupported operand" in message and " at " not in message


# --- Milestone 5: kind_recency_score, retrieve_by_kind, the kind labels ------------------

from scoring import kind_recency_score  # noqa: E402
from teaching.checks import m5_kinds  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_ladder():
    """Every test starts on the hint ladder's first rung: no tries, nothing revealed."""
    ladder.reset()
    yield
    ladder.reset()


DEFAULT = dict(m5_kinds.HALF_LIVES)


def _kind_rule(rule):
    """A wrong kind_recency_score from rule(hours, seconds, kind, table)."""

    def wrong(now, last, kind, half_lives=DEFAULT):
        return rule(max(0.0, now - last) / HOUR, now - last, kind, half_lives)

    return wrong


WRONG_KIND_RECENCY = [
    ("a half-life is not a decay rate", _kind_rule(lambda h, s, kind, t: t[kind] ** h)),
    ("inverted into a share kept per hour", _kind_rule(lambda h, s, kind, t: (1 / t[kind]) ** h)),
    (
        "episodic memories never faded",
        _kind_rule(lambda h, s, kind, t: 1.0 if kind == "episodic" else 0.5 ** (h / t[kind])),
    ),
    ("the kind was ignored", _kind_rule(lambda h, s, kind, t: 0.5 ** (h / t["episodic"]))),
    ("nothing faded", _kind_rule(lambda h, s, kind, t: 1.0)),
    ("this is recency_score", _kind_rule(lambda h, s, kind, t: 0.995 ** max(0.0, h))),
    ("the gap was used in seconds", _kind_rule(lambda h, s, kind, t: 0.5 ** (max(0, s) / t[kind]))),
    ("converted to days", _kind_rule(lambda h, s, kind, t: 0.5 ** (h / 24 / t[kind]))),
    (  # crashes on a memory just accessed (0 hours): the crash is explained in these terms
        "divide the hours by the half-life",
        _kind_rule(lambda h, s, kind, t: 0.5 ** (t[kind] / h)),
    ),
    ("the part forgotten", _kind_rule(lambda h, s, kind, t: 1 - 0.5 ** (h / t[kind]))),
    (
        "the half_lives argument was ignored",
        _kind_rule(lambda h, s, kind, t: 0.5 ** (h / DEFAULT[kind])),
    ),
    (
        "future must count as 0 hours",
        _kind_rule(lambda h, s, kind, t: 0.5 ** (s / HOUR / t[kind])),
    ),
]


def test_the_reference_passes_the_milestone_5_checks(capsys):
    checks.check_kind_recency_score()
    checks.check_retrieve_by_kind()
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["kind_recency_score: 10 checks passed", "retrieve_by_kind: 6 checks passed"]
    assert "FAST = {'episodic': 24" in out[0]  # the tables the calls name, shown first


def test_every_milestone_5_answer_is_what_the_reference_computes():
    for case in m5_kinds.CASES:
        assert kind_recency_score(*case.args, **case.kwargs) == pytest.approx(
            case.expected, abs=1e-9
        )
    for scenario in m5_kinds.KIND_SCENARIOS:
        store = scenario.build()
        got = retrieve_by_kind(
            store, list(scenario.query), checks.NOW, k=100, weights=scenario.weights,
            half_lives=scenario.half_lives,
        )  # fmt: skip
        assert tuple(m.id for m in got) == scenario.ranking, scenario.title


@pytest.mark.parametrize(
    ("check", "where"),
    [
        (checks.check_kind_recency_score, "code/scoring.py, Milestone 5 (07a_kinds.ipynb)"),
        (checks.check_retrieve_by_kind, "code/retriever.py, Milestone 5 (07a_kinds.ipynb)"),
    ],
)
def test_a_milestone_5_stub_is_reported_with_its_file(check, where, capsys):
    with pytest.raises(NotImplementedYet, match="not implemented yet") as failure:
        check(_stub)
    assert where in str(failure.value)


@pytest.mark.parametrize(
    ("mistake", "wrong"), WRONG_KIND_RECENCY, ids=[m for m, _ in WRONG_KIND_RECENCY]
)
def test_a_wrong_kind_recency_fails_naming_its_mistake(mistake, wrong, capsys):
    with pytest.raises(CheckFailed) as failure:
        checks.check_kind_recency_score(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert mistake in message, message


def test_an_overflow_from_a_half_life_used_as_a_rate_is_explained_as_that(capsys):
    def as_rate(now, last, kind, half_lives=DEFAULT):
        return half_lives[kind] ** ((now - last) / HOUR)  # 1080 ** 1080 overflows

    with pytest.raises(CheckFailed) as failure:
        checks.check_kind_recency_score(as_rate)
    message = str(failure.value)
    assert "OverflowError" in message and "half-life is not a decay rate" in message
    assert "exponent in hours" not in message  # the general hint would mislead here


def _by_kind_variant(recency=None, half_lives_used=None, weights_used=None, from_created=False,
                     skip_superseded=True, touch="returned", order="stable"):  # fmt: skip
    """A retrieve_by_kind with one deliberate mistake, built from the reference scoring."""
    from scoring import importance_score as imp_score
    from scoring import relevance_score as rel_score
    from scoring import retrieval_score as total

    def wrong(store, q, now, k=3, weights=(1.0, 1.0, 1.0), half_lives=DEFAULT):
        table = half_lives_used or half_lives
        scored = []
        for m in store:
            if skip_superseded and m.superseded_by is not None:
                continue
            since = m.created_at if from_created else m.last_accessed
            rec = recency(now, since) if recency else kind_recency_score(now, since, m.kind, table)
            score = total(rel_score(q, m.embedding), rec, imp_score(m.importance),
                          weights_used or weights)  # fmt: skip
            scored.append((score, m))
        if order == "stable":
            ranked = sorted(scored, key=lambda p: p[0], reverse=True)
        else:
            ranked = sorted(scored, key=lambda p: p[0])[::-1]
        top = [m for _, m in ranked[:k]]
        for m in {"returned": top, "none": [], "all": list(store)}[touch]:
            m.last_accessed = now
        return top

    return wrong


WRONG_BY_KIND = [
    ("recency_score with one decay rate", _by_kind_variant(recency=recency_score)),
    ("half_lives argument was not passed on", _by_kind_variant(half_lives_used=DEFAULT)),
    ("weights argument was not passed on", _by_kind_variant(weights_used=(1.0, 1.0, 1.0))),
    ("from created_at", _by_kind_variant(from_created=True)),
    ("superseded memory was returned", _by_kind_variant(skip_superseded=False)),
    ("not refreshed", _by_kind_variant(touch="none")),
    ("every memory was refreshed", _by_kind_variant(touch="all")),
    ("keep the store's order", _by_kind_variant(order="reversed")),
    (
        "ids were returned",
        lambda *a, **kw: [m.id for m in retrieve_by_kind(*a, **kw)],
    ),
]


@pytest.mark.parametrize(("mistake", "wrong"), WRONG_BY_KIND, ids=[m for m, _ in WRONG_BY_KIND])
def test_a_wrong_retrieve_by_kind_fails_naming_its_mistake(mistake, wrong):
    with pytest.raises(CheckFailed) as failure:
        checks.check_retrieve_by_kind(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert mistake in message, message
    assert "Milestone 5" in message


# --- practice checks against numbers worked out independently (instructor-only: answers) ---


@pytest.mark.parametrize(
    ("key", "answer"),
    [("01.2", 0.995**3600), ("01.3", 0.99588), ("04.1", 0.8867), ("00.3", 8000), ("02.1", 10.1)],
)
def test_a_right_number_passes_within_the_tolerance(capsys, key, answer):
    from teaching.checks.answers import check_answer

    assert check_answer(key, answer) is True
    assert f"{key}: right" in capsys.readouterr().out


RIGHT_LABELS = {memory_id: kind for memory_id, _, kind in m5_kinds.TO_LABEL}


def test_the_right_kind_labels_pass(capsys):
    checks.check_kind_labels(dict(RIGHT_LABELS))
    assert capsys.readouterr().out == "kind labels: all 8 right\n"


def test_a_wrong_kind_label_is_counted_by_category_and_explained_only_on_reveal():
    labels = {**RIGHT_LABELS, "k3": "semantic", "k5": "semantic", "k2": "fact"}
    with pytest.raises(CheckFailed) as failure:
        checks.check_kind_labels(labels)
    message = str(failure.value)
    assert message.startswith("3 of 8 labels are off")
    assert "of the 4 you called semantic, 2 are not" in message
    assert "'fact' (k2) is not a kind" in message
    assert "it is procedural" not in message and "k3" not in message
    with pytest.raises(CheckFailed) as failure:
        checks.check_kind_labels(labels, reveal=True)
    message = str(failure.value)
    assert "k3 'To release, tag the commit, then run the publish workflow': procedural" in message
    assert "k5 'Yesterday the user asked for a shorter summary of the report': episodic" in message
    assert "(you said 'fact')" in message


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        ({"k1": "episodic"}, "no label yet for k2, k3"),
        ([("k1", "episodic")], "labels must be a dict"),
    ],
)
def test_missing_labels_or_no_dict_are_named(labels, match):
    with pytest.raises(CheckFailed, match=match):
        checks.check_kind_labels(labels)


# --- notebook 04's budget step ---------------------------------------------------------------
# A right fit_budget and the slips check_fit_budget names. Written here, in instructor-only
# tests, because the notebook's own answer is a solution cell the student edition clears.


def budget_prefix(ranked, budget_tokens, now):
    """The reference: the longest prefix whose rendered block fits."""
    from extensions.context_budget import count_tokens
    from llm.memory_block import render_memory_block

    size = 0
    while size < len(ranked) and (
        count_tokens(render_memory_block(ranked[: size + 1], now)) <= budget_tokens
    ):
        size += 1
    return list(ranked[:size])


def budget_skipping(ranked, budget_tokens, now):
    """Keeps looking after a memory that does not fit: a worse one takes a better one's place."""
    from extensions.context_budget import count_tokens
    from llm.memory_block import render_memory_block

    chosen = []
    for candidate in ranked:
        if count_tokens(render_memory_block([*chosen, candidate], now)) <= budget_tokens:
            chosen.append(candidate)
    return chosen


def budget_texts_only(ranked, budget_tokens, now):
    from extensions.context_budget import count_tokens

    chosen, spent = [], 0
    for candidate in ranked:
        spent += count_tokens(candidate.text)
        if spent > budget_tokens:
            break
        chosen.append(candidate)
    return chosen


def budget_strict(ranked, budget_tokens, now):
    from extensions.context_budget import count_tokens
    from llm.memory_block import render_memory_block

    return [m for i, m in enumerate(ranked)
            if count_tokens(render_memory_block(ranked[: i + 1], now)) < budget_tokens]  # fmt: skip


def budget_ids(ranked, budget_tokens, now):
    return [m.id for m in budget_prefix(ranked, budget_tokens, now)]


def budget_refreshing(ranked, budget_tokens, now):
    chosen = budget_prefix(ranked, budget_tokens, now)
    for memory in chosen:
        memory.last_accessed = now
    return chosen


def test_the_budget_cases_are_built_on_the_block_costs_they_name():
    from extensions.context_budget import count_tokens
    from llm.memory_block import render_memory_block
    from teaching.checks.answers import _budget_memories

    memories = _budget_memories()
    costs = [count_tokens(render_memory_block(memories[:k], 1_000_000.0)) for k in (1, 2, 3, 4)]
    assert costs == [49, 118, 155, 197]


def test_a_right_budget_step_passes_every_budget_case(capsys):
    from teaching.checks.answers import BUDGET_CASES, check_fit_budget

    assert check_fit_budget(budget_prefix) is True
    assert capsys.readouterr().out == f"fit_budget: {len(BUDGET_CASES)} checks passed\n"


@pytest.mark.parametrize(
    ("fit_budget", "says"),
    [
        (budget_skipping, "a lower-ranked memory took the place of a better one"),
        (budget_texts_only, "only the texts were counted"),
        (budget_strict, "at most, not less than"),
        (budget_ids, "not their ids"),
        (lambda ranked, budget, now: 2, "not how many"),
        (budget_refreshing, "it changes neither the list nor a memory"),
        (lambda ranked, budget, now: ranked[:1], "3 memories too few"),
    ],
)
def test_each_budget_slip_is_named_with_what_came_back_but_not_the_answer(capsys, fit_budget, says):
    from teaching.checks.answers import check_fit_budget

    assert check_fit_budget(fit_budget) is False
    out = capsys.readouterr().out
    assert says in out and "expected" not in out
    if "changes neither" not in out:
        assert "got:" in out


# --- every slip named: a wrong function, written as a learner writes it, gets its own
# message. Each row is a wrong implementation and a phrase of the message its check must
# give; the phrases are distinct on purpose, so a slip blamed on another slip (the
# absolute value of the gap reported as "the wrong way round") fails here.


def _recency(hours_of):
    """A recency_score whose only slip is how it turns the two times into hours."""
    return lambda now, last, decay_rate=0.995: decay_rate ** hours_of(now, last)


def _recency_formula(formula):
    """A recency_score with the hours right (clamped at 0) and the formula wrong."""
    return lambda now, last, decay_rate=0.995: formula(max(0.0, (now - last) / HOUR), decay_rate)


RECENCY_SLIPS = [
    ("abs of the gap", _recency(lambda now, last: abs(now - last) / HOUR), "absolute value"),
    ("gap reversed", _recency(lambda now, last: (last - now) / HOUR), "wrong way round"),
    (
        "gap reversed, then clamped",
        _recency(lambda now, last: max(0.0, (last - now) / HOUR)),
        "clamping that at 0 turned every past access into 0 hours",
    ),
    ("floor division", _recency(lambda now, last: max(0.0, (now - last) // HOUR)), "whole hours"),
    ("int hours", _recency(lambda now, last: int(max(0.0, now - last) / HOUR)), "whole hours"),
    ("seconds", _recency(lambda now, last: max(0.0, now - last)), "used in seconds"),
    ("minutes", _recency(lambda now, last: max(0.0, now - last) / 60), "used in minutes"),
    ("days", _recency(lambda now, last: max(0.0, now - last) / 86400), "converted to days"),
    ("milliseconds", _recency(lambda now, last: max(0.0, now - last) / 3.6e6), "milliseconds"),
    ("not clamped", _recency(lambda now, last: (now - last) / HOUR), "must count as 0 hours"),
    ("linear decay", _recency_formula(lambda h, r: 1 - (1 - r) * h), "a straight line"),
    ("exp(-rate * h)", _recency_formula(lambda h, r: math.exp(-r * h)), "minus decay_rate times"),
    ("exp(-(1-rate) * h)", _recency_formula(lambda h, r: math.exp(-(1 - r) * h)), "continuous"),
    ("hours ** rate", _recency_formula(lambda h, r: h**r), "base and exponent were swapped"),
    ("1 - rate ** h", _recency_formula(lambda h, r: 1 - r**h), "the part forgotten"),
    ("hours returned", _recency_formula(lambda h, r: h), "the hours were returned"),
    ("rate * h", _recency_formula(lambda h, r: r * h), "multiplied by the hours"),
    ("always 1", _recency_formula(lambda h, r: 1.0), "recency was 1.0 whatever the gap"),
    ("rate ignored", _recency_formula(lambda h, r: 0.995**h), "decay_rate argument was ignored"),
]

IMPORTANCE_SLIPS = [
    ("round first", lambda importance: round(importance) / 10, "rounded to a whole number"),
    ("int first", lambda importance: int(importance) / 10, "cut to a whole number (int)"),
    ("/ 100", lambda importance: importance / 100, "divided by 100"),
    ("1 - r / 10", lambda importance: 1 - importance / 10, "turned upside down"),
    ("(r - 1) / 10", lambda importance: (importance - 1) / 10, "one was subtracted"),
    ("raw", lambda importance: importance, "returned as is"),
]


def _guarded(formula):
    """A relevance_score that gets the zero vector right and the formula wrong."""
    return lambda q, m: 0.0 if not _norm(q) or not _norm(m) else formula(q, m)


RELEVANCE_SLIPS = [
    (
        "norms not square-rooted",
        _guarded(lambda q, m: _dot(q, m) / (_dot(q, q) * _dot(m, m))),
        "not square-rooted",
    ),
    ("dot product", _dot, "bare dot product"),
    (
        "brackets missing",
        _guarded(lambda q, m: _dot(q, m) / _norm(q) * _norm(m)),
        "multiplied by the other",
    ),
    (
        "the angle",
        _guarded(lambda q, m: math.acos(max(-1.0, min(1.0, _dot(q, m) / (_norm(q) * _norm(m)))))),
        "the angle between the vectors",
    ),
    (
        "memory length only",
        _guarded(lambda q, m: _dot(q, m) / _norm(m)),
        "the memory's length only",
    ),
]

RETRIEVAL_SCORE_SLIPS = [
    (
        "weights ignored",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): rel + rec + imp,
        "weights were ignored",
    ),
    (
        "weights added",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): sum(
            w + s for w, s in zip(weights, (rel, rec, imp))
        ),
        "each weight was added to its signal",
    ),
    (
        "one weight for all",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): weights[0] * (rel + rec + imp),
        "only the relevance weight was used",
    ),
]


def _kind_recency(formula):
    """A kind_recency_score with the hours right and the halving wrong."""

    def wrong(now, last, kind, half_lives=HALF_LIVES):
        return formula(max(0.0, (now - last) / HOUR), half_lives[kind], now - last)

    return wrong


KIND_RECENCY_SLIPS = [
    ("e-folding", _kind_recency(lambda h, hl, s: math.exp(-h / hl)), "e-folding time"),
    ("minutes", _kind_recency(lambda h, hl, s: 0.5 ** (max(0.0, s) / 60 / hl)), "in minutes"),
    ("seconds", _kind_recency(lambda h, hl, s: 0.5 ** (max(0.0, s) / hl)), "used in seconds"),
    ("days", _kind_recency(lambda h, hl, s: 0.5 ** (h / 24 / hl)), "converted to days"),
    ("straight line", _kind_recency(lambda h, hl, s: max(0.0, 1 - h / (2 * hl))), "straight line"),
    ("half-life as rate", _kind_recency(lambda h, hl, s: hl**h), "not a decay rate"),
    ("swapped", _kind_recency(lambda h, hl, s: 0.5 ** (hl / h) if h else 1.0), "were swapped"),
]

SCORING_SLIPS = (
    [(checks.check_recency_score, *slip) for slip in RECENCY_SLIPS]
    + [(checks.check_importance_score, *slip) for slip in IMPORTANCE_SLIPS]
    + [(checks.check_relevance_score, *slip) for slip in RELEVANCE_SLIPS]
    + [(checks.check_retrieval_score, *slip) for slip in RETRIEVAL_SCORE_SLIPS]
    + [(checks.check_kind_recency_score, *slip) for slip in KIND_RECENCY_SLIPS]
)


@pytest.mark.parametrize(
    ("check", "slip", "wrong", "says"), SCORING_SLIPS, ids=[row[1] for row in SCORING_SLIPS]
)
def test_each_scoring_slip_gets_its_own_message(check, slip, wrong, says, capsys):
    with pytest.raises(CheckFailed) as failure:
        check(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message and "(fix it in code/" in message
    assert says in message, message
    assert "none of the usual mistakes matches" not in message


def test_every_scoring_slip_says_something_no_other_slip_of_its_function_says():
    """A phrase shared by two slips' messages would not tell them apart."""
    by_check: dict = {}
    for check, slip, _, says in SCORING_SLIPS:
        by_check.setdefault(check, []).append((slip, says))
    for check, slips in by_check.items():
        labels = {says for _, says in slips}
        for slip, says in slips:
            assert sum(says in other for other in labels) == 1, (check.__name__, slip)


# --- rankings --------------------------------------------------------------------------------


def _rows(store, q, now, weights, decay_rate):
    """The rows a learner builds before sorting: the signals right, in the store's order."""
    rows = rank_memories(store, q, now, weights, decay_rate)
    order = {m.id: i for i, m in enumerate(store)}
    return sorted(rows, key=lambda row: order[row.memory.id])


def _ranker(sort):
    def wrong(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        return sort(_rows(store, q, now, weights, decay_rate))

    return wrong


def _random_ties(rows):
    return sorted(rows, key=lambda row: (row.score, random.random()), reverse=True)


def _shuffled_then_sorted(rows):
    rows = list(rows)
    random.shuffle(rows)
    return sorted(rows, key=lambda row: row.score, reverse=True)


def _raw_importance(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    rows = [
        row._replace(importance=row.memory.importance, score=row.score + row.memory.importance)
        for row in rank_memories(store, q, now, weights, decay_rate)
    ]
    return sorted(rows, key=lambda row: row.score, reverse=True)


def _ages_too(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    rows = rank_memories(store, q, now, weights, decay_rate)
    for row in rows:
        row.memory.created_at = now  # the slip: "recalled, so it is new again"
    return rows


RANKING_SLIPS = [
    (
        "(score, id) key with reverse=True",
        _ranker(lambda rows: sorted(rows, key=lambda r: (r.score, r.memory.id), reverse=True)),
        "the ids' reverse order",
    ),
    (
        "(-score, id) key",
        _ranker(lambda rows: sorted(rows, key=lambda r: (-r.score, r.memory.id))),
        "were put in the ids' order",
    ),
    (
        "ascending, then reversed",
        _ranker(lambda rows: sorted(rows, key=lambda r: r.score)[::-1]),
        "sorting ascending and reversing the list",
    ),
    ("random key on ties", _ranker(_random_ties), "the tie-break is random"),
    ("shuffled, then sorted", _ranker(_shuffled_then_sorted), "the tie-break is random"),
    ("raw importance", _raw_importance, "the raw rating (1-10)"),
    ("created_at touched", _ages_too, "a recall changes only last_accessed"),
    (
        "worst first",
        _ranker(lambda rows: sorted(rows, key=lambda r: r.score)),
        "sorted worst first",
    ),
]


@pytest.mark.parametrize(
    ("slip", "wrong", "says"), RANKING_SLIPS, ids=[r[0] for r in RANKING_SLIPS]
)
def test_each_ranking_slip_gets_its_own_message(slip, wrong, says):
    with pytest.raises(CheckFailed) as failure:
        checks.check_rank_memories(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert says in message, message
    assert "code/retriever.py, Milestone 4" in message


@pytest.mark.parametrize("tie_break", [_random_ties, _shuffled_then_sorted])
def test_a_random_tie_break_fails_rank_memories_on_every_run(tie_break):
    for _ in range(20):
        with pytest.raises(CheckFailed, match="the tie-break is random"):
            checks.check_rank_memories(_ranker(tie_break))


def _retrieve_with(sort):
    def wrong(store, q, now, k=3, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        top = sort(_rows(store, q, now, weights, decay_rate))[:k]
        for row in top:
            row.memory.last_accessed = now
        return [row.memory for row in top]

    return wrong


def test_a_random_tie_break_fails_retrieve_on_every_run():
    for _ in range(20):
        with pytest.raises(CheckFailed, match="the tie-break is random"):
            checks.check_retrieve(_retrieve_with(_random_ties))


def _refresh_ages_too(base):
    def wrong(store, q, now, *args, **kwargs):
        memories = base(store, q, now, *args, **kwargs)
        for memory in memories:
            memory.created_at = now  # the slip: the refresh also makes it "new"
        return memories

    return wrong


@pytest.mark.parametrize(
    ("check", "wrong"),
    [
        (checks.check_retrieve, _refresh_ages_too(retrieve)),
        (checks.check_retrieve_by_kind, _refresh_ages_too(retrieve_by_kind)),
    ],
)
def test_a_refresh_that_also_sets_created_at_is_named(check, wrong):
    with pytest.raises(CheckFailed) as failure:
        check(wrong)
    message = str(failure.value)
    assert "created_at is when the memory was made; a recall changes only last_accessed" in message
    assert "created_at after the call" in message and "got:      changed on [" in message


@pytest.mark.parametrize(
    ("got", "says"),
    [
        (["t7", "t4", "t1", "t8"], m4_retriever.TIES_BY_ID_DOWN),
        (["t1", "t4", "t7", "t2"], m4_retriever.TIES_BY_ID_UP),
        (["t7", "t1", "t4", "t5"], m4_retriever.TIES_REVERSED),
        (["t1", "t7", "t4", "t2"], m4_retriever.TIES_OTHER),
    ],
)
def test_ties_are_read_from_the_rows_so_a_renamed_store_is_named_alike(got, says):
    """The tie-break is recognised from the rows (equal memories), not from a list of ids:
    the same slips are named on a store whose ids are renamed, as the grader's are."""
    scenario = m4_retriever.tie_scenario()
    assert m4_retriever.tie_mistake(got, scenario, scenario.k) == says
    renamed = {f"t{n}": f"z{10 - n}" for n in range(1, 10)}  # the ids' order reversed
    other = type(scenario)(
        scenario.title,
        tuple((renamed[row[0]], *row[1:]) for row in scenario.rows),
        scenario.query,
        scenario.k,
        tuple(renamed[i] for i in scenario.ranking),
    )
    mapped = [renamed[i] for i in got]
    expected = {
        m4_retriever.TIES_BY_ID_DOWN: m4_retriever.TIES_BY_ID_UP,
        m4_retriever.TIES_BY_ID_UP: m4_retriever.TIES_BY_ID_DOWN,
    }.get(says, says)
    assert m4_retriever.tie_mistake(mapped, other, other.k) == expected


class ShownShell:
    """What IPython's showtraceback was handed (the notebook set-up's custom handler)."""

    def showtraceback(self, exc_tuple, tb_offset=None):
        self.shown = exc_tuple


def raised(function):
    try:
        function()
    except NotImplementedError as error:
        return type(error), error, error.__traceback__
    raise AssertionError("no NotImplementedError")


def test_in_a_notebook_an_exercise_stub_says_where_to_write_it():
    from teaching.notebook import _show_stub

    def fit_in_budget(*args):  # the student edition's stub, by name
        raise NotImplementedError()

    shell = ShownShell()
    _show_stub(shell, *raised(fit_in_budget))
    etype, value, _ = shell.shown
    assert etype is NotImplementedYet
    assert "code/practice/exercises.py, notebook 07g's exercise" in str(value)


def test_in_a_notebook_provided_code_stopped_at_a_stub_shows_its_message_alone():
    from base.unwritten import NotWrittenYet
    from teaching.notebook import _show_stub

    def provided():
        raise NotWrittenYet("not implemented yet: skip_reason runs on your noise_reason")

    shell = ShownShell()
    _show_stub(shell, *raised(provided))
    etype, value, _ = shell.shown
    assert etype is NotImplementedYet and "runs on your noise_reason" in str(value)
