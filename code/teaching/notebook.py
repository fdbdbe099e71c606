"""Notebook set-up: autoreload on, and an unfinished function shows as a message.

The first cell of every notebook is `%run -i workbook.py` (notebooks/workbook.py), which
puts code/ on sys.path and calls setup() below. From then on a saved change to a file of
code/ is picked up when a cell runs again, and a stub's `raise NotImplementedError()` is
shown as "recency_score is not implemented yet: open code/scoring.py, Milestone 1 ..."
instead of a stack of frames.
(A failed check needs nothing: CheckFailed already tells IPython how to show itself.)

The same call keeps the first picture quick: see `skip_iri_grammar`.

Installed by that explicit call, never as a side effect of importing something.
Deliberately left out: anything outside IPython; there the call does nothing.
"""

from __future__ import annotations

import sys

from base.unwritten import NotWrittenYet
from teaching.checks.core import NotImplementedYet, not_implemented
from teaching.checks.practice import not_written
from teaching.milestones import EXERCISES, MILESTONES


def _stub_name(tb) -> str | None:
    """The learner function whose stub raised, from the innermost frame of a traceback."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_code.co_name
    return name if name in MILESTONES or name in EXERCISES else None


def _show_stub(shell, etype, value, tb, tb_offset=None):
    """Show a learner stub's NotImplementedError as "which file, which milestone"; provided
    code that stopped at one (NotWrittenYet) says so in its own words, without the frames."""
    name = _stub_name(tb)
    if name is not None:
        value = not_implemented(name) if name in MILESTONES else not_written(name)
        etype = NotImplementedYet
    elif isinstance(value, NotWrittenYet):
        value, etype = NotImplementedYet(str(value)), NotImplementedYet
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def skip_iri_grammar() -> bool:
    """Leave out jsonschema's IRI format check, which compiles a grammar when imported.

    subtle: a plotly FigureWidget imports nbformat, nbformat imports jsonschema, and
    jsonschema, finding rfc3987_syntax installed (Jupyter's server needs it), builds three
    Earley parsers for IRIs at import: 1.5 s on an idle core, several on a busy one,
    paid by the first picture of every notebook. Nothing in a notebook validates an
    IRI; without the package jsonschema leaves the "iri" format unchecked, as it does
    wherever the package is not installed. True if it was left out (jsonschema was
    not imported yet).
    """
    if "jsonschema" in sys.modules:
        return False
    sys.modules.setdefault("rfc3987_syntax", None)  # None: `import` raises ImportError
    return sys.modules["rfc3987_syntax"] is None


def show_stubs_as_messages() -> bool:
    """Inside IPython, make a learner stub show a short message. True if installed."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((NotImplementedError,), _show_stub)
    skip_iri_grammar()  # a notebook kernel: the first picture without a grammar to build
    return True


def setup() -> bool:
    """Inside IPython: autoreload every module before each cell, and show stubs as messages.

    Returns False (and does nothing) outside IPython.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is None:
        return False
    if "autoreload" not in shell.magics_manager.magics["line"]:  # a rerun: loaded already
        shell.run_line_magic("load_ext", "autoreload")
    shell.run_line_magic("autoreload", "2")
    return show_stubs_as_messages()
