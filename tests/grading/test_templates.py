"""The learner-facing templates ship unanswered (instructor-only: learners answer them).

A learner writes their answers into UNDERSTANDING.md, so the tests they run read its
questions only (tests/teaching/test_mentor.py). This instructor-side test keeps the
other half of the rule: the master copy, which the student edition is built from,
carries no answer.
"""

from __future__ import annotations

from pathlib import Path

from teaching.mentor import read_understanding

ROOT = Path(__file__).resolve().parents[2]


def test_the_master_understanding_template_answers_no_question():
    questions = read_understanding(ROOT / "UNDERSTANDING.md")
    assert len(questions) == 12
    assert [q.id for q in questions if q.answered] == []
