"""The rules of links between memories: superseded_by chains, and what features add to them.

A memory may name the memory that replaced it (`superseded_by`). Every store keeps two
rules about those links at every commit, and checks them again when a file is opened:

    - superseded_by names a stored memory (no dangling link);
    - following superseded_by always ends at a live memory (no cycle).

Features that write links of their own register a rule for them with `link_rule`:
consolidation's "every episode of a fact's evidence is archived under it"
(extensions/consolidation.py) and superseding's "the fact a new one replaces points
to it" (extensions/superseding.py). A rule takes (id -> memory, one memory) and returns
that memory's problems as sentences; link_problems runs them all.

    link_problems({"a": <a superseded by "b">})  -> ["memory 'a' is superseded by 'b', ..."]
    link_order({"a": "b", "b": "c"})             -> [("a", "b"), ("b", "c")]

Memories are read by their attributes only (id, superseded_by, metadata), so this module
needs nothing else of code/. Deliberately left out: changing any memory (the stores do).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

LinkRule = Callable[[dict[str, Any], Any], list[str]]  # (id -> memory, memory) -> problems
LINK_RULES: list[LinkRule] = []  # the rules features registered


def link_rule(rule: LinkRule) -> LinkRule:
    """Register a feature's rule about its links (once), so every store checks it."""
    if rule not in LINK_RULES:
        LINK_RULES.append(rule)
    return rule


def feature_problems(memories: dict[str, Any], memory: Any) -> list[str]:
    """The registered rules' problems for one memory (what a single add checks)."""
    return [problem for rule in LINK_RULES for problem in rule(memories, memory)]


def link_problems(memories: dict[str, Any]) -> list[str]:
    """What is wrong with the links between `memories` (id -> memory); [] when nothing."""
    problems = [
        f"memory {m.id!r} is superseded by {m.superseded_by!r}, which is not stored"
        for m in memories.values()
        if m.superseded_by is not None and m.superseded_by not in memories
    ]
    walked: set[str] = set()  # ids whose chain has been followed already: O(n) in all
    for first in memories:
        path: list[str] = []
        current = first
        while current is not None and current in memories and current not in walked:
            if current in path:  # came back round: a -> b -> a
                loop = [*path[path.index(current) :], current]
                problems.append("superseded_by links go round in a circle: " + " -> ".join(loop))
                break
            path.append(current)
            current = memories[current].superseded_by
        walked.update(path)
    for memory in memories.values():
        problems.extend(feature_problems(memories, memory))
    return problems


def touched_link_problems(memories: Mapping[str, Any], memory_id: str) -> list[str]:
    """The problems of one memory's links: dangling, a circle through it, its features' rules.

    Reads only `memory_id`, the chain it starts and what its rules name, so a store can
    check the memories a change touched without reading the others (`memories` may be a
    view that looks each id up in a database).
    """
    memory = memories.get(memory_id)
    if memory is None:
        return []
    if memory.superseded_by is not None and memory.superseded_by not in memories:
        return [
            f"memory {memory.id!r} is superseded by {memory.superseded_by!r}, which is not stored"
        ]
    path, current = [memory_id], memory.superseded_by
    while current is not None:
        if current in path:  # came back round: a -> b -> a
            loop = [*path[path.index(current) :], current]
            return ["superseded_by links go round in a circle: " + " -> ".join(loop)]
        following = memories.get(current)
        if following is None:
            break  # dangling further on: that memory's own check names it
        path.append(current)
        current = following.superseded_by
    return feature_problems(memories, memory)


def link_order(links: dict[str, str], known: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The links old -> new in an order each can be made: a -> b before b -> c.

    Superseding needs the replacement live, so b -> c (which retires b) comes after every
    link to b. Raises ValueError naming the ids when a link names a memory neither in
    `links` nor `known`, or when the links go round in a circle.
    """
    known = set(known)
    for old, new in links.items():
        if new not in known and new not in links:
            raise ValueError(
                f"memory {old!r} says it is superseded by {new!r}, which is neither in the "
                "store nor in this batch"
            )
    waiting = Counter(links.values())  # how many links still point at each memory
    ready = [old for old in links if not waiting[old]]  # nobody waits to link to them
    order = []
    while ready:
        old = ready.pop()
        new = links[old]
        order.append((old, new))
        waiting[new] -= 1
        if not waiting[new] and new in links:
            ready.append(new)
    if len(order) < len(links):
        stuck = ", ".join(sorted(set(links) - {old for old, _ in order}))
        raise ValueError(f"superseded_by links go round in a circle: {stuck}")
    return order
