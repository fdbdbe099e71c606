"""model_choice.py: an explicit model wins, else the configured one with its server and timeout."""

from __future__ import annotations

import pytest

from extensions.importance_rating import rate_importance
from extensions.model_choice import ask, is_offline, resolve_chat_model


def test_with_nothing_configured_the_offline_model_is_chosen():
    model, kwargs = resolve_chat_model()
    assert model == "memorylab/offline-chat" and is_offline(model)
    assert kwargs == {"api_base": None, "timeout": 60.0}


def test_the_configured_model_brings_its_server_and_timeout(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_CHAT_MODEL", "ollama/llama3.2")
    monkeypatch.setenv("MEMORY_LAB_API_BASE", "http://localhost:11434")
    monkeypatch.setenv("MEMORY_LAB_TIMEOUT", "5")
    model, kwargs = resolve_chat_model(None, mock_response="7")
    assert (model, is_offline(model)) == ("ollama/llama3.2", False)
    assert kwargs == {"api_base": "http://localhost:11434", "timeout": 5.0, "mock_response": "7"}


def test_an_explicit_model_and_explicit_arguments_win(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_CHAT_MODEL", "ollama/llama3.2")
    model, kwargs = resolve_chat_model("openai/gpt-4o-mini", timeout=2)
    assert model == "openai/gpt-4o-mini" and kwargs["timeout"] == 2


@pytest.mark.parametrize(("bad", "error"), [("", ValueError), (42, TypeError)])
def test_a_bad_model_name_is_refused(bad, error):
    with pytest.raises(error, match="model must be a non-empty string"):
        resolve_chat_model(bad)


@pytest.mark.slow
def test_ask_sends_one_user_message_through_litellm():
    assert ask("openai/gpt-4o-mini", "rate this", mock_response="6") == "6"


@pytest.mark.needs_milestones(6)  # its reply is read by parse_importance
@pytest.mark.slow
def test_the_extensions_use_the_configured_model(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_CHAT_MODEL", "openai/gpt-4o-mini")
    rating = rate_importance("We signed the contract", mock_response="Rating: 4")
    assert (rating.value, rating.source) == (4, "model")
