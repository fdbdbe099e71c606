"""Facts that change: a new fact replaces an old one, and the old one becomes history.

A semantic memory states something believed true now ("Eric prefers Groq for the
default API"). When the user changes their mind, the old statement is not a weak
signal to be outranked: it is wrong, and recalling it would make the assistant
contradict the user. So the old memory is *superseded*: it stays in the store (the
history is worth keeping: when did the preference change, and from what?) with
`superseded_by` naming its replacement, and retrieval never returns it again.

    update = remember_fact(store, embedder, "Eric now prefers OpenAI for the default API", now)
    update.replaced        # the old Groq fact, now superseded_by=update.memory.id
    fact_history(store, update.memory.id)   # [old Groq fact, new OpenAI fact]

Which old fact does a new one replace? `likely_replaced` asks the learner's
`fact_to_replace` (code/practice/exercises.py, notebook 07b's exercise) about every
memory of the store, with its similarity to the new fact: two statements about the same
subject ("default API") are similar whether they agree or not. Until it is written,
`replaces="auto"` says "not implemented yet" and names it. Similarity cannot tell a
contradiction from a repetition, so the threshold is a judgement call that depends on the
embedding model (0.6 suits the offline bag of words); pass `replaces=` explicitly when you
know.

A store holding several users' memories is refused: one user's new fact must never
supersede another user's.

Deliberately left out: asking a model whether two facts really contradict, and
choosing a user inside a shared store (open one user's store instead).
"""

from __future__ import annotations

from typing import NamedTuple

from base.links import link_rule
from base.unwritten import runs_on_learner_code
from base.validation import as_number, as_timestamp, check_ids, check_kind, check_text
from embedding_helpers import Embedder
from memory_store import Memory, MemoryStore, check_store
from practice.exercises import fact_to_replace
from scoring import relevance_score

FACT_KINDS = ("semantic", "procedural")  # statements that can stop being true
REPLACE_MIN_SIMILARITY = 0.6  # cosine; for the offline bag of words, "shares most words"


@link_rule
def replaced_points_here(memories: dict[str, Memory], memory: Memory) -> list[str]:
    """A fact that replaces another (metadata "replaces") is what the old one points to.

    Checked by every store at every commit and when a file is opened, so a replacement
    written half (the new fact stored, the old one still live) is refused:
        replaced_points_here({"m1": <m1 live>, "m2": <m2 replaces m1>}, <m2>)
            -> ["memory 'm2' replaces 'm1', but 'm1' is still live"]
    """
    replaced = memory.metadata.get("replaces")
    old = memories.get(replaced) if isinstance(replaced, str) else None
    if old is None or old.superseded_by == memory.id:
        return []
    return [f"memory {memory.id!r} replaces {old.id!r}, but {old.id!r} is {linked(old)}"]


def linked(memory: Memory) -> str:
    """How a memory stands in its history: 'still live' or "superseded by 'm2'"."""
    if memory.superseded_by is None:
        return "still live"
    return f"superseded by {memory.superseded_by!r}"


class FactUpdate(NamedTuple):
    """What remember_fact did: the new memory, and the one it replaced (or None)."""

    memory: Memory
    replaced: Memory | None


@runs_on_learner_code
def likely_replaced(
    store: MemoryStore,
    embedding,
    *,
    min_similarity: float = REPLACE_MIN_SIMILARITY,
    exclude: tuple[str, ...] | str = (),
) -> Memory | None:
    """The fact your fact_to_replace picks for a new fact with this `embedding`, or None.

    Every memory of the store but `exclude` is a candidate, in store order (stored later:
    newer), with its cosine to `embedding`; which of them may be replaced, and which one
    wins, is the rule of fact_to_replace (code/practice/exercises.py, notebook 07b).

        likely_replaced(store, embedder.embed_one("Eric now prefers OpenAI for the API"))
            -> Memory(id='m1', kind='semantic', ..., text='Eric prefers Groq for the ...')
    """
    threshold = as_number(min_similarity, "min_similarity")
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"min_similarity must be a cosine in [-1, 1], got {min_similarity!r}")
    check_store(store).check_one_user(
        "finding the fact a new one replaces"
    )  # never another user's fact
    embedding = store.check_query(embedding)  # checked even when no fact is a candidate
    exclude = {exclude} if isinstance(exclude, str) else set(check_ids(exclude, "exclude"))
    memories = {m.id: m for m in store if m.id not in exclude}
    candidates = [
        {
            "id": m.id,
            "user": m.user_id,
            "kind": m.kind,
            "similarity": relevance_score(embedding, m.embedding),
            "superseded": m.superseded_by is not None,
        }
        for m in memories.values()
    ]
    owner = next(iter(memories.values())).user_id if memories else store.user_id
    found = fact_to_replace(owner, candidates, threshold)
    if found is not None and (not isinstance(found, str) or found not in memories):
        raise TypeError(
            f"fact_to_replace must return one candidate's id or None, got {found!r} "
            "(code/practice/exercises.py, notebook 07b's exercise)"
        )
    return None if found is None else memories[found]


def replace_fact(
    store: MemoryStore,
    embedder: Embedder,
    old_id: str,
    text: str,
    now,
    *,
    importance: float | None = None,
    metadata: dict | None = None,
    kind: str | None = None,
    allow_event: bool = False,
) -> Memory:
    """Store `text` as the new version of the fact or skill `old_id`, superseding it.

    The old memory keeps everything it had, plus superseded_by = the new id; the new
    one records metadata["replaces"] = old_id and keeps the old one's kind (a changed
    practice is still a skill) unless `kind` says otherwise. Importance defaults to the
    old fact's. An event is never replaced, except one that itself told of a change (the
    caller says so with event_told_a_change=True: "I moved to York in January", stored
    as an event, is the home fact "I relocated to Harrogate" replaces).
    Checked before anything is written, so a refused replacement changes nothing.

        replace_fact(store, embedder, "m1", "Eric now prefers OpenAI for the default API",
                     now).id -> 'm2'    (and store.get('m1').superseded_by == 'm2')
    """
    _check_fact_text(text)
    now = as_timestamp(now, "now")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict or None, got {type(metadata).__name__}")
    if kind is not None:
        check_kind(kind)
    old = check_store(store).get(old_id)
    if old.kind not in FACT_KINDS and not allow_event:
        raise ValueError(
            f"memory {old_id!r} is {old.kind}: an event stays true once it happened, so it is "
            "never replaced; only semantic or procedural memories can be superseded"
        )
    if old.superseded_by is not None:
        current = current_version(store, old_id)
        raise ValueError(
            f"memory {old_id!r} was already replaced by {old.superseded_by!r}; replace the "
            f"current version {current.id!r} instead"
        )
    with store.transaction():  # all or nothing: never two live versions of one fact
        current = store.reread(old_id)  # the store's row now: another process may have
        if current is None or current.superseded_by is not None:  # replaced it meanwhile
            state = (
                "is no longer stored"
                if current is None
                else (f"was already replaced by {current.superseded_by!r}")
            )
            raise ValueError(
                f"memory {old_id!r} {state} (by another process, since this store read "
                "it); nothing was written: reopen the store and replace the current version"
            )
        new = embedder.remember(
            store,
            text,
            kind=kind or (old.kind if old.kind in FACT_KINDS else "semantic"),  # a practice
            # that changed is still procedural; an event's new version is a fact
            importance=old.importance if importance is None else importance,
            now=now,
            metadata={**(metadata or {}), "replaces": old_id},
            user_id=old.user_id,  # a fact's new version belongs to the same person
        )
        store.supersede(old_id, new.id)
    return new


def remember_fact(
    store: MemoryStore,
    embedder: Embedder,
    text: str,
    now,
    *,
    importance: float | None = None,
    replaces: str | None = "auto",
    min_similarity: float = REPLACE_MIN_SIMILARITY,
) -> FactUpdate:
    """Store a semantic fact, superseding the fact it replaces.

    Inputs:
        replaces: "auto" finds the most similar live fact (likely_replaced), an id
            replaces that memory, None only adds the new fact.
        importance: 1-10; default: the replaced fact's, or 5 for a new one.
        min_similarity: the threshold for "auto".
    Returns:
        FactUpdate(memory=the new memory, replaced=the superseded one or None).
    """
    _check_fact_text(text)
    now = as_timestamp(now, "now")
    if replaces == "auto":
        found = likely_replaced(store, embedder.query(store, text), min_similarity=min_similarity)
        replaces = None if found is None else found.id
    if replaces is None:
        importance = 5 if importance is None else importance
        memory = embedder.remember(store, text, kind="semantic", importance=importance, now=now)
        return FactUpdate(memory, None)
    new = replace_fact(store, embedder, replaces, text, now, importance=importance)
    return FactUpdate(new, store.get(replaces))


def current_version(store: MemoryStore, memory_id: str) -> Memory:
    """Follow superseded_by links from `memory_id` to the memory that is live today."""
    memory, seen = store.get(memory_id), {memory_id}
    while memory.superseded_by is not None:
        if memory.superseded_by in seen:  # only possible if links were edited by hand
            raise ValueError(f"superseded_by links form a cycle through {memory.superseded_by!r}")
        seen.add(memory.superseded_by)
        memory = store.get(memory.superseded_by)
    return memory


def fact_history(store: MemoryStore, memory_id: str) -> list[Memory]:
    """Every version of a fact, oldest first, ending with the live one.

    Starts from any version (old or current), walks forward to the current one, then
    gathers every memory whose superseded_by chain leads there (a consolidated fact
    also lists the episodes it replaced). Sorted by created_at, then store order.

        [m.id for m in fact_history(store, "m1")] -> ['m1', 'm2', 'm3']
    """
    current = current_version(store, memory_id)
    order = {m.id: i for i, m in enumerate(store)}
    versions, frontier = [current], [current.id]
    while frontier:
        target = frontier.pop()
        for memory in store:
            if memory.superseded_by == target:
                versions.append(memory)
                frontier.append(memory.id)
    return sorted(versions, key=lambda m: (m is current, m.created_at, order[m.id]))


def _check_fact_text(text) -> None:
    check_text(text, "a fact")
