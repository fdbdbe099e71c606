"""`python code/run.py backup --db PATH TARGET`: a consistent copy of a store file.

A store is the .sqlite3 file and, while a chat has it open, its -wal and -shm side files:
committed memories may still be in the -wal, so copying the .sqlite3 alone can lose them.
This command copies through SQLite's backup API instead, into one self-contained file
(written beside TARGET, fsynced, then renamed), and refuses a TARGET that is a store, its
-wal/-shm, a link to one, or any existing SQLite file.

Deliberately left out: scheduled or rotating backups, and restoring (a backup is a store
file: point --db at it, or copy it back while no chat runs).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from config import IN_MEMORY, load_settings
from storage.sqlite_file import StoreFileError, backup_to, open_read_only

COMMAND = "python code/run.py backup"


def backup(path, target) -> Path:
    """Copy the store file at `path` (every user) to `target`; returns target's path."""
    path, target = Path(path), Path(target)
    db = open_read_only(path)  # checks it is an undamaged store first; never writes to it
    try:
        backup_to(db, target, path)
    finally:
        db.close()
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--db", metavar="PATH", help="the store file (default: MEMORY_LAB_DB)")
    parser.add_argument("target", metavar="TARGET", help="the new file, e.g. backup.sqlite3")
    args = parser.parse_args(argv)
    path = args.db or load_settings().db_path
    if path is None or path == IN_MEMORY:
        parser.error("there is no store file to back up: give --db PATH")
    try:
        target = backup(path, args.target)
    except (StoreFileError, OSError, sqlite3.Error, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"backed up {path} to {target}")
    return 0
