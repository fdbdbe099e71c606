"""base/links.py: the superseded_by rules, the order a batch is linked in, features' own rules."""

from __future__ import annotations

import pytest

from base import links
from base.links import link_order, link_problems, link_rule
from memory_store import Memory, MemoryStore


def memory(memory_id: str, **metadata) -> Memory:
    return Memory(memory_id, f"text of {memory_id}", embedding=[1.0, 0.0], metadata=metadata)


@pytest.mark.parametrize(
    ("links_", "expected"),
    [
        ({}, []),
        ({"a": "b"}, [("a", "b")]),
        ({"a": "b", "b": "c"}, [("a", "b"), ("b", "c")]),  # a -> b while b is still live
        ({"b": "c", "a": "b"}, [("a", "b"), ("b", "c")]),  # whatever order they come in
    ],
)
def test_links_are_made_before_their_replacement_is_itself_replaced(links_, expected):
    assert link_order(links_, known="abc") == expected


def test_a_circle_of_links_is_refused_naming_its_ids():
    with pytest.raises(ValueError, match="go round in a circle: a, b"):
        link_order({"a": "b", "b": "a"}, known="ab")


def test_a_link_to_a_memory_nobody_knows_is_refused():
    with pytest.raises(ValueError, match="'a' says it is superseded by 'zz', which is neither"):
        link_order({"a": "zz"}, known="a")


def test_a_dangling_link_and_a_cycle_are_both_named():
    a, b, c = memory("a"), memory("b"), memory("c")
    object.__setattr__(a, "superseded_by", "zz")  # as a damaged file could hold them
    object.__setattr__(b, "superseded_by", "c")
    object.__setattr__(c, "superseded_by", "b")
    problems = link_problems({"a": a, "b": b, "c": c})
    assert problems == [
        "memory 'a' is superseded by 'zz', which is not stored",
        "superseded_by links go round in a circle: b -> c -> b",
    ]


def test_a_registered_feature_rule_is_checked_when_a_transaction_ends(monkeypatch):
    monkeypatch.setattr(links, "LINK_RULES", [])  # this test's rule only

    @link_rule
    def pinned_stays_live(memories, m):
        return [f"{m.id!r} is pinned"] if m.metadata.get("pinned") and m.superseded_by else []

    link_rule(pinned_stays_live)  # registering twice keeps one
    assert [rule.__name__ for rule in links.LINK_RULES] == ["pinned_stays_live"]
    store = MemoryStore()
    store.add(memory("m1", pinned=True))
    store.add(memory("m2"))
    with pytest.raises(ValueError, match="'m1' is pinned"), store.transaction():
        store.supersede("m1", "m2")
    assert store.get("m1").superseded_by is None  # rolled back


def test_superseding_and_consolidation_register_their_rules():
    from extensions.consolidation import evidence_archived_under_its_fact
    from extensions.superseding import replaced_points_here

    assert {replaced_points_here, evidence_archived_under_its_fact} <= set(links.LINK_RULES)
