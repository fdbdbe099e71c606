"""evaluation/updates.py: scripted conversations replayed through the chat, probes judged.

The public set (data/update_conversations.json) is what the write-back rules were tuned
on; update_conversations_own.json beside this file was written apart from it (other
names, places and wording) and checks that they generalise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.cli import main
from evaluation.dataset import DatasetError
from evaluation.updates import evaluate_updates, format_report, judge, load_conversations

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "data" / "update_conversations.json"
OWN = Path(__file__).with_name("update_conversations_own.json")


def test_a_reply_passes_with_every_must_and_no_must_not_ignoring_case():
    assert judge("You live in BRISTOL.", ["bristol"], ["manchester"]) == ([], [])
    assert judge("Bristol, and Manchester", ["Bristol"], ["manchester"]) == ([], ["manchester"])
    assert judge("passed away", [["don't have a dog", "passed away"]], []) == ([], [])
    assert judge("a thing", ["Bristol", ["a", "zz"]], []) == (["Bristol"], [])


def test_a_conversation_is_replayed_and_a_stale_fact_fails_its_probe(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"conversations": [{
        "id": "c1",
        "turns": ["I drive a blue Toyota.", {"say": "I like jazz.", "hours_later": 5}],
        "probes": [
            {"ask": "What car do I own?", "category": "possession", "must": ["Toyota"]},
            {"ask": "What car do I own?", "category": "stale", "must_not": ["Toyota"]},
        ],
    }]}))  # fmt: skip
    report = evaluate_updates(path)
    assert (report.passed, report.total) == (1, 2)
    assert report.by_category == {"possession": (1, 1), "stale": (0, 1)}
    assert "should not say 'Toyota'" in format_report(report)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("not json", "cannot read"),
        ('{"conversations": {}}', "'conversations' list"),
        ('{"conversations": [{"turns": [], "probes": []}]}', "'turns' must be a non-empty"),
        ('{"conversations": [{"turns": ["hi", {"say": "x", "hours_later": -1}], '
         '"probes": [{"ask": "q"}]}]}', "hours_later must be a number of hours >= 0"),
        ('{"conversations": [{"turns": ["hi"], "probes": [{"ask": "q", "must": [3]}]}]}',
         r"probes\[0\] must have"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_naming_what_is_off(tmp_path, content, match):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DatasetError, match=match):
        load_conversations(path)


def test_the_public_file_reads_as_its_format_says():
    name, conversations = load_conversations(PUBLIC)
    assert "public" in name
    assert sum(len(c["probes"]) for c in conversations) == 45


@pytest.mark.slow  # replays 21 conversations (about ten seconds)
def test_the_public_set_passes_at_least_95_percent(capsys):
    assert main(["--updates", str(PUBLIC)]) == 0
    out = capsys.readouterr().out
    report = evaluate_updates(PUBLIC)
    assert report.passed / report.total >= 0.95, format_report(report)
    assert "relocation" in out and f"{report.passed} of {report.total}" in out


@pytest.mark.slow  # replays 21 conversations the rules were not tuned on
def test_conversations_written_apart_from_the_public_set_pass_at_least_90_percent():
    report = evaluate_updates(OWN)
    assert report.passed / report.total >= 0.9, format_report(report)
    # write-back is what these probes test: the stale facts are gone, every one
    stale = [p for p in report.probes if p.unwanted]
    assert stale == [], format_report(report)


def test_updates_goes_alone(capsys):
    with pytest.raises(SystemExit):
        main(["--updates", str(PUBLIC), "--dataset", "locomo", "x"])
    assert "--updates FILE goes alone" in capsys.readouterr().err
