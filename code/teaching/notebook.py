"""Notebook set-up: a learner's unfinished function shows as a message, not a traceback.

The first cell of every notebook calls

    from teaching.notebook import show_stubs_as_messages
    show_stubs_as_messages()

and from then on a stub's `raise NotImplementedError()` is shown as "recency_score is not
implemented yet: open code/scoring.py, Milestone 1 ..." instead of a stack of frames.
(A failed check needs nothing: CheckFailed already tells IPython how to show itself.)

Installed by that explicit call, never as a side effect of importing something.
Deliberately left out: anything outside IPython; there the call does nothing.
"""

from __future__ import annotations

import sys

from teaching.checks.core import NotImplementedYet, not_implemented
from teaching.milestones import MILESTONES


def _stub_name(tb) -> str | None:
    """The learner function whose stub raised, from the innermost frame of a traceback."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_code.co_name
    return name if name in MILESTONES else None


def _show_stub(shell, etype, value, tb, tb_offset=None):
    """Show a learner stub's NotImplementedError as "which file, which milestone"."""
    name = _stub_name(tb)
    if name is not None:
        value, etype = not_implemented(name), NotImplementedYet
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def show_stubs_as_messages() -> bool:
    """Inside IPython, make a learner stub show a short message. True if installed."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((NotImplementedError,), _show_stub)
    return True
