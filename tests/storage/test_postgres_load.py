"""PostgreSQL under load with a restart: 8 client processes, 4 users, nothing lost or doubled.

benchmarks/bench_postgres_load.py at a test's size: 2,000 memories a user (the benchmark's
default is 100,000) for 20 s, the server restarted half-way. It fails unless the only
errors were retried disconnects, every write is stored once, and each user's recalls and
rows are identical to one client replaying that user's operations alone.
"""

from __future__ import annotations

import pytest

import pg_fixtures
from benchmarks.bench_postgres_load import run_load

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.needs_milestones(4)]  # recalls


def test_eight_clients_four_users_and_a_restart_lose_nothing_and_match_a_replay():
    pg_fixtures.server()  # skips (or fails) as the other tests do when no server can start
    lines = []
    figures = run_load(memories=2_000, users=4, clients=8, seconds=20.0, say=lines.append)
    assert figures["restarted_at_s"] is not None
    assert figures["ops"] > 100 and figures["writes"] > 10, lines
    assert sum("identical" in line for line in lines) == 4, lines
