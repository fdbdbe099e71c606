"""What notebooks 06a and 06b share: the assistant as shipped, its broken twins, the table.

    from teaching.failure_demos import DEFAULT, ask, assistant, show_ranking
    wrong = ask(store, "what should I cook tonight?", now, settings=assistant(1), k=2)
    show_ranking(store, "what should I cook tonight?", now, settings=assistant(1))

`DEFAULT` is the assistant as shipped: the offline chat model, the default embedding (the
hybrid of notebook 02), weights (1, 1, 1), 0.995 per hour, k = 3. `assistant(n)` is
failure n's assistant: the same with one setting changed. Which setting is the puzzle of
the failure, so the notebooks never print it before the learner's prediction; the answer
key is `teaching.checks.failure_modes.FAILURES`. `show_ranking` prints what an assistant
ranked by: one row per note, the three signals and the score, from the learner's own
`rank_memories` (which changes nothing). `other_team_block` and `other_team_reply` are
failure 6's second assistant, whose prompt shows the recalled notes differently.

Deliberately left out: the stores (built in the notebooks, where the learner can change
them) and any scoring of its own.
"""

from __future__ import annotations

from dataclasses import replace

from base.validation import as_timestamp
from chat_with_memory import build_messages, chat_with_memory
from config import Settings
from embedding_helpers import Embedder
from llm import gateway
from llm.memory_block import memory_item, render_items, render_memory_block
from memory_store import Memory, MemoryStore
from teaching.checks.core import learner_function
from teaching.checks.failure_modes import FAILURES

DEFAULT = replace(Settings(), db_path=None)  # offline, the default embedding, nothing on disk
_EMBEDDERS: dict[str, Embedder] = {}


def assistant(number: int) -> Settings:
    """The assistant of failure `number`: DEFAULT with that failure's one wrong setting."""
    if number not in FAILURES:
        raise ValueError(f"notebooks 06a-06b have failures 1-{len(FAILURES)}, got {number!r}")
    return replace(DEFAULT, **FAILURES[number].broken)


def embedder_for(store: MemoryStore, settings: Settings = DEFAULT) -> Embedder:
    """The Embedder of the store's own model (the settings' model for an empty store)."""
    model = store.embedding_model or settings.embed_model
    if model not in _EMBEDDERS:
        _EMBEDDERS[model] = Embedder(model, settings.api_base, settings.timeout)
    return _EMBEDDERS[model]


def ask(store: MemoryStore, message: str, now, settings: Settings = DEFAULT, **kwargs):
    """One turn of the provided chat loop, printed; kwargs go to chat_with_memory (k, ...)."""
    embedder = embedder_for(store, settings)
    result = chat_with_memory(
        message, store, now=now, settings=settings, embedder=embedder, **kwargs
    )
    print(f"you> {message}\nassistant> {result.reply}\n")
    return result


def show_ranking(store: MemoryStore, message: str, now, settings: Settings = DEFAULT) -> None:
    """Print the table behind the assistant's decision, best first."""
    rank_memories = learner_function("rank_memories")
    query = embedder_for(store, settings).query(store, message)
    rows = rank_memories(
        store, query, now, weights=settings.weights, decay_rate=settings.decay_rate
    )
    print("      rel   rec   imp  score")
    for row in rows:
        print(
            f"{row.memory.id:3} {row.relevance:5.2f} {row.recency:5.2f} {row.importance:5.2f}"
            f" {row.score:6.2f}   {row.memory.text}"
        )


# --- failure 6: another team's assistant, same store, same retriever ----------------------

HIDDEN_FIELDS = ("written", "age")


def other_team_block(memories: list[Memory], now) -> str:
    """The memory block the other team's assistant puts in its prompt."""
    now = as_timestamp(now, "now")
    items = [memory_item(memory, now) for memory in memories]
    return render_items([{k: v for k, v in i.items() if k not in HIDDEN_FIELDS} for i in items])


def other_team_messages(message: str, memories: list[Memory], now) -> list[dict]:
    """The other team's prompt: the provided one, with its memory block swapped."""
    messages = build_messages(message, memories, now)
    ours = render_memory_block(memories, now)
    messages[0]["content"] = messages[0]["content"].replace(ours, other_team_block(memories, now))
    return messages


def other_team_reply(message: str, memories: list[Memory], now) -> str:
    """What the offline chat model answers when given the other team's prompt."""
    return gateway.complete(DEFAULT.chat_model, other_team_messages(message, memories, now))
