"""The evaluation harness: metrics by hand, each strategy's formula, the shipped data, the CLI."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from base.text import tokenize
from conftest import LAUNCHER
from embedding_helpers import Embedder
from evaluation.cli import DEFAULT_DATA, main
from evaluation.dataset import Question, load_dataset
from evaluation.metrics import (
    ablation,
    evaluate,
    format_table,
    recall_at_k,
    reciprocal_rank,
    verdict,
)
from evaluation.strategies import STRATEGIES, Strategy, decay_from_half_lives, rank, same_decay
from scoring import relevance_score
from tools import eval_data

OFFLINE = "memorylab/hashed-bow-384"
DAY = "2025-03-{:02d}T12:00:00Z"


@pytest.fixture(scope="module")
def year():
    return load_dataset(DEFAULT_DATA, Embedder(OFFLINE))


def tiny(turns, questions):
    """A one-session dataset dict; turns are (id, day of March, text, extra fields)."""
    return {
        "sessions": [
            {
                "id": "s1",
                "turns": [
                    {"id": tid, "date": DAY.format(day), "text": text, **extra}
                    for tid, day, text, extra in turns
                ],
            }
        ],
        "questions": questions,
    }


# --- metrics, against hand-computed answers -------------------------------------------


@pytest.mark.parametrize(
    ("ranked", "evidence", "k", "expected"),
    [
        (["a", "b", "c"], ["b"], 1, 0.0),  # evidence second: missed at k=1
        (["a", "b", "c"], ["b"], 2, 1.0),
        (["a", "b", "c", "d"], ["a", "d"], 3, 0.5),  # one of two pieces found
        (["a", "b", "c", "d"], ["a", "d"], 4, 1.0),
        (["a"], ["a", "z"], 10, 0.5),  # k past the end: only what is ranked counts
        ([], ["a"], 5, 0.0),
        (["a", "b", "c"], ["b"], np.int64(2), 1.0),  # a numpy integer is an integer too
    ],
)
def test_recall_at_k_is_the_share_of_evidence_in_the_top_k(ranked, evidence, k, expected):
    assert recall_at_k(ranked, evidence, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "evidence", "expected"),
    [
        (["a", "b", "c"], ["a"], 1.0),
        (["a", "b", "c"], ["c"], 1 / 3),
        (["x", "a", "b"], ["b", "a"], 1 / 2),  # the first piece of evidence counts
        (["a", "b"], ["z"], 0.0),  # never ranked
    ],
)
def test_reciprocal_rank_is_one_over_the_first_evidence_position(ranked, evidence, expected):
    assert reciprocal_rank(ranked, evidence) == pytest.approx(expected)


@pytest.mark.parametrize(("k", "error"), [(0, ValueError), (True, TypeError), (2.0, TypeError)])
def test_recall_at_k_refuses_a_bad_k(k, error):
    with pytest.raises(error, match="k must be an integer >= 1"):
        recall_at_k(["a"], ["a"], k)


@pytest.mark.parametrize(
    "call", [lambda: recall_at_k(["a"], [], 1), lambda: reciprocal_rank(["a"], [])]
)
def test_metrics_refuse_empty_evidence(call):
    with pytest.raises(ValueError, match="evidence must name at least one id"):
        call()


def test_evaluate_averages_per_question_scores_overall_and_per_category():
    data = tiny(
        [("t1", 1, "red apple", {}), ("t2", 2, "green apple pie", {})],
        [
            {"id": "q1", "question": "red apple", "evidence": ["t1"], "category": "a"},
            {"id": "q2", "question": "green apple pie", "evidence": ["t1"], "category": "b"},
        ],
    )
    report = evaluate(load_dataset(data, Embedder(OFFLINE)), STRATEGIES["relevance"], ks=(1,))
    assert report.per_question["q1"] == {"R@1": 1.0, "MRR": 1.0}
    assert report.per_question["q2"] == {"R@1": 0.0, "MRR": 0.5}  # t1 second behind t2
    assert report.overall == pytest.approx({"R@1": 0.5, "MRR": 0.75})
    assert report.by_category == {"a": {"R@1": 1.0, "MRR": 1.0}, "b": {"R@1": 0.0, "MRR": 0.5}}


# --- strategies: each one's formula, recomputed independently ----------------------------


def scores_by_id(data, strategy):
    evalset = load_dataset(data, Embedder(OFFLINE))
    return {row.memory.id: row for row in rank(evalset, evalset.questions[0], strategy)}


TWO_MEMORIES = tiny(
    [
        ("old", 1, "deploy friday rule", {"kind": "semantic", "importance": 9}),
        ("new", 10, "deploy friday chat today", {"importance": 2}),
    ],
    [{"id": "q", "question": "deploy friday", "asked_at": DAY.format(11), "evidence": ["old"]}],
)
HOURS = {"old": 10 * 24.0, "new": 1 * 24.0}  # before the question, asked on 11 March
RELEVANCE = {"old": 2 / math.sqrt(2 * 3), "new": 2 / math.sqrt(2 * 4)}  # shared words / norms
IMPORTANCE = {"old": 0.9, "new": 0.2}


@pytest.mark.parametrize(
    ("name", "formula"),
    [
        ("relevance", lambda m: RELEVANCE[m]),
        ("course", lambda m: RELEVANCE[m] + 0.995 ** HOURS[m] + IMPORTANCE[m]),
        ("langchain", lambda m: (1 - 0.01) ** HOURS[m] + RELEVANCE[m]),
        (
            "ram",  # facts do not fade; episodes halve every 45 days
            lambda m: (
                0.55 * RELEVANCE[m]
                + 0.25 * (1.0 if m == "old" else 0.5 ** (HOURS[m] / (45 * 24)))
                + 0.20 * IMPORTANCE[m]
            ),
        ),
    ],
)
def test_each_strategy_scores_with_its_published_formula(name, formula):
    rows = scores_by_id(TWO_MEMORIES, STRATEGIES[name])
    for memory_id in ("old", "new"):
        assert rows[memory_id].score == pytest.approx(formula(memory_id))


def test_generative_agents_min_max_normalises_then_weights_relevance_3_recency_half_importance_2():
    rows = scores_by_id(TWO_MEMORIES, STRATEGIES["generative-agents"])
    # With two candidates, min-max sends each signal to 0 (the lower) or 1 (the higher).
    assert (rows["old"].relevance, rows["old"].recency, rows["old"].importance) == (1, 0, 1)
    assert (rows["new"].relevance, rows["new"].recency, rows["new"].importance) == (0, 1, 0)
    assert rows["old"].score == pytest.approx(3 + 2)
    assert rows["new"].score == pytest.approx(0.5)


def test_min_max_of_a_signal_that_is_equal_everywhere_gives_one_half():
    data = tiny(
        [("a", 1, "tea", {}), ("b", 1, "tea", {})],
        [{"id": "q", "question": "tea", "evidence": ["a"]}],
    )
    rows = scores_by_id(data, STRATEGIES["generative-agents"])
    assert {row.relevance for row in rows.values()} == {0.5}


PREFERENCE = tiny(
    [
        ("dark", 1, "dark theme", {"kind": "semantic"}),
        ("light", 20, "switched to a light theme", {"kind": "semantic", "supersedes": "dark"}),
    ],
    [
        {"id": "before", "question": "theme", "asked_at": DAY.format(10), "evidence": ["dark"]},
        {"id": "after", "question": "theme", "asked_at": DAY.format(25), "evidence": ["light"]},
    ],
)


@pytest.mark.parametrize(
    ("question", "exclude", "expected"),
    [
        ("before", True, ["dark"]),  # "light" not said yet: not a candidate
        ("after", True, ["light"]),  # replaced by then: the old fact is dropped
        ("after", False, ["dark", "light"]),  # kept, and relevance alone puts it first
    ],
)
def test_candidates_are_what_was_said_by_then_minus_superseded_facts(question, exclude, expected):
    evalset = load_dataset(PREFERENCE, Embedder(OFFLINE))
    strategy = Strategy("test", (1.0, 0.0, 0.0), same_decay(1.0), exclude_superseded=exclude)
    asked = next(q for q in evalset.questions if q.id == question)
    assert [row.memory.id for row in rank(evalset, asked, strategy)] == expected


def test_ranking_never_touches_a_memory(year):
    before = {m.id: m.last_accessed for m in year.store}
    ablation(year, [STRATEGIES["course"], STRATEGIES["generative-agents"]], ks=(1,))
    assert {m.id: m.last_accessed for m in year.store} == before


def test_a_question_from_outside_the_dataset_can_be_ranked_too(year):
    asked = Question("extra", "Can I deploy to production on Friday?", 1.8e9, ("m0001",), "x")
    rows = rank(year, asked, STRATEGIES["relevance"])
    assert len(rows) == len(year.store)  # asked after the whole year: everything is a candidate
    assert "deploy" in rows[0].memory.text.lower()


def test_a_question_from_outside_with_a_dataset_questions_id_is_ranked_on_its_own_text(year):
    # The relevance cache must not hand it the dataset question's relevances.
    own = year.questions[0]
    asked = Question(own.id, "How do I take my coffee?", 1.8e9, ("m0001",), "x")
    assert asked.text != own.text
    rows = rank(year, asked, STRATEGIES["relevance"])
    assert "coffee" in rows[0].memory.text.lower()
    assert "coffee" not in rank(year, own, STRATEGIES["relevance"])[0].memory.text.lower()


@pytest.mark.parametrize(
    ("weights", "rates", "error", "match"),
    [
        ((1.0, -1.0, 1.0), same_decay(0.995), ValueError, "recency weight must be >= 0"),
        ((1.0, 1.0), same_decay(0.995), ValueError, "weights must be three numbers"),
        ((1.0, 1.0, 1.0), {"episodic": 0.99}, ValueError, r"decay_rates has no rate for .semantic"),
        ((1.0, 1.0, 1.0), {**same_decay(0.995), "semantic": 1.5}, ValueError, "decay_rate must"),
    ],
)
def test_a_strategy_with_bad_settings_is_refused_when_made(weights, rates, error, match):
    with pytest.raises(error, match=match):
        Strategy("mine", weights, rates)


def test_format_table_names_a_metric_it_does_not_have(year):
    reports = ablation(year, [STRATEGIES["course"]], ks=(1, 3))
    with pytest.raises(
        ValueError, match=r"category_metric must be one of R@1, R@3, MRR, got 'R@5'"
    ):
        format_table(reports, "R@5")
    with pytest.raises(ValueError, match="format_table needs at least one report"):
        format_table([])


def test_cached_relevance_is_relevance_score_on_the_full_vectors_to_the_last_bit(year):
    # The cache skips coordinates where both vectors are zero; the cosine must not change.
    for question in year.questions[::12]:
        query = year.embedder.embed_one(question.text)
        expected = [relevance_score(query, m.embedding) for m in year.store]
        assert year.relevances(question) == expected, question.id


def test_decay_from_half_lives_halves_recency_after_one_half_life():
    rates = decay_from_half_lives({"episodic": 24.0, "semantic": math.inf, "procedural": 48.0})
    assert rates["episodic"] ** 24 == pytest.approx(0.5)
    assert rates["procedural"] ** 48 == pytest.approx(0.5)
    assert rates["semantic"] == 1.0


# --- the shipped data and the ablation table ---------------------------------------------


def test_shipped_dataset_is_exactly_what_the_generator_makes():
    assert DEFAULT_DATA.read_text(encoding="utf-8") == eval_data.dumps(eval_data.generate()), (
        "data/eval/one_year.json differs from tools/eval_data.py: run python tools/eval_data.py"
    )


def test_every_category_has_questions(year):
    assert year.categories() == [
        "important_constraint",
        "noise",
        "paraphrase",
        "recent_event",
        "stale_preference",
    ]
    assert len(year.store) >= 300


def test_paraphrase_questions_share_no_word_with_their_evidence(year):
    for question in (q for q in year.questions if q.category == "paraphrase"):
        answer = year.store.get(question.evidence[0]).text
        assert not set(tokenize(question.text)) & set(tokenize(answer)), question


def test_stale_preference_evidence_is_the_newest_statement(year):
    for question in (q for q in year.questions if q.category == "stale_preference"):
        assert year.store.get(question.evidence[0]).superseded_by is None
        assert any(m.superseded_by == question.evidence[0] for m in year.store), question


def test_ablation_table_is_the_same_run_to_run(year):
    first = format_table(ablation(year))
    second = format_table(ablation(load_dataset(DEFAULT_DATA, Embedder(OFFLINE))))  # afresh
    assert first == second
    assert first.splitlines()[0].split() == ["strategy", "R@1", "R@3", "R@5", "R@10", "MRR"]


@pytest.mark.needs_milestones(4)
@pytest.mark.slow
def test_the_command_prints_the_same_table_under_any_hash_seed():
    # Python salts hash() per process: nothing in the data, the embedding or the ranking
    # may depend on it (set order, hash()), or two machines would print different tables.
    def table(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = [sys.executable, str(LAUNCHER), "evaluate", "--strategy", "ram"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        return done.stdout

    first = table("1")
    assert "ram" in first and first == table("2")


def test_a_tuned_strategy_beats_the_course_on_stale_preferences_and_constraints(year):
    # One setting the notebook's sliders reach: relevance first, facts fade over a year and
    # episodes over a month, and a fact is dropped once it is replaced.
    tuned = Strategy(
        "tuned",
        (1.0, 0.5, 0.5),
        decay_from_half_lives(
            {"episodic": 30 * 24.0, "semantic": 365 * 24.0, "procedural": 365 * 24.0}
        ),
        exclude_superseded=True,
    )
    course, mine = evaluate(year, STRATEGIES["course"]), evaluate(year, tuned)
    for category in ("stale_preference", "important_constraint"):
        assert mine.by_category[category]["MRR"] > course.by_category[category]["MRR"], category


# --- the command -------------------------------------------------------------------------


def test_command_prints_the_table_on_stdout_and_progress_on_stderr(capsys):
    assert main(["--k", "1", "5", "--strategy", "course", "--strategy", "ram"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("strategy"))
    assert lines[header].split() == ["strategy", "R@1", "R@5", "MRR"]
    assert [line.split()[0] for line in lines[header + 2 : header + 4]] == ["course", "ram"]
    assert "MRR by category" in out
    assert lines[-1].startswith("best overall: ram (MRR ")
    assert "relevance: 60/60 questions x 547 memories" in err
    assert "[1/2] course" in err and "[2/2] ram" in err


def test_the_command_says_why_its_figures_differ_from_notebook_08s_first_tables(capsys):
    # notebook 08's first tables use the word toy; the command, the lab's default embedding
    assert main(["--strategy", "course"]) == 0
    out = capsys.readouterr().out
    assert "the lab's default embedding" in out and f"--embed-model {OFFLINE}" in out
    assert main(["--strategy", "course", "--embed-model", OFFLINE]) == 0
    out = capsys.readouterr().out
    assert f"embeddings {OFFLINE}\n" in out and "default" not in out


def test_the_verdict_names_the_winner_and_relevance_against_the_course_with_margins(year):
    reports = ablation(year, [STRATEGIES[name] for name in ("relevance", "course", "ram")])
    mrr = {r.strategy.name: r.overall["MRR"] for r in reports}
    line = verdict(reports)
    best = max(mrr, key=mrr.get)
    assert line.startswith(f"best overall: {best} (MRR {mrr[best]:.3f})")
    gap = abs(mrr["relevance"] - mrr["course"])
    leader = "relevance alone" if mrr["relevance"] > mrr["course"] else "the course's rule"
    assert f"{leader} is ahead by {gap:.3f}." in line
    assert verdict(reports[1:2]) == f"best overall: course (MRR {mrr['course']:.3f})."
    with pytest.raises(ValueError, match="metric must be one of .*got 'MAP'"):
        verdict(reports, "MAP")
    with pytest.raises(ValueError, match="at least one report"):
        verdict([])


def test_command_reports_a_broken_file_and_exits_2(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"sessions": [}', encoding="utf-8")
    assert main(["--data", str(broken)]) == 2
    assert "broken.json is not valid JSON" in capsys.readouterr().err


def test_command_reports_an_unknown_embedding_model_and_exits_2(capsys):
    assert main(["--embed-model", "memorylab/hashed-bow-3"]) == 2
    assert "unknown offline embedding model" in capsys.readouterr().err


def test_command_reports_a_failing_embedding_model_and_exits_2(monkeypatch, capsys):
    from llm import gateway

    def refuse(model, texts, **_):
        raise gateway.ModelCallError(f"the embedding model {model!r} failed: no key")

    monkeypatch.setattr(gateway, "embed", refuse)
    assert main(["--embed-model", "someone/else"]) == 2
    err = capsys.readouterr().err
    assert "error: the embedding model 'someone/else' failed: no key" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--k", "0"], "--k values must be >= 1, got [0]"),
        (["--k", "x"], "argument --k: invalid int value: 'x'"),
        (["--strategy", "best"], "argument --strategy: invalid choice: 'best'"),
        (["--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_a_bad_option_is_refused_in_one_line_with_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    [line] = err.splitlines()  # one line, not argparse's usage block
    assert line.startswith(f"python code/run.py evaluate: error: {message}") and line.endswith(
        "(see --help)"
    )
