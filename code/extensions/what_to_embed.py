"""What to embed: keep the turns worth searching, drop the noise, group turns into episodes.

Not every message deserves a vector. "hi", "ok thanks!" and a tool's raw JSON output
have no content a future query would look for, yet each one stored is one more
candidate that can crowd a useful memory out of the top k. So before writing, a
turn is judged by two rules: a machine's output (embeddings/worth_embedding.py's
machine_reason), and a person's small talk, which is the learner's `noise_reason`
(code/practice/exercises.py, notebook 07f's exercise). The chat's write-back follows the
same two, and also skips questions (write_back_reason):

    skip_reason("ok, thanks!")               -> 'acknowledgement'   (your noise_reason)
    skip_reason('{"status": 200, "rows": 3}') -> 'tool output (JSON)'
    skip_reason("I prefer Groq for the API")  -> None      (worth embedding)
    write_back_reason("Which city is my home?")  -> 'question'

Until noise_reason is written, skip_reason says "not implemented yet" and names it, and
write_back_reason falls back to the machine rules and questions alone: the chat keeps
working, and stores small talk too until the exercise is done.

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

from base.unwritten import NotWrittenYet, runs_on_learner_code
from base.validation import as_number, as_timestamp, check_int
from embedding_helpers import Embedder
from embeddings.worth_embedding import (  # noqa: F401  (the word lists, re-exported)
    ACK_WORDS,
    FILLER_WORDS,
    GREETING_WORDS,
    ROLES,
    is_question,
    machine_reason,
)
from memory_store import Memory, MemoryStore
from practice.exercises import noise_reason

MAX_GAP_MINUTES = 30.0  # a longer pause starts a new episode
MAX_TURNS = 20  # and so does a very long run of turns
NOISE_REASONS = ("empty", "greeting", "acknowledgement")  # what noise_reason may answer


@runs_on_learner_code
def skip_reason(text: str, role: str = "user") -> str | None:
    """Why `text` should not be stored as a memory, or None if it is worth embedding.

    Reasons: 'tool output (JSON)', 'tool output' (embeddings/worth_embedding.py), and
    your noise_reason's 'empty', 'greeting', 'acknowledgement'.
    """
    reason = machine_reason(text, role)  # checks the text and the role first
    if reason is not None:
        return reason
    said = noise_reason(text)
    if said is not None and said not in NOISE_REASONS:
        raise TypeError(
            f"noise_reason must return one of {', '.join(NOISE_REASONS)} or None, got "
            f"{said!r} for {text[:60]!r} (code/practice/exercises.py, notebook 07f's exercise)"
        )
    return said


def worth_embedding(text: str, role: str = "user") -> bool:
    """True when `text` has content a future query could search for."""
    return skip_reason(text, role) is None


def write_back_reason(text: str, role: str = "user") -> str | None:
    """Why the chat should not store `text`: skip_reason's reasons, or 'question'; else None.

    Before noise_reason is written, only a machine's output and a question are skipped
    (the chat keeps working; small talk is stored until notebook 07f's exercise is done).
    """
    try:
        reason = skip_reason(text, role)
    except NotWrittenYet:
        reason = machine_reason(text, role)
    if reason is None and role == "user" and is_question(text):
        return "question"
    return reason


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
