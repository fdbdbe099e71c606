"""Optional milestones 8 (reflection) and 9 (persistence): their checks teach.

The reference passes every check; each wrong implementation below is a slip a learner
makes, and its check fails showing expected and got and naming that slip. The provided
code that runs on these functions says "not implemented yet ... optional milestone N"
while they are stubs, and the chat's own export never needs them.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest

from base.unwritten import NotWrittenYet
from embedding_helpers import Embedder
from extensions import consolidation
from memory_store import Memory, MemoryStore
from practice import persistence
from practice.persistence import RECORD_FIELDS, memory_from_record, memory_to_record
from practice.reflection import reflection_groups
from scoring import relevance_score
from storage.sqlite_store import PersistentMemoryStore, export_jsonl
from teaching import checks
from teaching.checks import CheckFailed, NotImplementedYet, ladder
from teaching.checks import m8_reflection as m8
from teaching.checks import m9_persistence as m9

CODE = Path(__file__).resolve().parents[2] / "code"
NOW = 1_000_000.0


def stub(name: str, file: str):
    """A stub as the student edition has it: its code object says it lives in code/<file>."""
    namespace: dict = {}
    source = f"def {name}(*args, **kwargs):\n    raise NotImplementedError()\n"
    exec(compile(source, str(CODE / file), "exec"), namespace)
    return namespace[name]


def test_the_reference_passes_every_optional_check(capsys):
    checks.check_reflection_groups()
    checks.check_memory_to_record()
    checks.check_memory_from_record()
    assert capsys.readouterr().out.splitlines() == [
        "reflection_groups: 12 checks passed",
        "memory_to_record: 5 checks passed",
        "memory_from_record: 8 checks passed",
    ]


def test_every_written_out_answer_is_what_the_reference_returns():
    for case in m8.CASES:
        memories = m8.build_memories(case.args[0])
        assert reflection_groups(memories, **case.kwargs) == case.expected, case.call
    for case in m9.TO_RECORD_CASES:
        assert memory_to_record(m9.build_memory(case.args[0])) == case.expected, case.call
    for case in m9.FROM_RECORD_CASES:
        if "raises" not in case.expected:
            memory = memory_from_record(copy.deepcopy(case.args[0]), case.args[1])
            assert memory_to_record(memory) == case.expected, case.call


def test_the_cases_are_plain_json_data():
    for case in [*m8.CASES, *m9.TO_RECORD_CASES, *m9.FROM_RECORD_CASES]:
        plain = json.loads(json.dumps([list(case.args), case.kwargs, case.expected]))
        assert plain == [list(case.args), case.kwargs, case.expected]


def test_every_named_slip_of_reflection_is_a_different_answer_than_the_expected_one():
    for message, answers in m8.MISTAKES.items():
        for index, wrong in answers.items():
            assert wrong != m8.CASES[index].expected, message


# --- reflection_groups: slips --------------------------------------------------------------


def grouping(*, kinds=("episodic",), live=True, strict=False, keep_small=False, link="mean",
             fit="best", tie="older", order=None):  # fmt: skip
    """A reflection_groups with the slips asked for (the defaults give the reference)."""

    def groups_of(memories, min_similarity=0.4, min_size=5):
        groups: list[list[Memory]] = []
        for memory in memories:
            if memory.kind not in kinds or (live and memory.superseded_by is not None):
                continue
            best, best_value = None, None
            for group in groups:
                cosines = [relevance_score(memory.embedding, m.embedding) for m in group]
                value = {"mean": sum(cosines) / len(cosines), "seed": cosines[0],
                         "last": cosines[-1], "max": max(cosines)}[link]  # fmt: skip
                reaches = value > min_similarity if strict else value >= min_similarity
                if not reaches:
                    continue
                if fit == "first":
                    best = best or group
                    continue
                better = best is None or value > best_value
                if tie == "newer" and best is not None and value == best_value:
                    better = True
                if better:
                    best, best_value = group, value
            if best is None:
                groups.append([memory])
            else:
                best.append(memory)
        out = [[m.id for m in g] for g in groups if keep_small or len(g) >= min_size]
        if order == "size":
            out.sort(key=len, reverse=True)
        elif order == "members":
            out = [sorted(g) for g in out]
        elif order == "random":
            out = [random.sample(g, len(g)) for g in out]
        return out

    return groups_of


ALL_KINDS = ("episodic", "semantic", "procedural")


@pytest.mark.parametrize(
    ("mistake", "wrong"),
    [
        (m8.FACTS_GROUPED, grouping(kinds=ALL_KINDS)),
        (m8.ARCHIVED_GROUPED, grouping(live=False)),
        (m8.STRICT, grouping(strict=True)),
        (m8.TOO_SMALL, grouping(keep_small=True)),
        (m8.GROUPS_REORDERED, grouping(order="size")),
        (m8.MEMBERS_REORDERED, grouping(order="members")),
        (m8.SEED_ONLY, grouping(link="seed")),
        (m8.LAST_ONLY, grouping(link="last")),
        (m8.MAX_LINK, grouping(link="max")),
        (m8.NEWER_WINS, grouping(tie="newer")),
    ],
)
def test_a_wrong_reflection_fails_naming_its_slip(mistake, wrong):
    assert grouping()(m8.build_memories(m8.CASES[6].args[0]), 0.5, 2) == [["b", "d"]]
    with pytest.raises(CheckFailed) as failed:
        checks.check_reflection_groups(wrong)
    message = str(failed.value)
    assert "expected:" in message and "got:" in message
    assert mistake in message
    assert "code/practice/reflection.py, optional Milestone 8 (07d_consolidation.ipynb)" in message


def test_the_first_fit_slip_is_named():
    with pytest.raises(CheckFailed) as failed:
        checks.check_reflection_groups(grouping(fit="first"))
    assert m8.FIRST_FIT in str(failed.value)


def test_an_answer_that_changes_between_calls_is_caught():
    calls = iter(range(1000))

    def unstable(memories, min_similarity=0.4, min_size=5):
        right = grouping()(memories, min_similarity, min_size)
        return right if next(calls) % 2 == 0 else [list(reversed(g)) for g in right]

    with pytest.raises(CheckFailed, match="changed between two calls"):
        checks.check_reflection_groups(unstable)


def test_memories_instead_of_ids_are_named():
    def objects(memories, min_similarity=0.4, min_size=5):
        by_id = {m.id: m for m in memories}
        return [[by_id[i] for i in g] for g in grouping()(memories, min_similarity, min_size)]

    with pytest.raises(CheckFailed, match="memory ids"):
        checks.check_reflection_groups(objects)


# --- memory_to_record / memory_from_record: slips --------------------------------------------


def to_record(**slip):
    def wrong(memory):
        record = {name: getattr(memory, name) for name in RECORD_FIELDS}
        record["embedding"] = [float(x) for x in memory.embedding]
        record["metadata"] = copy.deepcopy(memory.metadata)
        if slip.get("rounded"):
            record["last_accessed"] = round(memory.last_accessed, 3)
            record["created_at"] = round(memory.created_at, 3)
        if slip.get("through_str"):
            record["embedding"] = [float(str(np.float32(x))) for x in memory.embedding]
        if slip.get("vector"):
            record["embedding"] = memory.embedding
        if slip.get("numpy"):
            record["embedding"] = np.array(list(memory.embedding))
        if slip.get("numpy_items"):
            record["embedding"] = list(np.array(list(memory.embedding), dtype=np.float32))
        if slip.get("drop_none"):
            record = {k: v for k, v in record.items() if v is not None}
        if slip.get("shared"):
            record["metadata"] = memory.metadata
        if slip.get("shallow"):
            record["metadata"] = dict(memory.metadata)
        if slip.get("created"):
            record["last_accessed"] = memory.created_at
        return record

    return wrong


@pytest.mark.parametrize(
    ("mistake", "slip"),
    [
        (m9.ROUNDED, "rounded"),
        (m9.ROUNDED, "through_str"),
        (m9.EMBEDDING_NOT_LIST, "vector"),
        (m9.EMBEDDING_NUMPY, "numpy"),
        (m9.EMBEDDING_NUMPY, "numpy_items"),
        (m9.NONE_DROPPED, "drop_none"),
        (m9.METADATA_SHARED, "shared"),
        (m9.METADATA_SHALLOW, "shallow"),
        (m9.LAST_AS_CREATED, "created"),
    ],
)
def test_a_wrong_memory_to_record_fails_naming_its_slip(mistake, slip):
    with pytest.raises(CheckFailed) as failed:
        checks.check_memory_to_record(to_record(**{slip: True}))
    message = str(failed.value)
    assert mistake in message and "expected:" in message
    assert "code/practice/persistence.py, optional Milestone 9 (07h_persistence.ipynb)" in message


def from_record(**slip):
    def wrong(record, user_id):
        if slip.get("key_error"):
            values = {name: record[name] for name in RECORD_FIELDS}
        else:
            values = {name: record.get(name) for name in RECORD_FIELDS}
            if not slip.get("fill_in") and any(n not in record for n in RECORD_FIELDS):
                raise ValueError(f"missing {[n for n in RECORD_FIELDS if n not in record]}")
        if not slip.get("extra") and set(record) - set(RECORD_FIELDS):
            raise ValueError(f"unknown {sorted(set(record) - set(RECORD_FIELDS))}")
        if not slip.get("any_user") and record.get("user_id") != user_id:
            if slip.get("vague"):
                raise ValueError("wrong user")
            raise ValueError(f"{record.get('user_id')!r} is not {user_id!r}")
        if slip.get("early"):
            return Memory(**{**values, "metadata": copy.deepcopy(values["metadata"])})
        metadata = record["metadata"] if slip.get("shared") else copy.deepcopy(values["metadata"])
        last = values.pop("last_accessed")
        memory = Memory(**{**values, "metadata": metadata, "last_accessed": values["created_at"]})
        if last is not None:
            memory.last_accessed = last
        return memory

    return wrong


@pytest.mark.parametrize(
    ("mistake", "slip"),
    [
        (m9.OTHER_USER, "any_user"),
        (m9.FILLED_IN, "fill_in"),
        (m9.KEY_ERROR, "key_error"),
        (m9.EXTRA_ACCEPTED, "extra"),
        (m9.EARLY_REFUSED, "early"),
        (m9.RECORD_SHARED, "shared"),
        ("the message does not name bob, alice", "vague"),
    ],
)
def test_a_wrong_memory_from_record_fails_naming_its_slip(mistake, slip):
    assert from_record()(m9.fields(), "alice") is not None  # the slip-free one is right
    checks.check_memory_from_record(from_record())
    with pytest.raises(CheckFailed) as failed:
        checks.check_memory_from_record(from_record(**{slip: True}))
    assert mistake in str(failed.value)


@pytest.mark.parametrize(
    ("check", "where"),
    [
        (checks.check_reflection_groups, "code/practice/reflection.py, optional Milestone 8"),
        (checks.check_memory_to_record, "code/practice/persistence.py, optional Milestone 9"),
        (checks.check_memory_from_record, "code/practice/persistence.py, optional Milestone 9"),
    ],
)
def test_a_stub_is_reported_as_not_implemented_with_its_file_and_optional_milestone(check, where):
    def unwritten(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotImplementedYet, match=where):
        check(unwritten)


# --- the predictions' hint ladders ------------------------------------------------------------


@pytest.fixture(autouse=True)
def fresh_ladder():
    ladder.reset()
    yield
    ladder.reset()


def test_the_group_prediction_climbs_the_ladder_and_shows_the_answer_only_on_request(capsys):
    with pytest.raises(CheckFailed) as first:
        checks.check_groups_prediction([["a", "b", "d"], ["c"]])
    assert "below min_size" in str(first.value) and "next step" not in str(first.value)
    assert "['a', 'b', 'd']]" not in str(first.value).split("\n", 1)[1]
    with pytest.raises(CheckFailed) as second:
        checks.check_groups_prediction([["a", "b"]])
    assert "next step" in str(second.value) and "reveal=True" in str(second.value)
    with pytest.raises(CheckFailed, match=r"the answer, as asked: \[\['a', 'b', 'd'\]\]"):
        checks.check_groups_prediction(None, reveal=True)
    checks.check_groups_prediction([["a", "b", "d"]])
    assert "as the answer said" in capsys.readouterr().out


def test_the_refusal_prediction_climbs_the_ladder(capsys):
    with pytest.raises(CheckFailed) as first:
        checks.check_refusal_prediction({"r2", "r3", "r4"})
    assert "1 of yours would be accepted" in str(first.value)
    assert "r4" not in str(first.value).split("\n", 1)[1]  # not which one, yet
    with pytest.raises(CheckFailed, match="next step: look again at r3"):
        checks.check_refusal_prediction({"r2"})
    with pytest.raises(CheckFailed, match="r4: accepted"):
        checks.check_refusal_prediction(set(), reveal=True)
    checks.check_refusal_prediction(["r3", "r2"])
    assert "prediction right" in capsys.readouterr().out


# --- the provided code that runs on them -------------------------------------------------------


def leak_store() -> tuple[MemoryStore, Embedder]:
    embedder = Embedder("memorylab/hashed-bow-384")
    store = MemoryStore()
    for i in range(5):
        embedder.remember(store, "the connection pool leaked again", now=NOW - i * 3600)
    return store, embedder


def test_consolidation_says_which_optional_milestone_it_waits_for(monkeypatch):
    monkeypatch.setattr(
        consolidation, "reflection_groups", stub("reflection_groups", "practice/reflection.py")
    )
    store, embedder = leak_store()
    with pytest.raises(
        NotWrittenYet,
        match="reflection_groups; open code/practice/reflection.py, optional Milestone 8",
    ):
        consolidation.consolidate(store, embedder, NOW)
    assert all(m.superseded_by is None for m in store)  # nothing was written


def test_consolidation_groups_with_the_learners_function(monkeypatch):
    store, embedder = leak_store()
    seen = []

    def spy(memories, min_similarity, min_size):
        seen.append([m.id for m in memories])
        return reflection_groups(memories, min_similarity, min_size)

    monkeypatch.setattr(consolidation, "reflection_groups", spy)
    (done,) = consolidation.consolidate(store, embedder, NOW)
    assert seen == [[m.id for m in done.evidence]]
    assert done.fact.metadata["evidence"] == ["m1", "m2", "m3", "m4", "m5"]


def test_the_chats_export_needs_no_learner_function(monkeypatch, tmp_path):
    monkeypatch.setattr(
        persistence, "memory_to_record", stub("memory_to_record", "practice/persistence.py")
    )
    store, _ = leak_store()
    assert export_jsonl(store, tmp_path / "chat.jsonl") == 5  # storage's own: Memory.to_dict
    with pytest.raises(
        NotWrittenYet,
        match="memory_to_record; open code/practice/persistence.py, optional Milestone 9",
    ):
        persistence.export_jsonl(store, tmp_path / "mine.jsonl")
    assert not (tmp_path / "mine.jsonl").exists()  # no half file


def test_import_waits_for_memory_from_record(monkeypatch):
    monkeypatch.setattr(
        persistence, "memory_from_record", stub("memory_from_record", "practice/persistence.py")
    )
    line = json.dumps(memory_to_record(leak_store()[0].get("m1")))
    with pytest.raises(NotWrittenYet, match="optional Milestone 9"):
        persistence.import_jsonl(MemoryStore(), io.StringIO(line))


def test_a_round_trip_through_a_file_keeps_every_field_exactly(tmp_path):
    store, _ = leak_store()
    path = tmp_path / "db.sqlite3"
    with PersistentMemoryStore(path, user_id="default") as saved:
        for memory in store:
            saved.add(memory)
        early = saved.get("m2")
        early.last_accessed = early.created_at - 0.5  # a recall a moment early (two clocks)
        saved.get("m3").metadata = {"nested": {"ids": ["é", 1e-300]}, "n": 1 / 3}
        saved.supersede("m2", "m5")  # an older memory archived under a newer one
    with PersistentMemoryStore(path, user_id="default") as saved:
        assert persistence.export_jsonl(saved, tmp_path / "out.jsonl") == 5
        before = [memory_to_record(m) for m in saved]
    with PersistentMemoryStore(tmp_path / "moved.sqlite3", user_id="default") as moved:
        assert persistence.import_jsonl(moved, tmp_path / "out.jsonl") == 5
    with PersistentMemoryStore(tmp_path / "moved.sqlite3", user_id="default") as moved:
        assert [memory_to_record(m) for m in moved] == before


def test_an_import_is_all_or_nothing_and_names_the_bad_line(tmp_path):
    store, _ = leak_store()
    lines = [json.dumps(memory_to_record(m)) for m in store]
    bad = json.loads(lines[2])
    bad["user_id"] = "bob"
    lines[2] = json.dumps(bad)
    target = MemoryStore()
    with pytest.raises(ValueError, match="line 3: .*'bob'.*'default'.*nothing was imported"):
        persistence.import_jsonl(target, io.StringIO("\n".join(lines)))
    assert len(target) == 0
    with pytest.raises(ValueError, match="line 1: "):
        persistence.import_jsonl(target, io.StringIO("{not json\n"))
    with pytest.raises(TypeError, match="source must be"):
        persistence.import_jsonl(target, 5)


def test_an_export_whose_record_is_not_json_is_refused_naming_the_memory(tmp_path, monkeypatch):
    store, _ = leak_store()
    monkeypatch.setattr(persistence, "memory_to_record", to_record(numpy=True))
    with pytest.raises(TypeError, match="record of memory 'm1' is not JSON data"):
        persistence.export_jsonl(store, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_memory_from_record_refuses_with_the_value_and_the_rule():
    record = memory_to_record(leak_store()[0].get("m1"))
    with pytest.raises(ValueError, match="'default', not 'alice'"):
        memory_from_record(record, "alice")
    with pytest.raises(ValueError, match="lacks field.*embedding"):
        memory_from_record({k: v for k, v in record.items() if k != "embedding"}, "default")
    with pytest.raises(ValueError, match="unknown field.*score"):
        memory_from_record({**record, "score": 1}, "default")
    with pytest.raises(ValueError, match="kind"):
        memory_from_record({**record, "kind": "fact"}, "default")
    with pytest.raises(TypeError, match="a record must be a dict"):
        memory_from_record([record], "default")


def test_progress_lists_the_optional_milestones_apart():
    from teaching.milestones import MILESTONES
    from teaching.progress import Outcome, report

    outcomes = [Outcome(name, "pass", "checks passed") for name in MILESTONES]
    outcomes[list(MILESTONES).index("reflection_groups")] = Outcome(
        "reflection_groups", "todo", "not implemented yet"
    )
    text = report(outcomes)
    assert "All 5 milestones pass." in text
    assert "Optional milestones: 4 of 5 functions pass." in text
    assert (
        "Optional: implement reflection_groups in code/practice/reflection.py, optional "
        "Milestone 8 (07d_consolidation.ipynb)." in text
    )
    assert "optional Milestone 8  reflection_groups" in text


def test_an_empty_prediction_asks_for_one_without_stopping_the_notebook(capsys):
    checks.check_groups_prediction(None)
    checks.check_refusal_prediction(None)
    out = capsys.readouterr().out
    assert "no prediction yet: set my_groups" in out and "no prediction yet: set my_refused" in out
    assert ladder.tries("07d.groups") == ladder.tries("07h.refused") == 0


def test_the_records_fields_are_the_memorys_in_the_check_and_the_learners_file():
    # one source: the provided Memory's fields; the learner's RECORD_FIELDS is a copy to
    # read, which the check never imports (an edited copy must not move what it expects)
    assert m9.FIELDS == tuple(f.name for f in dataclasses.fields(Memory)) == RECORD_FIELDS
    source = ast.parse(Path(m9.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(source) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(source) if isinstance(n, ast.Import) for a in n.names}
    assert not any(name.split(".")[0] == "practice" for name in imported if name), imported


@pytest.mark.parametrize(
    ("link", "not_said"),
    [("max", m8.LAST_ONLY), ("last", m8.MAX_LINK), ("seed", m8.MAX_LINK)],
)
def test_a_link_slip_is_not_named_as_another_that_gives_the_same_answer_once(link, not_said):
    with pytest.raises(CheckFailed) as failed:
        checks.check_reflection_groups(grouping(link=link))
    assert not_said not in str(failed.value)
