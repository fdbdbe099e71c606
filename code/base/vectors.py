"""Float32Vector: a memory's embedding held compactly (float32, 4 bytes a value), read as floats.

A tuple of 384 Python floats costs about 12 KB (a float object each); the same values as
float32 cost 1.5 KB. A reopened store of 100,000 memories therefore fits in a few hundred
MB instead of gigabytes. Float32Vector keeps the values in an `array('f')` and otherwise behaves
like the tuple it replaces, so the learner's loop and cosine do not change:

    v = Float32Vector([0.5, 0.25]);  list(v) -> [0.5, 0.25];  v == (0.5, 0.25) -> True
    sum(q * m for q, m in zip(query, v))   # iterates Python floats, at C speed
    v[0] = 1.0 -> TypeError: a memory's embedding is read-only ...

Iterating gives Python floats (float32 values widened exactly to float64), so every score
is computed in float64 exactly as from the tuple. numpy sees float64 too (`__array__`):
a float32 matrix would round where the tuple did not.

Deliberately left out: validation (base/validation.py makes a Float32Vector only from checked,
float32-exact values) and arithmetic (it is a sequence, not a numpy array).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence


class Float32Vector(Sequence):
    """A read-only sequence of float32 values that compares equal to the same floats."""

    __slots__ = ("_values",)

    def __init__(self, values) -> None:
        # subtle: array('f') rounds each value to float32; callers pass exact float32s
        values = (
            values if isinstance(values, array) and values.typecode == "f" else array("f", values)
        )
        object.__setattr__(self, "_values", values)

    @classmethod
    def from_bytes(cls, data: bytes) -> Float32Vector:
        """The vector of little-endian float32s `data` (as a store file keeps it)."""
        values = array("f")
        values.frombytes(data)
        if sys.byteorder == "big":  # pragma: no cover - every machine the course runs on is little
            values.byteswap()
        return cls(values)

    def to_bytes(self) -> bytes:
        """The values as little-endian float32s: the inverse of from_bytes."""
        if sys.byteorder == "big":  # pragma: no cover
            swapped = array("f", self._values)
            swapped.byteswap()
            return swapped.tobytes()
        return self._values.tobytes()

    def as_tuple(self) -> tuple[float, ...]:
        return tuple(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self):
        return iter(self._values)  # Python floats, at C speed

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self._values[index])  # a slice is a plain tuple, as before
        return self._values[index]

    def __eq__(self, other) -> bool:
        if isinstance(other, Float32Vector):
            return self._values == other._values
        if isinstance(other, (tuple, list)):
            return len(other) == len(self._values) and self._values.tolist() == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __array__(self, dtype=None, copy=None):
        import numpy as np  # only when numpy asks: numpy is loaded then

        return np.frombuffer(self._values, dtype=np.float32).astype(dtype or np.float64)

    def __setattr__(self, name, value):
        raise TypeError(
            "a memory's embedding is read-only: assign a new one (memory.embedding = [...]) "
            "so that the store sees the change"
        )

    def __repr__(self) -> str:
        shown = ", ".join(f"{x:.4g}" for x in self._values[:4])
        more = ", ..." if len(self._values) > 4 else ""
        return f"Float32Vector([{shown}{more}], {len(self)} values)"

    def __reduce__(self):
        return Float32Vector, (self._values,)

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + sys.getsizeof(self._values)
