"""Consolidation: many episodes about one thing become one durable fact.

After the fifth "debugged the connection pool leak again", the individual episodes
matter less than the lesson they add up to. Consolidation finds clusters of related
episodic memories (five or more, by default), writes one semantic memory that states
what they have in common, and archives the episodes: each is superseded by the new
fact, so retrieval returns the fact instead of five near-duplicates, while the
episodes stay in the store as its evidence (the fact's metadata lists their ids, and
superseding.fact_history(store, fact.id) returns them). Specifics fade, the lesson stays.

    for c in consolidate(store, embedder, now):
        print(c.fact.text, c.fact.metadata["evidence"])

Clustering is reflection_groups (code/practice/reflection.py, optional Milestone 8): a greedy
average-link pass in store order, each live episode joining the cluster it is most
similar to on average (cosine of the stored embeddings), if that average reaches
`min_similarity`, or starting a new cluster. It is deterministic and
easy to follow, not optimal. The summary comes from a chat model through litellm when
one is configured; offline, a deterministic summariser quotes the most typical episode.

A cluster never mixes users: in a store holding several users' memories, each user's
episodes are clustered apart, and each fact belongs to the user whose episodes it sums up.

Deliberately left out: scheduling (run it nightly, say).
"""

from __future__ import annotations

from typing import NamedTuple

from base.links import link_rule
from base.redaction import redact
from base.unwritten import runs_on_learner_code
from base.validation import as_number, as_timestamp, check_bool, check_importance, check_int
from embedding_helpers import Embedder
from extensions.model_choice import ask, is_offline, resolve_chat_model
from extensions.superseding import linked
from llm.gateway import ModelCallError
from llm.memory_block import DATA_NOT_INSTRUCTIONS, format_date, render_notes
from memory_store import Memory, MemoryStore
from practice.reflection import reflection_groups
from scoring import relevance_score

MIN_CLUSTER_SIZE = 5  # "five episodes about the same thing become one fact"
CLUSTER_MIN_SIMILARITY = 0.4  # average cosine to the cluster; offline: about half the words
FACT_IMPORTANCE = 6  # the course's 0.6 on a 0-1 scale

SUMMARY_PROMPT = """Below are {n} notes, each about an event in a person's life, that \
seem to concern the same thing. Write ONE standalone sentence stating the durable fact \
or lesson they add up to, readable months from now without the notes. Reply with that \
sentence only.
{data_not_instructions}

{notes}"""


class Consolidation(NamedTuple):
    """One cluster and the fact written for it (fact is None on a dry run)."""

    text: str
    evidence: list[Memory]
    fact: Memory | None
    source: str  # "model" or "offline", and why when a model was not used


@runs_on_learner_code
def find_clusters(
    store: MemoryStore,
    *,
    min_size: int = MIN_CLUSTER_SIZE,
    min_similarity: float = CLUSTER_MIN_SIMILARITY,
) -> list[list[Memory]]:
    """Groups of at least `min_size` related live episodes, each in store order.

    A cluster holds one user's episodes only, even in a store that mixes users. Which
    episodes belong together is decided by reflection_groups (code/practice/reflection.py,
    optional Milestone 8), once per user; until it is written this says so.

    find_clusters(store) -> [[Memory(id='m1', ...), ..., Memory(id='m5', ...)]]  (five leaks)
    """
    if not isinstance(store, MemoryStore):
        raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
    min_size = _check_size(min_size)
    threshold = as_number(min_similarity, "min_similarity")
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"min_similarity must be a cosine in [-1, 1], got {min_similarity!r}")
    memories = list(store)  # store order; reflection_groups skips facts and archived ones
    by_id = {memory.id: memory for memory in memories}
    position = {memory.id: i for i, memory in enumerate(memories)}
    users = dict.fromkeys(memory.user_id for memory in memories)  # in order of appearance
    clusters = [
        [by_id[memory_id] for memory_id in group]
        for user in users  # never merge two people's episodes into one fact
        for group in reflection_groups(
            [m for m in memories if m.user_id == user], threshold, min_size
        )
    ]
    return sorted(clusters, key=lambda cluster: position[cluster[0].id])


def offline_summary(memories: list[Memory]) -> str:
    """A deterministic one-line fact: how often, over what dates, and the typical episode.

    The typical episode is the one most similar on average to the others (ties: earliest).
        -> "Recurring (5 episodes, 2026-03-01 to 2026-03-20): debugged the pool leak again"
    """
    memories = _check_cluster(memories)

    def typicality(m: Memory) -> float:
        return sum(relevance_score(m.embedding, other.embedding) for other in memories)

    typical = max(memories, key=typicality)  # max keeps the first of equal scores
    first = format_date(min(m.created_at for m in memories))[:10]  # the date, no time
    last = format_date(max(m.created_at for m in memories))[:10]
    span = first if first == last else f"{first} to {last}"
    return f"Recurring ({len(memories)} episodes, {span}): {typical.text}"


def summarise_cluster(
    memories: list[Memory], model: str | None = None, **model_kwargs
) -> tuple[str, str]:
    """The fact for a cluster and where it came from: (text, source).

    With a real chat model (model, or MEMORY_LAB_CHAT_MODEL) the model writes it; an
    empty reply or a failing model falls back to offline_summary and says so.
    """
    memories = _check_cluster(memories)
    model, kwargs = resolve_chat_model(model, **model_kwargs)
    if is_offline(model):
        return offline_summary(memories), "offline"
    prompt = SUMMARY_PROMPT.format(  # the chat's escaped block: no note can forge another
        n=len(memories), notes=render_notes(memories), data_not_instructions=DATA_NOT_INSTRUCTIONS
    )
    try:
        reply = ask(model, prompt, **kwargs)
    except ModelCallError as exc:
        reason = redact(str(exc).splitlines()[0])  # stored in metadata: never a key
        return offline_summary(memories), f"offline (model failed: {reason})"
    lines = [line.strip().strip('"').strip() for line in reply.splitlines()]
    sentence = next((line for line in lines if line), "")
    if not sentence:
        return offline_summary(memories), "offline (the model's reply was empty)"
    return sentence, "model"


def consolidate(
    store: MemoryStore,
    embedder: Embedder,
    now,
    *,
    min_size: int = MIN_CLUSTER_SIZE,
    min_similarity: float = CLUSTER_MIN_SIMILARITY,
    importance: float = FACT_IMPORTANCE,
    model: str | None = None,
    dry_run: bool = False,
    **model_kwargs,
) -> list[Consolidation]:
    """Turn every cluster of related episodes into one semantic fact; archive the episodes.

    Inputs:
        store: a one-user MemoryStore; embedder: the store's Embedder.
        now: when the facts are written (epoch seconds or datetime).
        min_size, min_similarity: see find_clusters.
        importance: of each new fact, 1-10.
        model: chat model for the summaries (None: MEMORY_LAB_CHAT_MODEL; offline: the
            deterministic summariser). model_kwargs go to litellm (mock_response=...).
        dry_run: only report what would be written; the store is not changed.
    Returns:
        one Consolidation per cluster. The fact has metadata["evidence"] = the episode
        ids, and every episode has superseded_by = the fact's id.
    Every summary is written (every model call made) before the store changes, and a
    cluster is archived all or nothing: a failure leaves no fact and no dangling link.
    """
    now = as_timestamp(now, "now")
    importance = check_importance(importance)
    check_bool(dry_run, "dry_run")
    if not isinstance(embedder, Embedder):
        raise TypeError(f"embedder must be an Embedder, got {type(embedder).__name__}")
    clusters = find_clusters(store, min_size=min_size, min_similarity=min_similarity)
    summaries = [summarise_cluster(cluster, model, **model_kwargs) for cluster in clusters]
    results = []
    with store.transaction():  # every cluster, or none
        for cluster, (text, source) in zip(clusters, summaries):
            fact = (
                None
                if dry_run
                else _archive(store, embedder, cluster, text, source, importance, now)
            )
            results.append(Consolidation(text, cluster, fact, source))
    return results


def _archive(store, embedder, cluster, text, source, importance, now) -> Memory:
    """Write the fact for `cluster` and supersede its episodes with it; undo all if one fails."""
    evidence = [m.id for m in cluster]
    with store.transaction():  # the fact and every link to it, or nothing
        return _write_fact(store, embedder, cluster, evidence, text, source, importance, now)


def _write_fact(store, embedder, cluster, evidence, text, source, importance, now) -> Memory:
    for memory in cluster:  # checked on the store's current rows, inside the transaction
        current = store.reread(memory.id)
        if current is None or current.superseded_by is not None:
            state = (
                "is no longer stored"
                if current is None
                else (f"is already archived under {current.superseded_by!r}")
            )
            raise ValueError(
                f"episode {memory.id!r} {state} (consolidated or removed by another "
                "process since this store read it?): a cluster is consolidated once, so no "
                "fact was written; reopen the store to see its current memories"
            )
    fact = embedder.remember(
        store,
        text,
        kind="semantic",
        importance=importance,
        now=now,
        metadata={"evidence": evidence, "consolidated": len(evidence), "source": source},
        user_id=cluster[0].user_id,  # the fact belongs to whoever lived the episodes
    )
    for m in cluster:
        store.supersede(m.id, fact.id)  # archived: kept as evidence, never recalled
    return fact


@link_rule
def evidence_archived_under_its_fact(memories: dict[str, Memory], memory: Memory) -> list[str]:
    """Every episode of a consolidated fact's evidence, still stored, is archived under it.

    Checked by every store at every commit and when a file is opened, so a cluster
    archived half (a crash between the fact and its links) is refused, naming the episode.
    """
    evidence = memory.metadata.get("evidence") if "consolidated" in memory.metadata else None
    problems = []
    for episode_id in evidence if isinstance(evidence, list) else ():
        episode = memories.get(episode_id) if isinstance(episode_id, str) else None
        if episode is not None and episode.superseded_by != memory.id:
            problems.append(
                f"memory {episode_id!r} is evidence of the consolidated fact {memory.id!r} "
                f"but is {linked(episode)}, not archived under it"
            )
    return problems


def _check_cluster(memories) -> list[Memory]:
    """`memories` as a non-empty list of Memory objects, or raise naming the first bad one."""
    if isinstance(memories, (str, bytes, dict, Memory)) or not hasattr(memories, "__iter__"):
        raise TypeError(
            f"a cluster must be a list of Memory objects, got {type(memories).__name__}"
        )
    memories = list(memories)
    if not memories:
        raise ValueError("cannot summarise an empty cluster")
    for i, memory in enumerate(memories):
        if not isinstance(memory, Memory):
            raise TypeError(f"cluster[{i}] must be a Memory, got {type(memory).__name__}")
    return memories


def _check_size(min_size) -> int:
    return check_int(min_size, "min_size", 2, "a cluster")
