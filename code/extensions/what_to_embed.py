"""What to embed: keep the turns worth searching, drop the noise, group turns into episodes.

Not every message deserves a vector. "hi", "ok thanks!" and a tool's raw JSON output
have no content a future query would look for, yet each one stored is one more
candidate that can crowd a useful memory out of the top k. So before writing (these
rules are embeddings/worth_embedding.py's, which the chat's write-back follows too):

    skip_reason("ok, thanks!")               -> 'acknowledgement'
    skip_reason('{"status": 200, "rows": 3}') -> 'tool output (JSON)'
    skip_reason("I prefer Groq for the API")  -> None      (worth embedding)

Then there is the size of a memory. One memory per message (turn-level) is simple but
scatters a conversation into fragments; consecutive turns on one subject read better
as one memory (episode-level). `group_episodes` starts a new episode after a pause
(30 minutes by default) or a maximum number of turns; `remember_episodes` stores one
episodic memory per episode. Distilling an episode into standalone facts is the next
step up (extensions/distillation.py).

A turn is a dict: {"role": "user" | "assistant" | "tool", "content": str, "time": seconds}.

Memories are written for the store's user (see Embedder.remember).

Deliberately left out: detecting a change of subject inside a conversation (a model
could).
"""

from __future__ import annotations

from base.validation import as_number, as_timestamp, check_int
from embedding_helpers import Embedder
from embeddings.worth_embedding import (  # noqa: F401  (the rules live in embeddings/, re-exported)
    ACK_WORDS,
    FILLER_WORDS,
    GREETING_WORDS,
    ROLES,
    is_question,
    skip_reason,
    worth_embedding,
)
from memory_store import Memory, MemoryStore

MAX_GAP_MINUTES = 30.0  # a longer pause starts a new episode
MAX_TURNS = 20  # and so does a very long run of turns


def filter_turns(turns: list[dict]) -> tuple[list[dict], list[tuple[dict, str]]]:
    """Split turns into (kept, skipped); each skipped turn comes with its reason."""
    kept, skipped = [], []
    for i, turn in enumerate(check_turns(turns, need_time=False)):
        reason = skip_reason(turn["content"], turn["role"])
        if reason is None:
            kept.append(turn)
        else:
            skipped.append((turns[i], reason))
    return kept, skipped


def group_episodes(
    turns: list[dict], max_gap_minutes: float = MAX_GAP_MINUTES, max_turns: int = MAX_TURNS
) -> list[list[dict]]:
    """Consecutive turns grouped into episodes: a new one after a pause or max_turns.

    Turns must be in time order. Four turns at 0, 5, 10 and 60 minutes with the default
    30-minute gap -> [[t0, t5, t10], [t60]].
    """
    gap = as_number(max_gap_minutes, "max_gap_minutes")
    if gap <= 0:
        raise ValueError(f"max_gap_minutes must be > 0, got {max_gap_minutes!r}")
    check_int(max_turns, "max_turns")
    episodes: list[list[dict]] = []
    previous = None
    for turn in check_turns(turns, need_time=True):
        time = turn["time"]
        if previous is not None and time < previous:
            raise ValueError(
                f"turns must be in time order: {turn['content'][:40]!r} at {time} comes "
                f"after a turn at {previous}"
            )
        pause = previous is not None and (time - previous) / 60.0 > gap  # minutes
        if not episodes or pause or len(episodes[-1]) >= max_turns:
            episodes.append([])
        episodes[-1].append(turn)
        previous = time
    return episodes


def episode_text(episode: list[dict]) -> str:
    """The episode as one text, a line per turn: 'user: ...\\nassistant: ...'."""
    return "\n".join(f"{t['role']}: {t['content'].strip()}" for t in episode)


def remember_episodes(
    store: MemoryStore,
    embedder: Embedder,
    turns: list[dict],
    *,
    importance: float = 5,
    max_gap_minutes: float = MAX_GAP_MINUTES,
) -> list[Memory]:
    """Drop the noise, group the rest into episodes, store one episodic memory per episode.

    Each memory is created at its episode's first turn, with metadata {"turns": n,
    "ended": time of the last turn}.
    """
    kept, _ = filter_turns(turns)
    memories = []
    with store.transaction():  # every episode of the conversation, or none
        for episode in group_episodes(kept, max_gap_minutes):
            metadata = {"turns": len(episode), "ended": episode[-1]["time"]}
            memories.append(
                embedder.remember(
                    store,
                    episode_text(episode),
                    kind="episodic",
                    importance=importance,
                    now=episode[0]["time"],
                    metadata=metadata,
                )
            )
    return memories


def check_turns(turns, need_time: bool) -> list[dict]:
    """Validate the turn dicts; times come back as epoch seconds."""
    if isinstance(turns, (str, dict)) or not isinstance(turns, list):
        raise TypeError(f"turns must be a list of dicts, got {type(turns).__name__}")
    checked = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            raise ValueError(f"turns[{i}] must be a dict with a 'content' string, got {turn!r}")
        role = turn.get("role", "user")
        if not isinstance(role, str) or role not in ROLES:
            raise ValueError(
                f"turns[{i}] has an unknown role {role!r}; roles are {', '.join(ROLES)}"
            )
        turn = {**turn, "role": role}
        if need_time:
            if "time" not in turn:
                raise ValueError(f"turns[{i}] needs a 'time' (epoch seconds) to be grouped")
            turn["time"] = as_timestamp(turn["time"], f"turns[{i}]['time']")
        checked.append(turn)
    return checked
