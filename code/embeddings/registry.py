"""The offline embedding models by name: the one place where a model's name is read.

A store records its model's name, and settings give one (MEMORY_LAB_EMBED_MODEL). This
module turns such a name into the model object, once, and everything else asks it:

    offline_model("memorylab/hashed-bow-384")   -> HashedWords(384)
    offline_model("memorylab/minilm-l6-v2")     -> MiniLM()
    offline_model("memorylab/minilm-words-1616") -> Hybrid(MiniLM(), HashedWords(1616), mix=0.5)
    offline_model("text-embedding-3-small")     -> None: a real model, litellm calls it
    offline_model("memorylab/hashed-bow-4")     -> ValueError: ... with N from 8 to 65536 ...
    offline_model("memorylab/minilm-bow-256")   -> ValueError: the default until its retirement;
                                                   re-embed with python code/run.py reembed
    is_offline("memorylab/offline-chat")        -> True: the lab's own provider (config.py)

A new offline model is one class (model.py says what it has) and one line in MODELS.

Deliberately left out: the models themselves (hashed_words.py, minilm.py, hybrid.py) and
real models (llm/gateway.py reaches them through litellm).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from config import OFFLINE_EMBED_MODEL, TOY_EMBED_MODEL, is_offline
from embeddings import hashed_words, minilm
from embeddings.hashed_words import HashedWords
from embeddings.hybrid import MAX_DIMENSIONS, MIX, NAME, Hybrid
from embeddings.minilm import MiniLM
from embeddings.model import OfflineModel

__all__ = ["MODELS", "Entry", "is_offline", "offline_model"]


@dataclass(frozen=True)
class Entry:
    """One line of the registry: a name, what the model captures, and how to make it.

    A name ending in "N" stands for every size in `sizes`: make(N) makes that size.
    """

    name: str  # "memorylab/minilm-l6-v2", or "memorylab/hashed-bow-N"
    captures: str  # for the error that lists the models: "meaning", "words", ...
    make: Callable[..., OfflineModel]
    sizes: range | None = None
    example: str = ""  # a name to suggest after a bad size


MODELS = (
    Entry(
        NAME + "N",
        "meaning and words",
        lambda n: Hybrid(MiniLM(), HashedWords(n), MIX),
        range(8, MAX_DIMENSIONS - minilm.DIMENSIONS + 1),
        OFFLINE_EMBED_MODEL,
    ),
    Entry(minilm.MODEL_NAME, "meaning", MiniLM),
    Entry("memorylab/hashed-bow-N", "words", HashedWords, hashed_words.SIZES, TOY_EMBED_MODEL),
)


# Families the lab made once and makes no more: their stores are re-embedded, not read.
RETIRED = {
    "memorylab/minilm-bow-": "the default before the embedding was tuned on real conversations",
}
REEMBED_COMMAND = "python code/run.py reembed"


def offline_model(name: str) -> OfflineModel | None:
    """The offline model `name` stands for; None for any other (a real model's) name.

    A name of the lab's provider ("memorylab/...") that is no offline embedding model is
    a ValueError naming the rule it broke, so a typo fails when the model is chosen; a
    retired model's name says how to re-embed its store.
    """
    if not is_offline(name):
        return None
    for prefix, what in RETIRED.items():
        if name.startswith(prefix):
            raise ValueError(
                f"{name} is retired: it was {what}, and its vectors are no longer made. "
                f"Re-embed its store with today's {OFFLINE_EMBED_MODEL}: {REEMBED_COMMAND}"
            )
    for entry in MODELS:
        if entry.sizes is None:
            if name == entry.name:
                return entry.make()
            continue
        prefix = entry.name[:-1]  # "memorylab/hashed-bow-"
        if name.startswith(prefix):
            size = name[len(prefix) :]
            canonical = size.isascii() and size.isdigit() and str(int(size)) == size  # no "064"
            if not canonical or int(size) not in entry.sizes:
                raise ValueError(
                    f"unknown offline embedding model {name!r}: expected {entry.name} with N "
                    f"from {entry.sizes[0]} to {entry.sizes[-1]}, e.g. {entry.example}"
                )
            return entry.make(int(size))
    raise ValueError(
        f"unknown offline embedding model {name!r}: the offline models are {_listing()}"
    )


def _listing() -> str:
    """'A (meaning and words, N from 8 to 1616; the default is ...), B (meaning) and C (...)'."""
    described = []
    for entry in MODELS:
        about = entry.captures
        if entry.sizes is not None:
            about += f", N from {entry.sizes[0]} to {entry.sizes[-1]}"
        if entry.example == OFFLINE_EMBED_MODEL:
            about += f"; the default is {OFFLINE_EMBED_MODEL}"
        described.append(f"{entry.name} ({about})")
    return ", ".join(described[:-1]) + " and " + described[-1]
