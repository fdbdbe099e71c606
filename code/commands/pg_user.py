"""`python code/run.py pg-user USER`: a user's own PostgreSQL login, printed as its URL.

    python code/run.py pg-user alice --admin-url postgresql://admin:pw@db/memorylab
    -> postgresql://memorylab_u_3f9a...:<password>@db/memorylab

An administrator runs this once per user (the admin URL may also come from the variable
MEMORY_LAB_ADMIN_URL, which keeps it out of the process list). It installs the schema if
needed, then creates the user's role (storage/postgres_database.create_user): the role
sees and changes that user's memories only, cannot lock, truncate or alter what other
users use, and has a connection limit and timeouts. Give the printed URL to that user's
app as MEMORY_LAB_DATABASE_URL. Run again for the same user, it prints a new password and
the old URL stops working; --drop removes the role (the memories stay).

Deliberately left out: listing users, and sending the URL anywhere (it is printed once).
"""

from __future__ import annotations

import argparse
import os
import sys

from storage.postgres_database import (
    USER_LIMITS,
    PostgresStoreError,
    create_user,
    drop_user,
    install_schema,
)

COMMAND = "python code/run.py pg-user"
ADMIN_VARIABLE = "MEMORY_LAB_ADMIN_URL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("user", metavar="USER", help="the user id, as the app opens its store")
    parser.add_argument("--admin-url", help=f"an administrator's URL (default: ${ADMIN_VARIABLE})")
    parser.add_argument(
        "--connection-limit", type=int, default=USER_LIMITS["connection_limit"],
        help="connections the user's role may hold at once (default: %(default)s)",
    )  # fmt: skip
    for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"):
        parser.add_argument(
            "--" + name.replace("_", "-"), default=USER_LIMITS[name],
            help="a PostgreSQL duration, e.g. 30s (default: %(default)s)",
        )  # fmt: skip
    parser.add_argument("--drop", action="store_true", help="remove the user's role instead")
    args = parser.parse_args(argv)
    admin_url = args.admin_url or os.environ.get(ADMIN_VARIABLE)
    if not admin_url:
        parser.error(f"give --admin-url URL or set {ADMIN_VARIABLE}")
    try:
        if args.drop:
            drop_user(admin_url, args.user)
            print(f"removed the login of user {args.user!r}; the memories stay")
            return 0
        install_schema(admin_url)
        url = create_user(
            admin_url,
            args.user,
            connection_limit=args.connection_limit,
            statement_timeout=args.statement_timeout,
            lock_timeout=args.lock_timeout,
            idle_in_transaction_session_timeout=args.idle_in_transaction_session_timeout,
        )
    except (PostgresStoreError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(url)
    return 0
