"""Reflection: which repeated episodes add up to one durable fact.  (Optional milestone 8.)

After the fifth "debugged the connection pool leak again", the single episodes matter
less than the lesson they add up to. Reflection finds those groups; consolidation
(extensions/consolidation.py) then writes one fact per group and archives its episodes.
This file decides only *which* memories belong together:

    only live episodes        facts and skills are durable already, and an archived
                              (superseded) memory is evidence, never material again
    in the order given        a pass from the first memory to the last, each memory
                              joining the group it is most similar to *on average*
                              (the mean cosine to the group's members so far), if
                              that mean reaches min_similarity, or starting a new one;
                              of two groups equally similar, the older one wins
    big enough                a group counts once it has min_size members (5 by
                              default: "five episodes about the same thing")

Worked example, min_similarity 0.4: episode A starts group 1; B has cosine 0.9 with A,
so it joins (mean 0.9); C has cosines 0.5 with A and 0.2 with B, a mean of 0.35, below
0.4: C starts group 2. With min_size 2 the answer is [["A", "B"]]: group 2 is too small.

Deliberately left out: writing the facts (consolidation's summariser) and scheduling.
"""

from __future__ import annotations

from base.validation import as_number, check_int
from memory_store import Memory
from scoring import relevance_score

MIN_GROUP_SIZE = 5  # "five episodes about the same thing become one fact"
GROUP_MIN_SIMILARITY = 0.4  # mean cosine to the group; offline: about half the words


def reflection_groups(
    memories: list[Memory],
    min_similarity: float = GROUP_MIN_SIMILARITY,
    min_size: int = MIN_GROUP_SIZE,
) -> list[list[str]]:
    """The ids of every group of at least `min_size` related live episodes.

    Inputs:
        memories: Memory objects of one user, in store order (oldest first).
        min_similarity: the mean cosine to a group's members a memory needs to join it,
            in [-1, 1]; reaching it is enough.
        min_size: the fewest members a group needs to be returned, at least 2.
    Returns:
        a list of groups, each a list of memory ids in the order given; the groups in
        the order their first member was given. Facts ("semantic"), skills
        ("procedural") and superseded memories are in no group.

    Example:
        reflection_groups(five_leaks + [one_fact]) -> [["m1", "m2", "m3", "m4", "m5"]]
    """
    if isinstance(memories, (str, bytes, dict, Memory)) or not hasattr(memories, "__iter__"):
        raise TypeError(f"memories must be a list of Memory objects, got {type(memories).__name__}")
    memories = list(memories)
    for i, memory in enumerate(memories):
        if not isinstance(memory, Memory):
            raise TypeError(f"memories[{i}] must be a Memory, got {type(memory).__name__}")
    min_size = check_int(min_size, "min_size", 2, "a group")
    min_similarity = as_number(min_similarity, "min_similarity")
    if not -1.0 <= min_similarity <= 1.0:
        raise ValueError(f"min_similarity must be a cosine in [-1, 1], got {min_similarity!r}")
    # TODO: optional Milestone 8. `memories` is a list of Memory objects now, `min_size` an
    # int >= 2 and `min_similarity` a float in [-1, 1]. Walk the memories in the order
    # given; skip every one that is not an episode (kind "episodic") or is superseded
    # (superseded_by is set). Each episode joins the group whose members it is most
    # similar to on average (relevance_score, the cosine of Milestone 2, of the two
    # embeddings), if that average reaches min_similarity; otherwise it starts a group
    # of its own. Return the ids of the groups that reached min_size, in the order the
    # groups were started. Pitfalls: "reaches" includes equal; a tie between two groups
    # goes to the older one; a group too small is left out, not returned half-way.
    ### BEGIN SOLUTION
    groups: list[list[Memory]] = []
    for episode in memories:
        if episode.kind != "episodic" or episode.superseded_by is not None:
            continue
        best, best_mean = None, min_similarity
        for group in groups:
            mean = sum(relevance_score(episode.embedding, m.embedding) for m in group)
            mean /= len(group)
            if mean > best_mean or (best is None and mean == min_similarity):
                best, best_mean = group, mean
        if best is None:
            groups.append([episode])
        else:
            best.append(episode)
    return [[m.id for m in group] for group in groups if len(group) >= min_size]
    ### END SOLUTION
