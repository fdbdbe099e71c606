"""forgetting.py: only old, trivial, never-recalled live episodes go; dry runs change nothing."""

from __future__ import annotations

import pytest

from conftest import DAY, NOW
from extensions.forgetting import forgettable, keep_reasons, prune
from memory_store import Memory, MemoryStore


def make(memory_id, days_ago, importance=2, kind="episodic", recalled_days_ago=None):
    created = NOW - days_ago * DAY
    accessed = created if recalled_days_ago is None else NOW - recalled_days_ago * DAY
    return Memory(
        memory_id,
        f"memory {memory_id}",
        kind=kind,
        created_at=created,
        last_accessed=accessed,
        importance=importance,
        embedding=[1.0, 0.0],
    )


@pytest.fixture
def store():
    store = MemoryStore()
    for memory in (
        make("stale", days_ago=200),  # old, trivial, never recalled: goes
        make("stale_too", days_ago=365, importance=1),  # goes
        make("young", days_ago=100),  # too recent
        make("important", days_ago=200, importance=3),  # 3 is not below 3
        make("recalled", days_ago=200, recalled_days_ago=150),  # someone needed it
        make("fact", days_ago=400, importance=1, kind="semantic"),  # facts are not pruned
        make("skill", days_ago=400, importance=1, kind="procedural"),
    ):
        store.add(memory)
    return store


def test_only_old_unimportant_never_recalled_episodes_are_forgettable(store):
    assert [m.id for m in forgettable(store, NOW)] == ["stale", "stale_too"]


def test_prune_removes_them_and_returns_them_for_archiving(store):
    gone = prune(store, NOW)
    assert [m.id for m in gone] == ["stale", "stale_too"]
    assert all(isinstance(m, Memory) for m in gone)
    assert "stale" not in store and "stale_too" not in store
    assert len(store) == 5


def test_a_dry_run_shows_the_same_list_and_removes_nothing(store):
    planned = prune(store, NOW, dry_run=True)
    assert len(store) == 7
    assert [m.id for m in planned] == [m.id for m in prune(store, NOW)]


@pytest.mark.parametrize(
    ("memory_id", "reason"),
    [
        ("young", "days old"),
        ("important", "importance 3 is not below 3"),
        ("recalled", "recalled since"),
        ("fact", "semantic"),
        ("skill", "procedural"),
    ],
)
def test_every_kept_memory_says_why(store, memory_id, reason):
    reasons = keep_reasons(store.get(memory_id), NOW)
    assert len(reasons) == 1 and reason in reasons[0]
    assert keep_reasons(store.get("stale"), NOW) == []


@pytest.mark.parametrize(
    ("days", "below", "expected"),
    [
        (180, 3, ["stale", "stale_too"]),
        (300, 3, ["stale_too"]),
        (180, 2, ["stale_too"]),
        (50, 3, ["stale", "stale_too", "young"]),
        (180, 1, []),
    ],
)
def test_the_thresholds_are_configurable(store, days, below, expected):
    found = forgettable(store, NOW, older_than_days=days, importance_below=below)
    assert [m.id for m in found] == expected


def test_exactly_180_days_old_is_not_yet_old():
    store = MemoryStore()
    store.add(make("edge", days_ago=180))
    assert forgettable(store, NOW) == []
    assert [m.id for m in forgettable(store, NOW + 1)] == ["edge"]


def test_archived_evidence_and_the_memory_it_links_to_are_kept():
    store = MemoryStore()
    store.add(make("new", days_ago=300, importance=1))
    store.add(make("old", days_ago=400, importance=1))
    store.supersede("old", "new")  # "old" is now evidence; "new" is linked to
    reasons = {m.id: keep_reasons(m, NOW, linked=frozenset({"new"})) for m in store}
    assert "another memory names it" in reasons["new"][0]
    assert "evidence for 'new'" in reasons["old"][0]
    assert prune(store, NOW) == []
    assert len(store) == 2


def test_an_empty_store_has_nothing_to_forget():
    assert prune(MemoryStore(), NOW) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"older_than_days": -1}, ValueError, "older_than_days must be >= 0"),
        ({"older_than_days": "180"}, TypeError, "older_than_days must be a number"),
        ({"importance_below": 0.3}, ValueError, "on a 0-1 scale that is 3 here"),
        ({"importance_below": 11}, ValueError, r"must be in \[1, 10\]"),
        ({"importance_below": float("nan")}, ValueError, "importance_below must be a finite"),
    ],
)
def test_bad_thresholds_are_refused_before_anything_is_removed(store, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        prune(store, NOW, **kwargs)
    assert len(store) == 7


def test_prune_refuses_something_that_is_not_a_store():
    with pytest.raises(TypeError, match="MemoryStore"):
        prune([], NOW)


def test_a_store_mixing_two_users_is_refused_before_anything_is_removed():
    store = MemoryStore(user_id=None)  # the many-user store under the index
    for memory_id, user in (("a1", "alice"), ("b1", "bob")):
        memory = make(memory_id, days_ago=400, importance=1)
        memory.user_id = user
        store.add(memory)
    with pytest.raises(ValueError, match=r"2 users \('alice', 'bob'\)"):
        prune(store, NOW)
    assert len(store) == 2


def test_a_bad_now_is_refused_even_when_there_is_nothing_to_prune():
    with pytest.raises(TypeError, match="now must be epoch seconds"):
        prune(MemoryStore(), "yesterday")


def test_keep_reasons_needs_a_memory():
    with pytest.raises(TypeError, match="memory must be a Memory, got str"):
        keep_reasons("stale", NOW)


@pytest.mark.parametrize("answer", [1, None, "yes", [True]])
def test_a_rule_that_answers_no_bool_is_refused_naming_should_forget(store, monkeypatch, answer):
    from extensions import forgetting

    monkeypatch.setattr(forgetting, "should_forget", lambda *args: answer)
    with pytest.raises(TypeError, match="should_forget must return True or False"):
        forgettable(store, NOW)
    assert len(store) == 7  # nothing removed on a rule that cannot be read


def test_the_learner_rule_decides_and_the_store_keeps_what_is_linked(store, monkeypatch):
    from extensions import forgetting

    monkeypatch.setattr(forgetting, "should_forget", lambda memory, *args: memory.id != "fact")
    assert "fact" not in [m.id for m in forgettable(store, NOW)]
    assert len(forgettable(store, NOW)) == 6  # every other memory, as this rule says


def test_keep_reasons_explains_the_learner_rule_not_its_own(store, monkeypatch):
    from extensions import forgetting

    def keeps_the_young_only(memory, now, days, below):  # a rule that ignores all but age
        return now - memory.created_at > days * DAY

    monkeypatch.setattr(forgetting, "should_forget", keeps_the_young_only)
    assert keep_reasons(store.get("fact"), NOW) == []  # this rule lets a fact go
    assert keep_reasons(store.get("important"), NOW) == []
    reasons = keep_reasons(store.get("young"), NOW)
    assert len(reasons) == 1 and "days old" in reasons[0]


def test_a_rule_that_keeps_everything_is_said_to_keep_it(store, monkeypatch):
    from extensions import forgetting

    monkeypatch.setattr(forgetting, "should_forget", lambda *args: False)
    assert keep_reasons(store.get("stale"), NOW) == [
        "your should_forget keeps it (it keeps even a memory no rule protects)"
    ]


def test_should_forget_cannot_be_answered_by_keep_reasons(store, monkeypatch):
    from extensions import forgetting

    def delegates(memory, now, days, below):
        return not keep_reasons(memory, now, older_than_days=days, importance_below=below)

    monkeypatch.setattr(forgetting, "should_forget", delegates)
    with pytest.raises(RuntimeError, match="cannot be should_forget's answer"):
        keep_reasons(store.get("stale"), NOW)
    with pytest.raises(RuntimeError, match="cannot be should_forget's answer"):
        forgettable(store, NOW)
