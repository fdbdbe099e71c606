"""Which chat model an extension asks, with the settings that go with it.

Rating importance, summarising a cluster and distilling an episode can each use a
language model. They all decide the same way: an explicit `model=` wins; otherwise the
configured MEMORY_LAB_CHAT_MODEL is used, together with MEMORY_LAB_API_BASE and
MEMORY_LAB_TIMEOUT (so a local Ollama server works for the extensions exactly as it
does for the chat loop). A model of the lab's own provider ("memorylab/...", see
config.is_offline) is the offline stand-in, which answers chat but is not a rater,
summariser or distiller: the extensions use their own deterministic offline versions
instead.

    model, kwargs = resolve_chat_model(None)     # ('memorylab/offline-chat', {...})
    is_offline(model)                            # True: use the offline version
    ask(model, "Rate this memory ...", **kwargs) # the reply text, through litellm

Deliberately left out: prompts and parsing (each extension owns its own).
"""

from __future__ import annotations

from typing import Any

from base.validation import check_text
from config import is_offline, load_settings

__all__ = ["ask", "is_offline", "resolve_chat_model"]  # is_offline: config.py's, asked here


def resolve_chat_model(model: str | None = None, **model_kwargs: Any) -> tuple[str, dict]:
    """(model, call keyword arguments): the given model, else the configured one.

    api_base and timeout come from the settings unless model_kwargs sets them.
    """
    settings = load_settings()
    if model is None:
        model = settings.chat_model
    check_text(model, "model", "a non-empty string or None")
    kwargs = {"api_base": settings.api_base, "timeout": settings.timeout, **model_kwargs}
    return model, kwargs


def ask(model: str, prompt: str, **kwargs: Any) -> str:
    """Send one user message to `model` through litellm and return the reply text.

    Raises llm.gateway.ModelCallError (a RuntimeError) when the model cannot be reached.
    """
    from llm.gateway import complete  # imports litellm: only when a real model is asked

    return complete(model, [{"role": "user", "content": prompt}], **kwargs)
