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
    AIza... (Google), and the credential after "Bearer ".

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


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every secret replaced by "[redacted NAME]" or "[redacted key]"."""
    if not isinstance(text, str):
        raise TypeError(f"redact expects a string, got {type(text).__name__}")
    # longest first, so that a value containing another is replaced whole
    for value, name in sorted(secret_values(environ).items(), key=lambda item: -len(item[0])):
        text = text.replace(value, f"[redacted {name}]")
    text = KEY_SHAPES.sub("[redacted key]", text)
    return BEARER.sub(r"\1[redacted]", text)


def redact_data(value, environ: Mapping[str, str] | None = None):
    """`value` (JSON-like data: str, list, dict, numbers) with every string redacted."""
    if isinstance(value, str):
        return redact(value, environ)
    if isinstance(value, list):
        return [redact_data(item, environ) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_data(item, environ) for item in value)
    if isinstance(value, dict):
        return {key: redact_data(item, environ) for key, item in value.items()}
    return value
