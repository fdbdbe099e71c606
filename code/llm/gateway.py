"""Calling models through litellm, and the offline models that stand in for real ones.

Every call to a real chat or embedding model goes through litellm. The offline models are
local: the offline chat function and the offline embedding model objects
(embeddings/registry.py). The lab calls them directly (`complete` and the Embedder do),
so an offline turn never imports litellm; they are also registered with litellm as the
custom provider "memorylab", so litellm's own calls reach the very same functions:

    memorylab/offline-chat      a rule-based assistant that answers *only* from the
                                memories injected into its prompt (llm/offline_chat.py)
    memorylab/minilm-words-1616 the default embedding: all-MiniLM-L6-v2 in numpy joined
                                with hashed words (embeddings/hybrid.py)
    memorylab/minilm-l6-v2      the sentence model alone (embeddings/minilm.py)
    memorylab/hashed-bow-384    a bag-of-words embedding (embeddings/hashed_words.py)

litellm is imported lazily, on the first call to a real model (or one with litellm's own
arguments, `mock_response=`), with its model cost map read from the installed package
(LITELLM_LOCAL_MODEL_COST_MAP) so that importing it never touches the network. It takes
seconds to import and delays the process's exit, which is why the offline models, scoring
and retrieval never import it.

Deliberately left out: prompts (chat_with_memory.py, llm/memory_block.py) and settings
(config.py).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Sequence
from typing import Any

from base.redaction import redact
from base.validation import as_vector
from config import OFFLINE_CHAT_MODEL, PROVIDER, is_offline
from embeddings.registry import offline_model
from llm.offline_chat import offline_reply

_litellm = None  # the module, once imported and set up


class ModelCallError(RuntimeError):
    """A chat or embedding model could not be reached or gave no usable answer.

    The message names the model and what to check (its key, MEMORY_LAB_API_BASE, or the
    setting to unset to go back offline), with every secret redacted (base/redaction.py):
    it is safe to print, store or export. Every model call of the lab raises this and
    only this, so a caller that falls back to an offline answer catches exactly it,
    never a learner's NotImplementedError (also a RuntimeError).
    """


@contextlib.contextmanager
def _quiet_litellm_types():
    """Silence one known, harmless warning that litellm's types raise while being built.

    subtle: pydantic builds some of litellm's response types lazily, on their first use
    (inside a completion or embedding call), and warns that a TypedDict uses `ReadOnly`.
    Unfiltered it reaches a learner's notebook, and under `-W error` it fails the call.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
        yield


def load_litellm():
    """Import litellm offline-safe and register the "memorylab" provider (once)."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
        with _quiet_litellm_types():
            import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True  # no "Give Feedback" banners on errors
        handler = _make_handler(litellm)
        litellm.custom_provider_map = [
            item for item in litellm.custom_provider_map if item.get("provider") != PROVIDER
        ] + [{"provider": PROVIDER, "custom_handler": handler}]
        _litellm = litellm
    return _litellm


def complete(
    model: str,
    messages: list[dict],
    api_base: str | None = None,
    timeout: float = 60.0,
    **kwargs: Any,
) -> str:
    """Send chat `messages` to `model` through litellm and return the reply text.

    Extra keyword arguments go to litellm.completion unchanged; tests pass
    `mock_response="..."` to exercise a real provider's path with no network.

    The offline chat model is called directly, as the offline embedding models are
    (embedding_helpers.py): importing litellm takes seconds, and its teardown delays the
    process's exit, for a reply the lab makes itself in a millisecond. litellm is imported
    only for a real model, or when extra keyword arguments are litellm's to read
    (`mock_response=`); the handler registered with litellm gives the same reply (a test
    holds the two paths together).
    """
    if is_offline(model) and not kwargs:
        return offline_complete(model, messages)
    litellm = load_litellm()
    if api_base:
        kwargs["api_base"] = api_base
    try:
        with _quiet_litellm_types():
            response = litellm.completion(model=model, messages=messages, timeout=timeout, **kwargs)
    except Exception as exc:
        raise ModelCallError(_model_failure("chat", model, exc)) from None  # no raw key in a chain
    content = response.choices[0].message.content
    return content if isinstance(content, str) else ""


def offline_complete(model: str, messages: list[dict]) -> str:
    """The offline chat model's reply, without litellm: what the "memorylab" handler returns."""
    name = _lab_name(model)
    if name != OFFLINE_CHAT_MODEL:
        error = ValueError(
            f"unknown offline chat model {model!r}; the offline chat model is "
            f"{OFFLINE_CHAT_MODEL!r}"
        )
        raise ModelCallError(_model_failure("chat", model, error))
    return offline_reply(messages)


def embed(
    model: str, texts: Sequence[str], api_base: str | None = None, timeout: float = 60.0, **kwargs
) -> list[tuple[float, ...]]:
    """Embed `texts` with `model` through litellm: one vector (tuple of floats) per text."""
    litellm = load_litellm()
    if api_base:
        kwargs["api_base"] = api_base
    try:
        with _quiet_litellm_types():
            response = litellm.embedding(model=model, input=list(texts), timeout=timeout, **kwargs)
    except Exception as exc:
        raise ModelCallError(_model_failure("embedding", model, exc)) from None
    items = sorted(response.data, key=lambda item: _field(item, "index"))
    if len(items) != len(texts):
        raise ModelCallError(
            f"embedding model {model!r} returned {len(items)} vectors for {len(texts)} texts"
        )
    return [as_vector(_field(item, "embedding"), f"{model} embedding") for item in items]


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, dict) else getattr(item, name)


def _model_failure(kind: str, model: str, exc: Exception) -> str:
    """The error message, with every secret redacted (providers often echo the key).

    subtle: the provider's own exception is not chained (`from None`): its message and
    traceback would print the key that this message hides.
    """
    variable = "MEMORY_LAB_CHAT_MODEL" if kind == "chat" else "MEMORY_LAB_EMBED_MODEL"
    return redact(
        f"the {kind} model {model!r} failed: {type(exc).__name__}: {exc}\n"
        f"Check its API key (e.g. OPENAI_API_KEY) or MEMORY_LAB_API_BASE for a local server, "
        f"or unset {variable} to use the offline model."
    )


def _make_handler(litellm):
    """Build the litellm CustomLLM for the "memorylab" provider (needs litellm imported)."""

    class MemoryLabModels(litellm.CustomLLM):
        def completion(self, model, messages, *args, **kwargs):
            name = _lab_name(model)
            if name != OFFLINE_CHAT_MODEL:
                raise ValueError(
                    f"unknown offline chat model {model!r}; the offline chat model is "
                    f"{OFFLINE_CHAT_MODEL!r}"
                )
            reply = offline_reply(messages)  # what offline_complete returns, without litellm
            return litellm.ModelResponse(
                model=name,
                choices=[
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": reply},
                    }
                ],
            )

        async def acompletion(self, model, messages, *args, **kwargs):
            return self.completion(model, messages, *args, **kwargs)

        def embedding(self, model, input, model_response, *args, **kwargs):
            name = _lab_name(model)
            offline = offline_model(name)  # the Embedder's model object: the same vectors
            texts = [input] if isinstance(input, str) else list(input)
            model_response.model = name
            model_response.data = [
                {"object": "embedding", "index": i, "embedding": list(vector)}
                for i, vector in enumerate(offline.embed_documents(texts))
            ]
            return model_response

        async def aembedding(self, model, input, model_response, *args, **kwargs):
            return self.embedding(model, input, model_response, *args, **kwargs)

    return MemoryLabModels()


def _lab_name(model: str) -> str:
    """The full name: litellm hands the handler "offline-chat" (its provider taken off)."""
    return model if is_offline(model) else f"{PROVIDER}/{model}"
