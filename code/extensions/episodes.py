"""Episode memories: consecutive turns of a conversation recalled as one memory.

The course's notebooks store each turn as its own memory. On real conversations
(LoCoMo's tuning half, docs/evaluation.md) a memory of EPISODE_TURNS consecutive turns
is found more often (R@10 .815 against .698 for single turns): a turn's neighbours say
what it is about ("Yes, every Sunday!" answers the turn before it). The chat's
`--items episode` (MEMORY_LAB_ITEMS=episode) stores memories this way:

    turn 1  "I live in Lisbon with my partner"   -> m1, folded into episode m2 = m1
    turn 2  "My sister plays the cello"          -> m3, episode m4 = m1 + m3 (m2 replaced)
    turn 3  "I drive a blue Toyota"              -> m5, episode m6 = m1 + m3 + m5
    turn 4  "We adopted a cat"                   -> m7, a new episode m8 = m7

Each turn is still written as a memory of its own first (extensions/write_back.py:
classified, rated, and compared with what is stored, so "I moved to Bristol" still
supersedes the episode that says "I live in Lisbon", and the episode's other turns are
kept as a note of their own, as a combined fact's are). Then the turn is folded into the
open episode: a new version of the episode, its text the episode's turns one per line,
supersedes both the turn and the episode's previous version. Every version stays stored
as history; retrieval sees only the newest, so what is recalled is one memory an
episode. An episode is open while it has fewer than EPISODE_TURNS turns and its last
turn is at most EPISODE_GAP_MINUTES old (30: a pause starts a new episode, as
extensions/what_to_embed.py's group_episodes does for a whole conversation at once).

Costs, per turn: one more embedding (the episode's text, up to three turns long) and two
more rows (the episode's new version, and the turn kept as history); live memories are
about a third as many. A fact inside an episode is superseded with the whole episode,
its other turns split off as a note; consolidation (extensions/consolidation.py) sees
an episode's mixed topics as one memory.

Deliberately left out: grouping by topic (a turn joins the episode it follows, whatever
it is about), and episodes of the assistant's replies (only what was written back).
"""

from __future__ import annotations

from base.validation import as_timestamp
from embedding_helpers import Embedder
from extensions.superseding import FACT_KINDS
from extensions.what_to_embed import MAX_GAP_MINUTES
from memory_store import Memory, MemoryStore

EPISODE_TURNS = 3  # turns an episode holds: evaluation/locomo.py's, tuned there
EPISODE_GAP_MINUTES = MAX_GAP_MINUTES  # a longer pause starts a new episode (what_to_embed's)
EPISODE_KEY = "episode_of"  # metadata: the ids of the turns an episode holds, in order
ITEMS = ("turn", "episode")  # what the chat stores as one recalled memory


def open_episode(store: MemoryStore, now: float) -> Memory | None:
    """The live episode a turn said at `now` joins, or None when a new one starts."""
    latest = None
    for memory in store.live():
        if EPISODE_KEY in memory.metadata and (
            latest is None or memory.metadata["episode_last"] > latest.metadata["episode_last"]
        ):
            latest = memory
    if latest is None or len(latest.metadata[EPISODE_KEY]) >= EPISODE_TURNS:
        return None
    if now - latest.metadata["episode_last"] > EPISODE_GAP_MINUTES * 60:
        return None
    return latest


def fold_into_episode(store: MemoryStore, embedder: Embedder, turn: Memory, now) -> Memory:
    """Fold the turn just written into the open episode (or start one); returns the episode.

    The new episode version supersedes the turn and the episode's previous version, all
    in one transaction. A turn already superseded (it was replaced in the same write) is
    left alone and returned as it is.
    """
    now = as_timestamp(now, "now")
    if turn.superseded_by is not None:
        return turn
    episode = open_episode(store, now)
    parts = [] if episode is None else [episode]
    turns = [*(episode.metadata[EPISODE_KEY] if episode else []), turn.id]
    texts = [m.text for m in (*parts, turn)]
    kinds = {m.kind for m in (*parts, turn)}
    # a fact inside keeps the episode replaceable (write_back compares facts and skills)
    kind = next((k for k in FACT_KINDS if k in kinds), turn.kind)
    metadata = {
        EPISODE_KEY: turns,
        "episode_last": now,
        **({"role": turn.metadata["role"]} if "role" in turn.metadata else {}),
    }
    with store.transaction():
        folded = embedder.memory(
            store.next_id(),
            "\n".join(texts),
            kind=kind,
            importance=max(m.importance for m in (*parts, turn)),
            now=episode.created_at if episode else turn.created_at,  # the episode's start
            metadata=metadata,
            user_id=turn.user_id,
        )
        folded.last_accessed = now
        store.add(folded)
        for old in (*parts, turn):
            store.supersede(old.id, folded.id)
    return folded
