"""Redaction: secrets are cut out of any text before it is printed, stored or exported.

A provider that refuses a request often echoes what it was sent, the API key included
("Incorrect API key provided: sk-proj-abc..."). Such an error must never reach a memory
(where every later prompt and export would carry it), a consolidation's metadata, or
the screen. `redact` replaces two kinds of secret:

  - the value of every environment variable whose name says it is secret: the name
    contains KEY, TOKEN, SECRET or PASSWORD (OPENAI_API_KEY, GROQ_API_KEY, HF_TOKEN,
    ...); values shorter than 8 characters are left alone (too likely to be ordinary
    words or numbers);
  - strings shaped like common keys, set or not: sk-... (OpenAI, Anthropic), gsk_...
    (Groq), AKIA... (AWS), ghp_... (GitHub), hf_... (Hugging Face), xox.-... (Slack),
    AIza... (Google), and the credential after "Bearer ";
  - the value of a field named as a secret (password: hunter2hunter2, "api_key": "...",
    token=...) and the password of a URL (postgresql://user:[redacted]@host/db).

    redact("Incorrect API key provided: sk-proj-Abc123def456gh")
        -> 'Incorrect API key provided: [redacted key]'
    redact("token ab12cd34ef", {"MY_TOKEN": "ab12cd34ef"}) -> 'token [redacted MY_TOKEN]'

Deliberately left out: finding secrets by entropy (too many false alarms on ids and
hashes), and secrets that look like nothing in particular and are in no variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")  # in an environment variable's name
MIN_SECRET_LENGTH = 8  # shorter values ("1", "true") are not treated as secrets

KEY_SHAPES = re.compile(
    r"""
      \bsk-[A-Za-z0-9_\-]{16,}          # OpenAI, Anthropic (sk-ant-...), sk-proj-...
    | \bgsk_[A-Za-z0-9]{20,}            # Groq
    | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b     # AWS access key id
    | \bgh[pousr]_[A-Za-z0-9]{30,}      # GitHub
    | \bgithub_pat_[A-Za-z0-9_]{30,}    # GitHub fine-grained
    | \bhf_[A-Za-z0-9]{30,}             # Hugging Face
    | \bxox[abprs]-[A-Za-z0-9\-]{10,}   # Slack
    | \bAIza[0-9A-Za-z_\-]{35}          # Google
    """,
    re.VERBOSE,
)
BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
# a field that says it holds a secret: password: hunter2, "api_key": "...", token=...
SECRET_FIELD = re.compile(
    r"""(\b(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token)
         ["']?\s*[:=]\s*["']?)[^\s"',;]{4,}""",
    re.IGNORECASE | re.VERBOSE,
)
URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)", re.IGNORECASE)


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """{value: variable name} of the environment variables that hold secrets."""
    environ = os.environ if environ is None else environ
    found = {}
    for name, value in environ.items():
        value = value.strip()
        if any(part in name.upper() for part in SECRET_NAME_PARTS) and (
            len(value) >= MIN_SECRET_LENGTH
        ):
            found[value] = name
    return found


class Redactor:
    """redact with the environment's secrets read once: what a store applies to every row.

    clean = redactor();  clean("password: hunter2hunter2") -> 'password: [redacted]'
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        # longest first, so that a value containing another is replaced whole
        self._values = sorted(secret_values(environ).items(), key=lambda item: -len(item[0]))

    def __call__(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"redact expects a string, got {type(text).__name__}")
        for value, name in self._values:
            if value in text:
                text = text.replace(value, f"[redacted {name}]")
        text = KEY_SHAPES.sub("[redacted key]", text)
        text = BEARER.sub(r"\1[redacted]", text)
        text = SECRET_FIELD.sub(r"\1[redacted]", text)
        return URL_PASSWORD.sub(r"\1[redacted]\2", text)

    def data(self, value):
        """`value` (JSON-like data: str, list, dict, numbers) with every string redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.data(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.data(item) for item in value)
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        return value


def redactor(environ: Mapping[str, str] | None = None) -> Redactor:
    """A Redactor of the secrets in `environ` (default: os.environ) as they are now."""
    return Redactor(environ)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every secret replaced by "[redacted NAME]" or "[redacted key]"."""
    return Redactor(environ)(text)


def redact_data(value, environ: Mapping[str, str] | None = None):
    """`value` (JSON-like data: str, list, dict, numbers) with every string redacted."""
    return Redactor(environ).data(value)
