"""config.py: offline defaults, every MEMORY_LAB_* variable, bad values and the .env file."""

from __future__ import annotations

import os
import re

import pytest

import config
from config import OFFLINE_CHAT_MODEL, OFFLINE_EMBED_MODEL, Settings, is_offline, load_settings


@pytest.fixture
def env_file(tmp_path, monkeypatch):
    """A .env file for load_settings() to read; whatever it adds to os.environ is removed.

    load_dotenv writes the file's variables into os.environ, where monkeypatch cannot see
    them, so this fixture deletes every variable that appeared during the test.
    """
    path = tmp_path / "lab.env"
    monkeypatch.setenv("MEMORY_LAB_ENV_FILE", str(path))
    before = set(os.environ)
    yield path
    for name in set(os.environ) - before:
        del os.environ[name]


# --- defaults and each variable ---------------------------------------------------------


def test_no_variables_give_the_offline_defaults():
    settings = load_settings({})
    assert settings == Settings()
    assert settings.chat_model == OFFLINE_CHAT_MODEL
    assert settings.embed_model == OFFLINE_EMBED_MODEL
    assert settings.api_base is None
    assert settings.top_k == 3
    assert settings.weights == pytest.approx((1.0, 1.0, 1.0))
    assert settings.decay_rate == pytest.approx(0.995)
    assert settings.importance is None  # each written-back turn is rated on its own
    assert settings.timeout == pytest.approx(60.0)
    assert settings.db_path == str(config.REPOSITORY / "memory_lab.sqlite3")
    assert settings.user_id == "default"
    assert settings.offline


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("CHAT_MODEL", "gpt-4o-mini", "chat_model", "gpt-4o-mini"),
        ("EMBED_MODEL", "ollama/nomic-embed-text", "embed_model", "ollama/nomic-embed-text"),
        ("API_BASE", "http://localhost:11434", "api_base", "http://localhost:11434"),
        ("API_BASE", "", "api_base", None),
        ("TOP_K", "5", "top_k", 5),
        ("TOP_K", " 7 ", "top_k", 7),  # surrounding spaces are ignored
        ("WEIGHTS", "0.5, 0.3,0.2", "weights", (0.5, 0.3, 0.2)),
        ("WEIGHTS", "1,0,0", "weights", (1.0, 0.0, 0.0)),
        ("DECAY_RATE", "0.99", "decay_rate", 0.99),
        ("DECAY_RATE", "1", "decay_rate", 1.0),  # 1 never forgets, and is allowed
        ("IMPORTANCE", "8", "importance", 8.0),
        ("IMPORTANCE", "1", "importance", 1.0),
        ("TIMEOUT", "2.5", "timeout", 2.5),
        ("DB", "notes/alice.sqlite3", "db_path", "notes/alice.sqlite3"),
        ("DB", ":memory:", "db_path", None),  # keep memories in the process only
        ("USER", " alice ", "user_id", "alice"),
    ],
)
def test_each_variable_is_read_and_parsed(variable, value, field, expected):
    settings = load_settings({"MEMORY_LAB_" + variable: value})
    result = getattr(settings, field)
    if isinstance(expected, (int, float, tuple)):
        assert result == pytest.approx(expected)
    else:
        assert result == expected


def test_top_k_is_an_int():
    assert isinstance(load_settings({"MEMORY_LAB_TOP_K": "5"}).top_k, int)


@pytest.mark.parametrize(
    ("variable", "model", "offline"),
    [
        ("CHAT_MODEL", "gpt-4o-mini", False),
        ("EMBED_MODEL", "text-embedding-3-small", False),
        ("EMBED_MODEL", "memorylab/hashed-bow-64", True),
    ],
)
def test_offline_only_while_both_models_are_memorylab_ones(variable, model, offline):
    assert load_settings({"MEMORY_LAB_" + variable: model}).offline is offline


@pytest.mark.parametrize(
    ("model", "offline"),
    [
        (OFFLINE_CHAT_MODEL, True),
        (OFFLINE_EMBED_MODEL, True),
        ("memorylab/anything", True),  # the provider's: which model it is, the registry says
        ("gpt-4o-mini", False),
        ("ollama/memorylab", False),
        ("memorylab", False),  # no model after the provider
        ("memorylab-x/hashed-bow-384", False),
    ],
)
def test_is_offline_is_true_for_the_labs_own_provider_only(model, offline):
    assert is_offline(model) is offline


# --- bad values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "bad_part"),
    [
        ("TOP_K", "0", "0"),
        ("TOP_K", "-1", "-1"),
        ("TOP_K", "three", "three"),
        ("TOP_K", "2.5", "2.5"),
        ("WEIGHTS", "1,1", "1,1"),
        ("WEIGHTS", "1,x,1", "x"),
        ("WEIGHTS", "1,-1,1", "-1"),
        ("DECAY_RATE", "0", "0"),
        ("DECAY_RATE", "1.5", "1.5"),
        ("DECAY_RATE", "nan", "nan"),
        ("DECAY_RATE", "abc", "abc"),
        ("IMPORTANCE", "0", "0"),
        ("IMPORTANCE", "11", "11"),
        ("TIMEOUT", "0", "0"),
        ("TIMEOUT", "-5", "-5"),
        ("TIMEOUT", "inf", "inf"),  # a real model must answer some time
        ("WEIGHTS", "inf,1,1", "inf"),  # an infinite weight drowns the other two
        ("TOP_K", "\u00b2", "\u00b2"),  # "²" passes str.isdigit() but is not a number
    ],
)
def test_bad_values_are_rejected_naming_the_variable_and_the_value(variable, value, bad_part):
    message = rf"MEMORY_LAB_{variable}.*got '{re.escape(bad_part)}'"
    with pytest.raises(ValueError, match=message):
        load_settings({"MEMORY_LAB_" + variable: value})


@pytest.mark.parametrize("variable", ["CHAT_MODEL", "EMBED_MODEL"])
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_model_name_is_rejected(variable, value):
    with pytest.raises(ValueError, match=f"MEMORY_LAB_{variable} must name a model.*empty"):
        load_settings({"MEMORY_LAB_" + variable: value})


@pytest.mark.parametrize(
    ("variable", "message"),
    [("DB", "MEMORY_LAB_DB must be a file path, or :memory:"), ("USER", "must name a user")],
)
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_store_path_or_user_is_rejected(variable, message, value):
    with pytest.raises(ValueError, match=f"{re.escape(message)}.*empty"):
        load_settings({"MEMORY_LAB_" + variable: value})


def test_the_default_store_file_is_ignored_by_git():
    ignored = (config.REPOSITORY / ".gitignore").read_text().split()
    assert "*.sqlite3" in ignored and "*.sqlite3-wal" in ignored


# --- the .env file ----------------------------------------------------------------------


def test_load_settings_without_argument_reads_the_env_file(env_file):
    env_file.write_text("MEMORY_LAB_TOP_K=7\nMEMORY_LAB_CHAT_MODEL=gpt-4o-mini\n")
    settings = load_settings()
    assert settings.top_k == 7
    assert settings.chat_model == "gpt-4o-mini"
    assert not settings.offline


def test_the_real_environment_wins_over_the_env_file(env_file, monkeypatch):
    env_file.write_text("MEMORY_LAB_TOP_K=7\nMEMORY_LAB_TIMEOUT=9\n")
    monkeypatch.setenv("MEMORY_LAB_TOP_K", "2")
    settings = load_settings()
    assert settings.top_k == 2  # from the environment
    assert settings.timeout == pytest.approx(9.0)  # from the file


def test_a_bad_value_in_the_env_file_is_reported_like_any_other(env_file):
    env_file.write_text("MEMORY_LAB_DECAY_RATE=2\n")
    with pytest.raises(ValueError, match="MEMORY_LAB_DECAY_RATE.*got '2'"):
        load_settings()


def test_a_missing_env_file_is_ignored(env_file, monkeypatch):
    monkeypatch.delenv("MEMORY_LAB_DB")  # the test setup's in-memory store is a setting too
    assert not env_file.exists()
    assert load_settings() == Settings()


def test_without_env_file_setting_the_repository_env_file_is_read(env_file, monkeypatch):
    monkeypatch.setattr(config, "DEFAULT_ENV_FILE", env_file)
    monkeypatch.delenv("MEMORY_LAB_ENV_FILE")
    env_file.write_text("MEMORY_LAB_TOP_K=7\n")
    assert load_settings().top_k == 7


def test_an_empty_env_file_setting_means_no_file(env_file, monkeypatch):
    monkeypatch.setattr(config, "DEFAULT_ENV_FILE", env_file)
    monkeypatch.setenv("MEMORY_LAB_ENV_FILE", "")
    env_file.write_text("MEMORY_LAB_TOP_K=7\n")
    assert load_settings().top_k == 3
    assert "MEMORY_LAB_TOP_K" not in os.environ


def test_passing_a_mapping_ignores_the_environment_and_the_env_file(env_file, monkeypatch):
    env_file.write_text("MEMORY_LAB_TOP_K=7\n")
    monkeypatch.setenv("MEMORY_LAB_IMPORTANCE", "9")
    assert load_settings({}) == Settings()
