"""The conversation dataset loader: what a good file becomes, and a clear error for a bad one."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from embedding_helpers import Embedder
from evaluation.dataset import DatasetError, load_dataset

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "data" / "eval" / "example_conversations.json"
OFFLINE = Embedder("memorylab/hashed-bow-384")

GOOD = {
    "name": "good",
    "sessions": [
        {
            "id": "s1",
            "date": "2025-03-01T09:00:00Z",
            "turns": [
                {"id": "t1", "text": "hello there"},
                {"id": "t2", "text": "I like tea", "kind": "semantic", "importance": 7},
            ],
        },
        {
            "id": "s2",
            "turns": [
                {
                    "id": "t3",
                    "date": "2025-03-05T10:00:00+01:00",
                    "text": "I like coffee now",
                    "kind": "semantic",
                    "supersedes": "t2",
                    "speaker": "assistant",
                }
            ],
        },
    ],
    "questions": [
        {"id": "q1", "question": "What do I drink?", "evidence": ["t3"], "category": "pref"},
        {"id": "q2", "question": "Greeting?", "asked_at": 1740819600, "evidence": ["t1"]},
    ],
}


def seconds(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_each_turn_becomes_a_memory_with_its_date_kind_and_importance():
    evalset = load_dataset(GOOD, OFFLINE)
    t1, t2, t3 = (evalset.store.get(i) for i in ("t1", "t2", "t3"))
    assert (t1.kind, t1.importance) == ("episodic", 5)  # the defaults
    assert (t2.kind, t2.importance) == ("semantic", 7)
    assert t1.created_at == t1.last_accessed == seconds("2025-03-01T09:00:00+00:00")
    assert t3.created_at == datetime(2025, 3, 5, 9, 0, tzinfo=UTC).timestamp()  # +01:00 honoured
    assert t2.superseded_by == "t3"
    assert t3.metadata == {"speaker": "assistant", "session": "s2"}
    assert t1.embedding == pytest.approx(OFFLINE.embed_one("hello there"))


def test_questions_keep_evidence_and_category_and_default_to_the_end_of_the_history():
    q1, q2 = load_dataset(GOOD, OFFLINE).questions
    assert (q1.id, q1.evidence, q1.category) == ("q1", ("t3",), "pref")
    assert q1.asked_at == seconds("2025-03-05T09:00:00+00:00")  # no asked_at: the last turn
    assert (q2.asked_at, q2.category) == (1740819600.0, "all")


def test_the_example_dataset_in_the_repository_loads():
    evalset = load_dataset(EXAMPLE, OFFLINE)
    assert (evalset.name, len(evalset.store), len(evalset.questions)) == (
        "example_conversations",
        7,
        3,
    )


def broken(path: str, value):
    """GOOD with the value at `path` (keys and indexes separated by '/') replaced or deleted."""
    data = copy.deepcopy(GOOD)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    target = data
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return data


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        ("sessions", DELETE, r"'sessions' must be a non-empty list, got None"),
        ("sessions", [], r"'sessions' must be a non-empty list"),
        ("questions", DELETE, r"'questions' must be a non-empty list"),
        ("sessions/0", "s1", r"sessions\[0\] must be an object"),
        ("sessions/0/id", 7, r"sessions\[0\]: 'id' must be a non-empty string, got 7"),
        ("sessions/0/turns", DELETE, r"sessions\[0\]: 'turns' must be a non-empty list"),
        ("sessions/0/turns/1/text", "", r"sessions\[0\]\.turns\[1\]: 'text' must be a non-empty"),
        ("sessions/0/turns/1/id", "t1", r"turn id 't1' is used twice"),
        ("sessions/0/date", "2025-03-01T09:00:00", r"has no time zone; add 'Z'"),
        ("sessions/0/date", "last tuesday", r"sessions\[0\]\.date must be an ISO 8601 date"),
        ("sessions/1/turns/0/date", DELETE, r"turns\[0\] \(id 't3'\) has no 'date'"),
        ("sessions/0/turns/1/kind", "fact", r"turns\[1\]\.kind must be one of episodic"),
        ("sessions/0/turns/1/importance", 11, r"importance must be a number in \[1, 10\], got 11"),
        ("sessions/0/turns/1/importance", True, r"importance must be a number in \[1, 10\]"),
        ("sessions/1/turns/0/supersedes", "t9", r"supersedes names 't9', which is not an earlier"),
        ("sessions/1/turns/0/date", "2025-02-01T09:00:00Z", r"names 't2', which is dated after"),
        ("questions/0/id", "q2", r"question id 'q2' is used twice"),
        ("questions/0/question", None, r"questions\[0\]: 'question' must be a non-empty string"),
        ("questions/0/evidence", [], r"questions\[0\]: 'evidence' must be a non-empty list"),
        ("questions/0/evidence", ["t7"], r"\(id 'q1'\): evidence 't7' is not a turn id"),
        ("questions/1/evidence", ["t3"], r"evidence 't3' is dated after the question is asked"),
        ("sessions/1/turns/0/supersedes", ["t2"], r"supersedes must be a turn id .a non-empty"),
        ("sessions/1/turns/0/supersedes", 2, r"turns\[0\]\.supersedes must be a turn id"),
        ("questions/0/evidence", [["t3"]], r"\(id 'q1'\): evidence must list turn ids .strings"),
        ("questions/0/evidence", [None], r"evidence must list turn ids .strings., got None"),
        ("questions/0/category", ["pref"], r"questions\[0\]: 'category' must be a non-empty"),
        ("sessions/1/turns/0/speaker", {"a": 1}, r"turns\[0\]: 'speaker' must be a non-empty"),
        ("name", ["good"], r"dataset: 'name' must be a non-empty string, got \['good'\]"),
        ("questions/1/asked_at", 1740819600000, r"asked_at 1740819600000 is after the year 9999"),
        ("sessions/0/date", -1e12, r"sessions\[0\]\.date -1000000000000\.0 is before the year 1"),
        ("questions/1/asked_at", 1740819600000, r"looks like milliseconds: divide by 1000"),
    ],
)
def test_a_malformed_dataset_is_refused_naming_the_place_and_the_rule(path, value, match):
    with pytest.raises(DatasetError, match=match):
        load_dataset(broken(path, value), OFFLINE)


def test_a_turn_superseded_twice_is_refused():
    data = copy.deepcopy(GOOD)
    data["sessions"][1]["turns"].append(
        {"id": "t4", "date": "2025-03-06T09:00:00Z", "text": "tea again", "supersedes": "t2"}
    )
    with pytest.raises(DatasetError, match=r"turn 't2' is superseded twice"):
        load_dataset(data, OFFLINE)


def test_the_top_level_must_be_an_object():
    with pytest.raises(DatasetError, match="the top level must be an object, got list"):
        load_dataset([GOOD], OFFLINE)


def test_a_file_that_is_not_json_is_refused_with_its_name_and_line(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text('{"sessions": [\n  {"id": "s1",,}\n]}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"mine\.json is not valid JSON: .* line 2"):
        load_dataset(path, OFFLINE)


def test_a_file_path_loads_like_the_same_dict(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    from_file, from_dict = load_dataset(path, OFFLINE), load_dataset(GOOD, OFFLINE)
    assert [m.to_dict() for m in from_file.store] == [m.to_dict() for m in from_dict.store]
    assert from_file.questions == from_dict.questions


def test_a_file_that_is_not_utf8_text_is_refused_with_its_name(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(DatasetError, match=r"binary\.json is not UTF-8 text: byte 0xff at 0"):
        load_dataset(path, OFFLINE)


def test_one_time_rule_for_memories_and_the_dataset_loader():
    from base import validation
    from evaluation import dataset

    assert dataset.time_problem is validation.time_problem  # no second copy of the range
    assert not hasattr(dataset, "EPOCH_RANGE")
