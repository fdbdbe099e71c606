"""How a check teaches: run a learner function on known cases and explain a wrong answer.

Every check cell in the milestone notebooks, the pytest suite and the grader call the
same checks (one module per milestone beside this one). A check runs the learner's
function on fixed inputs with known answers. When an answer is wrong it does not stop at
"assertion failed": it computes what the common mistakes (a milestone's `Mistakes`)
would have returned on the same inputs and, when one matches, names it.

    recency_score(now, now - hour)
      expected: 0.995
      got:      1.4557630253200248e-08
      likely mistake: the gap was used in seconds; divide by 3600 to get hours
      (fix it in code/scoring.py, Milestone 1 (01_recency.ipynb))

Deliberately left out: the reference solution. Expected values are written out as
numbers, and the mistakes are modelled, never the right answer. The cases and mistakes
of each function live in its milestone's module (m1_recency.py, ...).

    >>> check_recency_score()      # prints "recency_score: 7 checks passed"
"""

from __future__ import annotations

import copy
import importlib
import math
import numbers
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from base.defaults import COURSE_NOW
from base.units import SECONDS_PER_HOUR
from teaching.milestones import LEARNER_FILES, MILESTONES, file_of, where

HOUR = SECONDS_PER_HOUR
NOW = COURSE_NOW  # the course examples' fixed "now", epoch seconds
# How close a float answer must be, here and in grading: float32 arithmetic (numpy's
# float32 cosine is off by about 1e-7) meets it, and no known mistake comes that close.
TOLERANCE = {"rel_tol": 1e-6, "abs_tol": 1e-9}


class CheckFailed(AssertionError):
    """A learner function gave a wrong answer; the message says what and why."""

    title = "Check failed"

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback: the message is the whole story.
        return [f"\x1b[1;31m{self.title}\x1b[0m", *str(self).splitlines()]


class NotImplementedYet(CheckFailed):
    """The function is still the stub that raises NotImplementedError."""

    title = "Not implemented yet"


def learner_function(name: str) -> Callable:
    """The learner's current `name`, looked up at call time so edits are picked up.

    A file that does not import (a syntax error, a deleted file, a crash at import) is
    reported as such, with the file to fix, instead of a traceback from importlib.
    """
    module_name = MILESTONES[name].module
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # whatever the file raised: the learner needs to know
        raise CheckFailed(
            f"{file_of(module_name)} could not be imported, so {name} cannot be checked:\n"
            f"  {type(error).__name__}: {error}\n"
            f"  (fix it in {where(name)})"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise CheckFailed(
            f"{file_of(module_name)} has no function {name}: keep its name and signature "
            f"as given ({where(name)})"
        )
    return function


def not_implemented(name: str) -> NotImplementedYet:
    return NotImplementedYet(
        f"{name} is not implemented yet: open {where(name)} and replace the line "
        f"`raise NotImplementedError()` in {name} with your code, then run this cell again."
    )


def report(call: str, expected: Any, got: Any, mistake: str, name: str) -> CheckFailed:
    """The message a learner reads: the call, expected, got and the likely mistake."""
    return CheckFailed(
        f"{call}\n"
        f"  expected: {expected}\n"
        f"  got:      {got}\n"
        f"  likely mistake: {mistake}\n"
        f"  (fix it in {where(name)})"
    )


class Crash(NamedTuple):
    """The learner's function raised instead of returning.

    Shown as the exception, then the line of the learner's own file that raised it:

        ZeroDivisionError: float division by zero
                    at code/scoring.py, line 57: `return dot / (norm_q * norm_m)`
    """

    error: Exception

    def __str__(self) -> str:
        shown = f"{type(self.error).__name__}: {self.error}"
        frame = self.learner_frame
        if frame is not None:
            file, source = self.learner_file(frame.filename), (frame.line or "").strip()
            shown += f"\n            at {file}, line {frame.lineno}: `{source}`"
        return shown

    @property
    def learner_frame(self) -> traceback.FrameSummary | None:
        """The innermost frame of the traceback in a learner file (code/scoring.py, ...)."""
        frames = traceback.extract_tb(self.error.__traceback__)
        mine = [frame for frame in frames if self.learner_file(frame.filename)]
        return mine[-1] if mine else None

    @staticmethod
    def learner_file(filename: str) -> str | None:
        """'code/scoring.py' if `filename` (a frame's absolute path) is that learner file."""
        posix = filename.replace("\\", "/")
        return next((name for name in LEARNER_FILES if posix.endswith("/" + name)), None)

    @property
    def hint(self) -> str:
        default = "read the error and the line above, then compare your code with the docstring"
        return CRASH_HINTS.get(type(self.error).__name__, default)


def attempt(name: str, function: Callable, *args, **kwargs) -> Any:
    """The function's answer, or a Crash. A stub raises NotImplementedYet at once."""
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise not_implemented(name) from None
    except Exception as error:  # any crash is a finding, reported in the learner's terms
        return Crash(error)


def call_learner(name: str, function: Callable, call: str, expected: Any, *args, **kwargs):
    """The function's answer; a crash becomes a CheckFailed that explains it."""
    got = attempt(name, function, *args, **kwargs)
    if isinstance(got, Crash):
        raise report(call, expected, str(got), got.hint, name)
    return got


CRASH_HINTS = {
    "ZeroDivisionError": "a division by zero: guard the case where a length or a sum is 0",
    "TypeError": "a value of the wrong type: check what each argument is (see the docstring)",
    "AttributeError": "a missing attribute: memories have .embedding, .last_accessed, "
    ".importance; ranking rows have .memory and .score",
    "NameError": "a name that does not exist: a typo, or a variable used before it is set",
    "OverflowError": "a number grew too large: is the exponent in hours (not seconds)?",
    "RecursionError": "the function calls itself: call the scoring functions instead",
}


# --- numeric checks ---------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One known answer: call the function with args/kwargs, expect `expected`.

    `slips` (the optional milestones' checks, whose answers are not floats) holds what a
    named mistake returns on this case: {mistake key: its answer}; the key's message is
    in the milestone's ValueMistakes.
    """

    args: tuple
    expected: Any
    kwargs: dict = field(default_factory=dict)
    call: str = ""  # how to show the call; built from the arguments when empty
    slips: Mapping[str, Any] = field(default_factory=dict)


def show_call(name: str, case: Case) -> str:
    if case.call:
        return case.call
    parts = [repr(a) for a in case.args] + [f"{k}={v!r}" for k, v in case.kwargs.items()]
    return f"{name}({', '.join(parts)})"


@dataclass(frozen=True)
class Mistakes:
    """The common mistakes of one function, and hints for answers no mistake explains.

    models: (what the learner did, a function returning what that mistake returns on
        the same arguments as the real one). The first that matches is reported.
    nan: the hint for a NaN answer.
    limits: (low, high, hint) when every right answer lies in [low, high].
    crashes: {exception class name: hint} for crashes this function's mistakes cause,
        said instead of the general CRASH_HINTS (an OverflowError means something else
        in a half-life than in a decay rate).
    """

    models: Sequence[tuple[str, Callable]] = ()
    nan: str = "NaN means an invalid operation (0/0, or a power of a negative number)"
    limits: tuple[float, float, str] | None = None
    crashes: Mapping[str, str] = field(default_factory=dict)

    def crash_hint(self, crash: Crash) -> str:
        return self.crashes.get(type(crash.error).__name__, crash.hint)


NO_MISTAKES = Mistakes()


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, **TOLERANCE)


def _matches(model: Callable, case: Case, got: Any) -> bool:
    """Would this mistake have returned `got` on this case?"""
    try:
        wrong = model(*case.args, **case.kwargs)
    except (ArithmeticError, TypeError, ValueError):
        return False  # this mistake cannot even produce a number here
    return _is_number(wrong) and _is_number(got) and _close(float(wrong), float(got))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def diagnose(results: list[tuple[Case, Any]], got: Any, mistakes: Mistakes = NO_MISTAKES) -> str:
    """The likely mistake behind the answers, in plain words.

    `results` holds every case with the learner's answer. A mistake that explains all
    of them is named first; otherwise the one that explains the most wrong answers.
    """
    if got is None:
        return "the function returned None: is the `return` line missing?"
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return f"the function returned a {type(got).__name__}; it should return one float"
    if math.isnan(got):
        return mistakes.nan
    misses = [(c, g) for c, g in results if not (_is_number(g) and _close(float(g), c.expected))]
    best, best_count = None, 0
    for label, model in mistakes.models:
        if all(_matches(model, c, g) for c, g in results):
            return label
        count = sum(_matches(model, c, g) for c, g in misses)
        if count > best_count:
            best, best_count = label, count
    if best:
        return best
    if mistakes.limits is not None and not mistakes.limits[0] <= got <= mistakes.limits[1]:
        return mistakes.limits[2]
    return "none of the usual mistakes matches; compare your formula with the docstring"


def check_cases(
    name: str,
    cases: list[Case],
    function: Callable | None = None,
    mistakes: Mistakes = NO_MISTAKES,
) -> int:
    """Check `function` (default: the learner's `name`) on every case; report the first miss."""
    function = function or learner_function(name)
    results = [(case, attempt(name, function, *case.args, **case.kwargs)) for case in cases]
    for case, got in results:  # every case ran first, so the diagnosis can use all answers
        if isinstance(got, Crash):
            hint = mistakes.crash_hint(got)
            raise report(show_call(name, case), case.expected, str(got), hint, name)
        if not (_is_number(got) and _close(float(got), case.expected)):
            mistake = diagnose(results, got, mistakes)
            raise report(show_call(name, case), case.expected, got, mistake, name)
        low, high, hint = mistakes.limits or (-math.inf, math.inf, "")
        if not low <= float(got) <= high:  # close to the answer, yet outside every answer's range
            raise report(show_call(name, case), case.expected, got, hint, name)
    return len(cases)


# --- checks of plain values (optional milestones) --------------------------------------
#
# An answer that is not one float (a whole number or None, True/False, a list of ids, a
# table) is compared as a plain JSON value: type for type (7.0 is no 7, 1 no True, a
# tuple stands for a list), exactly, floats inside it to TOLERANCE. A wrong answer is
# explained from the table: each case lists what the named mistakes return on it.


@dataclass(frozen=True)
class ValueMistakes:
    """The named mistakes of a function checked by `check_values`.

    returns: what a right answer is, for a wrong type ("a whole number in [1, 10], or None").
    messages: {mistake key: what the learner did and where to look}; each Case's `slips`
        says what that mistake returns on it.
    crashes: {exception class name: hint}, as Mistakes.crashes.
    """

    returns: str
    messages: Mapping[str, str] = field(default_factory=dict)
    crashes: Mapping[str, str] = field(default_factory=dict)

    def crash_hint(self, crash: Crash) -> str:
        return self.crashes.get(type(crash.error).__name__, crash.hint)


JSON_TYPES = {type(None): "None", bool: "bool", int: "int", float: "float", str: "str",
              list: "list", tuple: "list", dict: "dict"}  # fmt: skip


def kind_of(value: Any) -> str:
    """The plain type `value` counts as ('int', 'None', 'list', ...), or its class name."""
    return JSON_TYPES.get(type(value), type(value).__name__)


def same(expected: Any, got: Any) -> bool:
    """Is `got` the plain value `expected`? Type for type, floats to TOLERANCE."""
    if kind_of(expected) != kind_of(got):
        return False
    if isinstance(expected, float):
        return not math.isnan(got) and _close(expected, got)
    if isinstance(expected, (list, tuple)):
        return len(expected) == len(got) and all(map(same, expected, got))
    if isinstance(expected, dict):
        return set(expected) == set(got) and all(same(v, got[k]) for k, v in expected.items())
    return expected == got


def diagnose_value(results: list[tuple[Case, Any]], case: Case, got: Any,
                   mistakes: ValueMistakes) -> str:  # fmt: skip
    """The likely mistake behind a wrong `got` on `case`, read from the cases' slips.

    A wrong type is said first; then the named mistake that returns `got` here and
    explains the most of the other answers, among those no other answer contradicts (a
    mistake that would have answered another case differently is not the learner's);
    otherwise a pointer to the docstring, never a guess.
    """
    if kind_of(got) != kind_of(case.expected) and kind_of(got) not in {
        kind_of(s) for s in case.slips.values()
    }:
        shown = f"{_a(kind_of(got))} ({got!r})"
        return f"the function returned {shown}; it should return {mistakes.returns}"
    best, best_count = None, 0
    for key, wrong in case.slips.items():
        if not same(wrong, got):
            continue
        if any(
            key in c.slips and not isinstance(g, Crash) and not same(c.slips[key], g)
            for c, g in results
        ):
            continue  # this mistake would have answered another case otherwise
        count = sum(key in c.slips and same(c.slips[key], g) for c, g in results)
        if count > best_count:
            best, best_count = key, count
    if best is not None:
        return mistakes.messages.get(best, best)
    return "none of the usual mistakes matches; compare your code with the docstring"


def check_values(
    name: str,
    cases: list[Case],
    function: Callable | None = None,
    mistakes: ValueMistakes = ValueMistakes("the value the docstring describes"),
) -> int:
    """Check `function` (default: the learner's `name`) on cases whose answers are plain
    values; report the first miss with its likely mistake. Each call gets its own copy
    of the arguments, so a function that changes them cannot change the next case."""
    function = function or learner_function(name)
    results = [
        (case, attempt(name, function, *copy.deepcopy(case.args), **copy.deepcopy(case.kwargs)))
        for case in cases
    ]
    for case, got in results:
        if isinstance(got, Crash):
            hint = mistakes.crash_hint(got)
            raise report(show_call(name, case), _shown(case.expected), str(got), hint, name)
        if not same(case.expected, got):
            mistake = diagnose_value(results, case, got, mistakes)
            raise report(show_call(name, case), _shown(case.expected), _shown(got), mistake, name)
    return len(cases)


def _a(kind: str) -> str:
    return kind if kind == "None" else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def passed(name: str, count: int) -> None:
    print(f"{name}: {count} checks passed")
