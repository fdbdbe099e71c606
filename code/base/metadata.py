"""A memory's metadata: a dict that tells its memory before it changes in place.

A store writes what changed in a memory it handed out, and a memory tells its stores
before a field is assigned (memory_store.Memory). `memory.metadata["reviewed"] = True`
assigns nothing to the memory, only to its dict, so the dict tells instead: every way of
changing a dict in place (d[k] = v, del, clear, pop, popitem, setdefault, update, |=)
first calls its memory's `_metadata_changing()`, and save() writes it like an assignment.

    memory.metadata["source"] = "chat"     # the memory's stores hear of it, then it is set
    memory.metadata == {"source": "chat"}  # -> True: it compares, prints and serialises
                                           #    (json) as the plain dict it is

A value changed inside a value (memory.metadata["tags"].append("x")) is not seen: assign
the key again, or pass the memory to save(only=[memory]), which compares every field.
Copies and pickles of it are plain dicts: only the memory's own dict is watched.

Deliberately left out: watching nested lists and dicts (they would need a wrapper each).
"""

from __future__ import annotations

from typing import Any


class Metadata(dict):
    """A dict owned by one memory, which it tells before any change in place."""

    __slots__ = ("_owner",)

    def __init__(self, data: Any = (), owner: Any = None) -> None:
        dict.__init__(self, data)
        # subtle: a strong reference (a cycle the collector frees), so that
        # store.get("m2").metadata["x"] = 1 reaches the store, which holds memories weakly
        self._owner = owner

    def owned_by(self, memory: Any) -> bool:
        return self._owner is not None and self._owner is memory

    def _changing(self) -> None:
        owner = self._owner
        if owner is not None:
            owner._metadata_changing()

    def __setitem__(self, key, value) -> None:
        self._changing()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key) -> None:
        self._changing()
        dict.__delitem__(self, key)

    def __ior__(self, other):
        self._changing()
        dict.update(self, other)
        return self

    def clear(self) -> None:
        self._changing()
        dict.clear(self)

    def pop(self, *args):
        self._changing()
        return dict.pop(self, *args)

    def popitem(self):
        self._changing()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        if key not in self:
            self._changing()
        return dict.setdefault(self, key, default)

    def update(self, *args, **kwargs) -> None:
        self._changing()
        dict.update(self, *args, **kwargs)

    def copy(self) -> dict:
        return dict(self)

    def __reduce__(self):  # copy, deepcopy and pickle give a plain dict, owned by nobody
        return dict, (dict(self),)
