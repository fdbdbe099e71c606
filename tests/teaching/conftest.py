"""Every test starts with the hint ladder at its first rung: no tries, nothing revealed."""

from __future__ import annotations

import pytest

from teaching.checks import failure_modes, ladder


@pytest.fixture(autouse=True)
def no_earlier_tries():
    def clear():
        ladder.TRIES.clear()
        ladder.REVEALED.clear()
        failure_modes.PREDICTED.clear()

    clear()
    yield
    clear()
