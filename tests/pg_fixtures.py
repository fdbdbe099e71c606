"""One embedded PostgreSQL server per test process, for the tests marked `postgres`.

    url = lab_database()        # the lab role's URL; the server starts on first use
    admin = admin_database()    # the administrator's URL (install, indexes, inspection)

The server starts once per process (each pytest-xdist worker has its own, in its own
temporary folder) and stops when the process exits. When it cannot start, the test is
skipped with the reason in one line, except with MEMORY_LAB_REQUIRE_POSTGRES=1 (CI's
postgres step), where it fails loudly instead.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid

import pytest

# read at import: the tests' autouse fixture clears every MEMORY_LAB_* variable
REQUIRE_POSTGRES = os.environ.get("MEMORY_LAB_REQUIRE_POSTGRES") == "1"

PREFIX = "memorylab-pg-"  # the tests' server folders, in the system's temporary folder
STALE = 600  # seconds: an older folder with no running server is a run's leftover

_server = None
_failure: str | None = None


def _sweep_stale() -> None:
    """Remove server folders that earlier runs left behind (a worker killed before atexit)."""
    import glob
    import time

    for folder in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        running = os.path.exists(os.path.join(folder, "data", "postmaster.pid"))
        if not running and time.time() - os.path.getmtime(folder) > STALE:
            shutil.rmtree(folder, ignore_errors=True)


def server():
    """The process's PostgresServer, started on first use (or skip/fail saying why)."""
    global _server, _failure
    if _server is None and _failure is None:
        from storage.pg_server import PostgresServer, ServerError

        _sweep_stale()
        folder = tempfile.mkdtemp(prefix=PREFIX)
        candidate = PostgresServer(folder)
        try:
            candidate.start()
            candidate.lab_url()  # installs the schema
        except (ServerError, OSError) as error:
            _failure = f"the embedded PostgreSQL server cannot start: {error}"
            shutil.rmtree(folder, ignore_errors=True)
        else:
            _server = candidate
            atexit.register(_stop, candidate, folder)
    if _failure is not None:
        if REQUIRE_POSTGRES:
            pytest.fail(_failure, pytrace=False)
        pytest.skip(_failure)
    return _server


def _stop(candidate, folder) -> None:
    try:
        candidate.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lab_database() -> str:
    return server().lab_url()


def admin_database() -> str:
    return server().admin_url()


def unique(name: str) -> str:
    """A user id no other test has used: the server is shared by every test of a process."""
    return f"{name}-{uuid.uuid4().hex[:12]}"
