"""What each field of a Memory accepts, and the form it is kept in.

memory_store.Memory runs every assignment through `memory_field`, in __init__ and after,
so `memory.last_accessed = datetime.now()` is converted to epoch seconds and
`memory.importance = 11` raises as early as `Memory(..., importance=11)` would:

    memory_field("importance", 8.0)      -> 8          (shown as 8, not 8.0)
    memory_field("kind", "fact")         -> ValueError: kind must be one of ...
    memory_field("embedding", [0.1, 1])  -> Float32Vector([0.1, 1], 2 values)  (base/vectors.py)

Fields not listed (metadata, which must be a dict) are checked by Memory itself.
Deliberately left out: rules between fields or memories (memory_store.py, base/links.py)
and what a file or a database cannot hold (storage/limits.py: sizes, NUL characters).
"""

from __future__ import annotations

from typing import Any

from base.validation import (
    as_float32_vector,
    as_timestamp,
    check_importance,
    check_kind,
    check_memory_text,
    check_text,
)
from base.vectors import Float32Vector


def _optional_name(value: Any, name: str) -> str | None:
    return None if value is None else check_text(value, name, "a non-empty string or None")


def _optional_time(value: Any, name: str) -> float | None:
    return None if value is None else as_timestamp(value, name)  # None: a default comes later


def _importance(value: Any, name: str) -> float:
    value = check_importance(value)
    return int(value) if value.is_integer() else value  # shown as 8, not 8.0


def _embedding(value: Any, name: str) -> Float32Vector | None:
    if value is None or isinstance(
        value, Float32Vector
    ):  # a Float32Vector holds checked float32s already
        return value
    return Float32Vector(as_float32_vector(value, name))  # 4 bytes a value, iterated as floats


_CHECKS = {  # field -> (value, name) -> the value as it is kept
    "id": lambda value, name: check_text(value, name),
    "text": lambda value, name: check_memory_text(value, name),
    "kind": lambda value, name: check_kind(value),
    "created_at": _optional_time,
    "last_accessed": _optional_time,
    "importance": _importance,
    "embedding": _embedding,
    "embedding_model": _optional_name,
    "superseded_by": _optional_name,
    "user_id": lambda value, name: check_text(value, name),
}


def memory_field(name: str, value: Any) -> Any:
    """`value` as field `name` of a Memory keeps it, or ValueError/TypeError naming it."""
    check = _CHECKS.get(name)
    return value if check is None else check(value, name)
