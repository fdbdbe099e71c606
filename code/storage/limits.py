"""What a persistent store can keep: one set of limits for SQLite and PostgreSQL alike.

A value one backend cannot keep is refused by both, with the same ValueError, before any
SQL runs (storage/store.py checks every memory with check_row, and every name with
check_name). Without these, one memory would be stored by SQLite and refused by
PostgreSQL with a raw psycopg error, and a store could not move from one to the other.

  - MAX_NAME_BYTES (1,000 bytes of UTF-8): a memory id, a link (superseded_by), a user id,
    an embedding model's name, an id prefix. PostgreSQL keeps (user id, memory id) and
    (user id, id prefix) together in one btree index entry of at most 2,704 bytes, so two
    names of 1,000 bytes each fit with room to spare, and 2,000 each do not.
  - MAX_METADATA_BYTES (65,536 bytes of JSON, UTF-8): a memory's metadata holds small
    extras (a role, tags, links); every reopen reads every row, so documents go elsewhere.
  - MAX_DIMENSIONS (16,000): the values of an embedding; pgvector's `vector` holds no more.
  - no NUL character (\\x00) in any text a store keeps (id, text, link, user, model,
    prefix): PostgreSQL text cannot hold one. Metadata may hold one: JSON writes \\u0000.

    check_name("m" * 1_001, "memory id")
    -> ValueError: memory id must be at most 1,000 bytes of UTF-8 (...), got 1,001 bytes: 'mmm...'

Deliberately left out: the rules a Memory keeps itself (text length, kinds, times, in
base/validation.py), and the in-memory MemoryStore, which serialises nothing and keeps none
of these limits.
"""

from __future__ import annotations

MAX_NAME_BYTES = 1_000
MAX_METADATA_BYTES = 65_536
MAX_DIMENSIONS = 16_000


def check_no_nul(value: str, name: str) -> str:
    """Return `value` unless it holds a NUL character, which PostgreSQL text cannot hold."""
    if "\x00" in value:
        raise ValueError(
            f"{name} must not contain a NUL character (\\x00), got {_shown(value)}: "
            "PostgreSQL text cannot hold one; remove it or replace it with a space"
        )
    return value


def check_name(value: str, name: str) -> str:
    """Return `value` (an id, a user id, a model name) if every backend can keep and index it."""
    size = len(check_no_nul(value, name).encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise ValueError(
            f"{name} must be at most {MAX_NAME_BYTES:,} bytes of UTF-8 (PostgreSQL indexes "
            f"a user id and a name together in 2,704 bytes), got {size:,} bytes: {_shown(value)}"
        )
    return value


def check_row(memory_id: str, fields: dict) -> None:
    """Raise ValueError unless every backend can keep this memory's row (its FIELDS values).

    `fields` is what storage/rows.py's snapshot holds, by name: the metadata as JSON text.
    """
    check_name(memory_id, "memory id")
    check_no_nul(fields["text"], "text")
    for name in ("superseded_by", "embedding_model"):
        if fields[name] is not None:
            check_name(fields[name], name)
    size = len(fields["metadata"].encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValueError(
            f"metadata of memory {_shown(memory_id)} must be at most {MAX_METADATA_BYTES:,} "
            "bytes of JSON (small extras such as a role or tags: keep documents elsewhere), "
            f"got {size:,} bytes: {_shown(fields['metadata'])}"
        )
    dimensions = len(fields["embedding"])
    if dimensions > MAX_DIMENSIONS:
        raise ValueError(
            f"embedding of memory {_shown(memory_id)} must have at most {MAX_DIMENSIONS:,} "
            f"values (pgvector's vector type holds no more), got {dimensions:,}"
        )


def shown(value) -> str:
    """Any value as a message shows it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _shown(value: str) -> str:
    """The value quoted, cut to its first 24 characters: a message never holds a megabyte."""
    return repr(value if len(value) <= 24 else value[:24] + "...")
