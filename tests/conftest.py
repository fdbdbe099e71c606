"""Shared test setup: every test runs offline, on default settings."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

import network_guard
from teaching.milestones import (
    EXERCISE_FILES,
    EXERCISES,
    LEARNER_FILES,
    MILESTONE_TESTS,
    MILESTONES,
    file_of,
    where,
)

NOW = 1_000_000.0  # epoch seconds: the course examples' fixed "now"
HOUR = 3600.0
DAY = 24 * HOUR
# Five episodes about one subject: what consolidation clusters, in several test files.
POOL_LEAK = [
    "debugged the connection pool leak in the billing API",
    "the connection pool leaked again after the deploy",
    "restarted the billing API because the connection pool was exhausted",
    "connection pool leak: raised the pool size as a stopgap",
    "found the connection pool leak: sessions never closed in the billing API",
]


@pytest.fixture(autouse=True)
def offline_defaults(monkeypatch):
    """No MEMORY_LAB_* setting or .env file of this machine leaks into a test, and no test
    writes the terminal chat's store file."""
    for name in list(os.environ):
        if name.startswith("MEMORY_LAB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORY_LAB_ENV_FILE", "")
    monkeypatch.setenv("MEMORY_LAB_DB", ":memory:")  # no test writes the chat's store file


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to reach a non-local address fails the test loudly (tests/network_guard.py)."""
    connect, getaddrinfo = network_guard.guarded("raise")
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


# --- the student edition: tests that wait for the learner's code -------------------------
#
# In the student edition the learner core is nbgrader's stubs ("# YOUR CODE HERE" then
# `raise NotImplementedError()`). The milestone tests (MILESTONE_TESTS) fail until the
# learner's code is right: they are the to-do list. Every other test that fails only
# because it reached a stub is reported as skipped, naming the function it waits for,
# instead of burying the to-do list under hundreds of failures. In the completed lab no
# stub exists, so none of this applies.

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "code"
LAUNCHER = CODE / "run.py"  # python code/run.py progress | mentor | evaluate | chat
STUDENT_EDITION = any(  # a stub left in the milestones' files or the exercises'
    "# YOUR CODE HERE" in (ROOT / name).read_text()
    for name in LEARNER_FILES + EXERCISE_FILES
    if (ROOT / name).exists()
)


def waits_for(error: BaseException | None) -> str | None:
    """'recency_score is not implemented yet (...)' if a learner stub raised `error`.

    Follows the chain of exceptions: pytest.raises(RuntimeError) catches the stub's
    NotImplementedError (a RuntimeError) and raises its own AssertionError from it.
    """

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if type(error).__name__ == "NotImplementedYet":  # a check already said which one
            return str(error).splitlines()[0]
        traceback = error.__traceback__
        if isinstance(error, NotImplementedError) and traceback is not None:
            while traceback.tb_next is not None:
                traceback = traceback.tb_next
            code = traceback.tb_frame.f_code
            if code.co_name in MILESTONES and _is_learner_file(code.co_filename):
                return f"{code.co_name} is not implemented yet ({where(code.co_name)})"
            if code.co_name in EXERCISES and _is_learner_file(code.co_filename):
                module, notebook = EXERCISES[code.co_name]
                return f"{code.co_name} is not implemented yet ({file_of(module)}, {notebook})"
        error = error.__cause__ or error.__context__
    return None


def _is_learner_file(filename: str) -> bool:
    files = LEARNER_FILES + EXERCISE_FILES
    return any(Path(filename).as_posix().endswith("/" + name) for name in files)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (STUDENT_EDITION and report.failed and call.excinfo is not None):
        return
    if item.path.name in MILESTONE_TESTS:
        return
    reason = waits_for(call.excinfo.value)
    if reason is not None:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"waits for you: {reason}")


def pytest_runtest_setup(item):
    """A test marked needs_milestones(n) waits, in the student edition, for Milestones 1-n.

    For tests that reach the learner's code where the hook above cannot see the stub:
    in another process (the terminal chat, a command) or behind a widget's message.
    """
    marker = item.get_closest_marker("needs_milestones")
    if marker is None or not STUDENT_EDITION:
        return
    import contextlib
    import io

    from teaching.checks import CheckFailed, require_milestones

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            require_milestones(item.name, up_to=marker.args[0])
    except CheckFailed as error:
        pytest.skip(f"waits for you: {str(error).splitlines()[0]}")


def pytest_terminal_summary(terminalreporter):
    if STUDENT_EDITION:
        terminalreporter.write_line(
            f"Student edition: the tests of {', '.join(MILESTONE_TESTS)} are your to-do "
            "list; tests skipped with 'waits for you' run once those functions work. "
            "Progress: python code/run.py progress"
        )


# The suites that take minutes, each under a marker of its own: the README's test command
# leaves them out (pyproject.toml's addopts), .ci/run runs every one of them.
SUITES = {  # a test file, or a folder, of tests/ -> its suite's marker
    "notebooks/test_notebooks.py": "notebooks",  # every notebook run top to bottom
    "storage/test_store_faults.py": "faults",  # a crash and an I/O error at every statement
    "storage/test_store_fuzz.py": "faults",  # damaged files
    "grading/": "editions",  # the editions, the sandbox, nbgrader
}


def pytest_collection_modifyitems(items):
    """Mark each suite's tests; then the notebook runs first, the longest first: with the
    tests spread over workers (pytest-xdist), the slowest start at once, not at the end."""
    for item in items:
        where = item.path.relative_to(ROOT / "tests").as_posix()
        for prefix, marker in SUITES.items():
            if where == prefix or (prefix.endswith("/") and where.startswith(prefix)):
                item.add_marker(marker)

    def order(item) -> tuple[bool, int]:
        if (
            getattr(item, "originalname", "")
            != "test_notebook_runs_top_to_bottom_without_errors_or_stderr"
        ):
            return (True, 0)
        return (False, -item.callspec.params["path"].stat().st_size)

    items.sort(key=order)
