"""Settings for the chat loop: which models to call and how to score, from the environment.

With nothing set, everything runs offline: a local chat model and a local embedding
model (see llm/gateway.py) that need no network, no key and no download. Set a
variable (in the shell or in a `.env` file at the repository root; see `.env.example`)
to switch to any model litellm knows.

    variable                  default                    meaning
    MEMORY_LAB_CHAT_MODEL     memorylab/offline-chat     any litellm chat model, e.g.
                                                         gpt-4o-mini, ollama/llama3.2
    MEMORY_LAB_EMBED_MODEL    memorylab/minilm-words-1616 any litellm embedding model, e.g.
                                                         text-embedding-3-small,
                                                         ollama/nomic-embed-text; offline:
                                                         memorylab/minilm-l6-v2 (meaning),
                                                         memorylab/hashed-bow-384 (words)
    MEMORY_LAB_API_BASE       (unset)                    server URL for both, e.g. http://localhost:11434
    MEMORY_LAB_TOP_K          3                          memories recalled per message
    MEMORY_LAB_WEIGHTS        1.0,1.0,1.0                relevance, recency, importance weights
    MEMORY_LAB_DECAY_RATE     0.995                      recency kept per hour, in (0, 1]
    MEMORY_LAB_IMPORTANCE     rated                      importance (1-10) of written-back turns;
                                                         rated: each turn rated on its own
                                                         (extensions/write_back.py)
    MEMORY_LAB_ITEMS          turn                       what one recalled memory holds: turn
                                                         (each message its own), or episode
                                                         (consecutive messages grouped,
                                                         extensions/episodes.py)
    MEMORY_LAB_TIMEOUT        60                         seconds to wait for a real model
    MEMORY_LAB_DB             <repository>/memory_lab.sqlite3
                                                         the SQLite file the terminal chat keeps
                                                         memories in (a relative path is read
                                                         from the current folder); :memory:
                                                         keeps them in the process only
    MEMORY_LAB_USER           default                    whose memories the chat recalls and
                                                         writes; each user has their own
    MEMORY_LAB_ENV_FILE       <repository>/.env          the .env file to read; empty: none
    MEMORY_LAB_DATABASE_URL   (unset)                    a PostgreSQL URL for
                                                         storage/postgres_store.py, e.g.
                                                         postgresql://lab:pw@db.example/memorylab

API keys are read by litellm itself under the provider's usual name (OPENAI_API_KEY,
GROQ_API_KEY, ...), from the environment or the same `.env` file.

Deliberately left out: anything about *how* to score (scoring.py) or call models
(llm/gateway.py); this module only reads and validates values.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from base.defaults import DECAY_RATE, TOP_K, WEIGHTS
from base.validation import Weights

PROVIDER = "memorylab"  # litellm's name for the lab's own local models (llm/gateway.py)
OFFLINE_CHAT_MODEL = "memorylab/offline-chat"
# all-MiniLM-L6-v2 in numpy joined with 256 hashed words (embeddings/hybrid.py)
OFFLINE_EMBED_MODEL = "memorylab/minilm-words-1616"
TOY_EMBED_MODEL = "memorylab/hashed-bow-384"  # shared words only: the notebooks' toy
REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_ENV_FILE = REPOSITORY / ".env"
# Beside .env at the repository root, whatever folder the chat or a notebook starts in, so
# both find the same memories; git ignores *.sqlite3.
DEFAULT_DB = str(REPOSITORY / "memory_lab.sqlite3")
IN_MEMORY = ":memory:"  # the MEMORY_LAB_DB value (and --db) for "do not save to disk"

ITEMS = ("turn", "episode")  # MEMORY_LAB_ITEMS: a message, or consecutive messages, a memory
PREFIX = "MEMORY_LAB_"
DEFAULTS = {
    "CHAT_MODEL": OFFLINE_CHAT_MODEL,
    "EMBED_MODEL": OFFLINE_EMBED_MODEL,
    "API_BASE": "",
    "TOP_K": str(TOP_K),
    "WEIGHTS": ",".join(map(str, WEIGHTS)),
    "DECAY_RATE": str(DECAY_RATE),
    "IMPORTANCE": "rated",
    "ITEMS": "turn",
    "TIMEOUT": "60",
    "DB": DEFAULT_DB,
    "USER": "default",
    "DATABASE_URL": "",
}


@dataclass(frozen=True)
class Settings:
    chat_model: str = OFFLINE_CHAT_MODEL
    embed_model: str = OFFLINE_EMBED_MODEL
    api_base: str | None = None
    top_k: int = TOP_K
    weights: Weights = WEIGHTS
    decay_rate: float = DECAY_RATE
    importance: float | None = None  # None: each written-back turn is rated on its own
    items: str = "turn"  # ITEMS: each message its own memory, or grouped into episodes
    timeout: float = 60.0
    db_path: str | None = DEFAULT_DB  # None: memories live in this process only
    user_id: str = "default"
    database_url: str | None = None  # PostgreSQL (storage/postgres_store.py); None: not used

    @property
    def offline(self) -> bool:
        """True when neither model needs a network or a key."""
        return is_offline(self.chat_model) and is_offline(self.embed_model)


def is_offline(model: str) -> bool:
    """True for the lab's own local models, those of the "memorylab" provider.

    is_offline("memorylab/offline-chat") -> True; is_offline("gpt-4o-mini") -> False.
    The one test of a name's provider: which offline embedding model a name means is
    embeddings/registry.py's to say (config.py stands below it and never needs to know).
    """
    return model.startswith(PROVIDER + "/")


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read Settings from `environ` (default: os.environ after loading the .env file).

    Passing a mapping reads only that mapping, which is how tests stay independent of
    the machine: load_settings({"MEMORY_LAB_TOP_K": "5"}).top_k -> 5
    """
    if environ is None:
        _load_env_file()
        environ = os.environ
    raw = {key: environ.get(PREFIX + key, default).strip() for key, default in DEFAULTS.items()}
    return Settings(
        chat_model=_model(raw["CHAT_MODEL"], "CHAT_MODEL"),
        embed_model=_model(raw["EMBED_MODEL"], "EMBED_MODEL"),
        api_base=raw["API_BASE"] or None,
        top_k=_positive_int(raw["TOP_K"], "TOP_K"),
        weights=_weights(raw["WEIGHTS"]),
        decay_rate=_number(raw["DECAY_RATE"], "DECAY_RATE", low=0.0, high=1.0, low_open=True),
        importance=None
        if raw["IMPORTANCE"] == "rated"
        else _number(raw["IMPORTANCE"], "IMPORTANCE", low=1.0, high=10.0),
        items=_items(raw["ITEMS"]),
        timeout=_number(raw["TIMEOUT"], "TIMEOUT", low=0.0, high=float("inf"), low_open=True),
        db_path=_db_path(raw["DB"]),
        user_id=_name(raw["USER"], "USER", "name a user"),
        database_url=_database_url(raw["DATABASE_URL"]),
    )


def _items(value: str) -> str:
    if value not in ITEMS:
        raise ValueError(
            f"{PREFIX}ITEMS must be one of {', '.join(ITEMS)} (what one recalled memory "
            f"holds), got {value!r}"
        )
    return value


def _load_env_file() -> None:
    path = os.environ.get(PREFIX + "ENV_FILE", str(DEFAULT_ENV_FILE))
    if path and Path(path).is_file():
        from dotenv import load_dotenv  # imported here: only needed when a .env exists

        load_dotenv(path, override=False)  # the real environment wins over the file


def _model(value: str, key: str) -> str:
    return _name(value, key, "name a model")


def _name(value: str, key: str, rule: str) -> str:
    if not value:
        raise ValueError(f"{PREFIX}{key} must {rule}, got an empty string")
    return value


def _db_path(value: str) -> str | None:
    if not value:
        raise ValueError(
            f"{PREFIX}DB must be a file path, or {IN_MEMORY} to keep memories in this "
            "process only, got an empty string"
        )
    return None if value == IN_MEMORY else value


def _database_url(value: str) -> str | None:
    if value and not value.startswith(("postgresql://", "postgres://")):
        raise ValueError(
            f"{PREFIX}DATABASE_URL must be a PostgreSQL URL starting with postgresql://, "
            f"got {value.split('@')[-1]!r} (the part after any password)"
        )
    return value or None


def _number(value: str, key: str, low: float, high: float, low_open: bool = False) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{PREFIX}{key} must be a number, got {value!r}") from None
    too_low = number <= low if low_open else number < low
    if not math.isfinite(number) or too_low or number > high:
        bracket = "(" if low_open else "["
        upper = f"{high:g}]" if math.isfinite(high) else "inf)"
        raise ValueError(f"{PREFIX}{key} must be in {bracket}{low:g}, {upper}, got {value!r}")
    return number


def _positive_int(value: str, key: str) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise ValueError(f"{PREFIX}{key} must be a whole number >= 1, got {value!r}")
    return int(value)


def _weights(value: str) -> tuple[float, float, float]:
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 3:
        raise ValueError(
            f"{PREFIX}WEIGHTS must be three comma-separated numbers "
            f"(relevance,recency,importance), got {value!r}"
        )
    names = ("WEIGHTS relevance", "WEIGHTS recency", "WEIGHTS importance")
    return tuple(_number(p, name, low=0.0, high=float("inf")) for p, name in zip(parts, names))  # type: ignore[return-value]
