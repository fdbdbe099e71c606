"""What lets a store follow changes made to a memory it handed out.

A store's journal (roll-back) and save() need to hear of a change before it happens:
`memory.importance = 9` on a memory from a SQLite store is written by the next save().
`Tracked` is the base class of memory_store.Memory that does this, so that Memory itself
holds only the course's fields and their rules:

    _stores             weak references to the stores holding this object (kept by
                        base/store_base.py), never copied or pickled
    __setattr__         tells those stores, then sets; a dict set as `metadata` is
                        wrapped in base/metadata.py's Metadata, which tells them of
                        changes in place (metadata["x"] = 1)
    _adopt_metadata     after a raw write of the fields (a roll-back, a row read
                        again, a copy): the metadata is this object's watched dict again

Deliberately left out: what a value may be (base/memory_fields.py, memory_store.Memory)
and what a store does when told (base/store_base.py, storage/store.py).
"""

from __future__ import annotations

from typing import Any

from base.metadata import Metadata


class Tracked:
    """An object whose stores are told before any of its attributes changes."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "metadata" and isinstance(value, dict):
            value = Metadata(value, self)  # a copy that tells this object of changes in place
        self._tell_stores()
        object.__setattr__(self, name, value)

    def _tell_stores(self) -> None:
        """The stores holding this memory, told before a field changes: their journal keeps
        the old value, their save() writes the new."""
        for ref in self.__dict__.get("_stores", ()):
            store = ref()
            if store is not None:
                store._changing(self)

    def _metadata_changing(self) -> None:
        """Its metadata is about to change in place (metadata["x"] = 1): as an assignment."""
        self._tell_stores()

    def _adopt_metadata(self) -> None:
        """After a raw write of its fields (a roll-back, a row read again, a copy): make sure
        its metadata is its own watched dict again."""
        value = self.__dict__.get("metadata")
        if isinstance(value, dict) and not (isinstance(value, Metadata) and value.owned_by(self)):
            object.__setattr__(self, "metadata", Metadata(value, self))

    def __getstate__(self) -> dict:  # a copy (copy, deepcopy, pickle) is in no store
        return {name: value for name, value in self.__dict__.items() if name != "_stores"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._adopt_metadata()  # a copy's metadata is its own, not the original's
