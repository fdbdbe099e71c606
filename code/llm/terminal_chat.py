"""The terminal chat: a read-answer-remember loop around one chat turn, in a terminal.

    python code/chat_with_memory.py --user alice          # alice's memories, kept on disk
    python code/chat_with_memory.py --db :memory:         # gone when you quit

It keeps the memories in a SQLite file (MEMORY_LAB_DB, default memory_lab.sqlite3 at the
repository root), or in PostgreSQL when MEMORY_LAB_DATABASE_URL is set (and --db is not
given), one user at a time, and adds a few commands (/memories, /users,
/export, /help, /quit). The turn itself, embed, retrieve, inject, answer and write back,
is not here: chat_with_memory.py passes its chat_with_memory in as `chat_turn`, so this
loop stands below the course's module and never imports it.

Deliberately left out: the turn (chat_with_memory.py) and the prompt (llm/memory_block.py).
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from base.redaction import redact
from config import IN_MEMORY, ITEMS, Settings, load_settings
from llm.memory_block import format_age
from memory_store import EmbeddingModelMismatch, MemoryStore
from storage.postgres_database import PostgresStoreError
from storage.postgres_store import PostgresMemoryStore
from storage.sqlite_store import PersistentMemoryStore, StoreFileError, export_jsonl, list_users

ChatTurn = Callable[..., Any]  # (message, store, settings=...) -> a result with .reply


HELP = """Commands: /memories  list what is stored     /help  this text
          /users     users in the store file   /export FILE  save memories as JSON lines
          /quit      leave (or Ctrl-D)         anything else: chat"""


def main(argv: list[str] | None = None, input_fn=input, output=None, *, chat_turn: ChatTurn) -> int:
    """The terminal chat, each message answered by `chat_turn`. Returns the exit status.

    chat_turn(message, store, settings=settings) answers one message and returns an
    object with .reply, .recalled and .written (chat_with_memory.py passes its turn).
    """
    output = output or sys.stdout
    parser = argparse.ArgumentParser(
        prog="python code/chat_with_memory.py", description="Chat with a memory-backed assistant."
    )
    parser.add_argument("--model", help="chat model (default: MEMORY_LAB_CHAT_MODEL)")
    parser.add_argument("--embed-model", help="embedding model (default: MEMORY_LAB_EMBED_MODEL)")
    parser.add_argument(
        "-k", type=int, help="memories recalled per message (default: MEMORY_LAB_TOP_K)"
    )
    parser.add_argument(
        "--items",
        choices=ITEMS,
        help="what one recalled memory holds: each message (turn), or a few consecutive "
        "messages together (episode) (default: MEMORY_LAB_ITEMS, else turn)",
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"SQLite file to keep memories in; {IN_MEMORY} keeps them in this process only "
        "(default: MEMORY_LAB_DB, else memory_lab.sqlite3 at the repository root)",
    )
    parser.add_argument(
        "--user", metavar="NAME", help="whose memories to use (default: MEMORY_LAB_USER)"
    )
    args = parser.parse_args(argv)
    settings = load_settings()
    if args.k is not None and args.k < 1:
        parser.error(f"-k must be >= 1, got {args.k}")
    if args.db is not None and not args.db.strip():
        parser.error(f"--db must be a file path or {IN_MEMORY}, got an empty string")
    if args.user is not None and not args.user.strip():
        parser.error("--user must name a user, got an empty string")
    for option in ("user", "model", "embed_model"):
        value = getattr(args, option)
        if value is not None and not _is_text(value):  # undecodable bytes in argv
            flag = "--" + option.replace("_", "-")
            parser.error(
                f"{flag} must be text in your terminal's encoding (UTF-8), got bytes that "
                f"are not: {value.encode('utf-8', 'backslashreplace').decode('ascii', 'replace')}"
            )
    settings = replace(
        settings,
        chat_model=args.model or settings.chat_model,
        embed_model=args.embed_model or settings.embed_model,
        top_k=args.k or settings.top_k,
        items=args.items or settings.items,
        db_path=settings.db_path
        if args.db is None
        else (None if args.db == IN_MEMORY else args.db),
        user_id=args.user or settings.user_id,
    )

    def say(text: str = "") -> None:
        print(text, file=output, flush=True)

    try:
        store = open_chat_store(settings, use_database=args.db is None)  # --db: a file
    except EmbeddingModelMismatch as exc:
        say(f"error: {redact(str(exc))}")
        say(
            f"To re-embed them with {settings.embed_model}: python code/run.py reembed "
            f"--user {settings.user_id} --db {settings.db_path}"
        )
        return 1
    except (StoreFileError, PostgresStoreError, OSError, sqlite3.Error) as exc:
        say(f"error: {redact(str(exc))}")
        return 1
    say(f"Memory Lab chat: model {settings.chat_model}, embeddings {settings.embed_model}")
    if isinstance(store, (PersistentMemoryStore, PostgresMemoryStore)):
        say(
            f"Memories of user {store.user_id!r} are kept in {_kept_in(store)} "
            f"({len(store)} so far). /help for commands."
        )
    else:
        say("Memories live in this process only: they are gone when you quit. /help for commands.")
    try:
        _keep_undecodable_lines_apart(input_fn)
        written = _chat_loop(store, settings, input_fn, say, chat_turn)
    finally:
        if isinstance(store, (PersistentMemoryStore, PostgresMemoryStore)):
            store.close()
    stored = "1 memory was" if written == 1 else f"{written} memories were"
    total = (
        f" {len(store)} in all in {_kept_in(store)}."
        if isinstance(store, (PersistentMemoryStore, PostgresMemoryStore))
        else ""
    )
    say(f"Goodbye. {stored} stored in this session.{total}")
    return 0


def _keep_undecodable_lines_apart(input_fn) -> None:
    """Read stdin with errors="surrogateescape" from now on (the chat's own process).

    subtle: with the default errors="strict", one byte that is not UTF-8 makes input()
    raise and throws away the whole chunk it was decoding, good lines included; escaped,
    only the line holding it is refused (_is_text) and the chat goes on. Set before the
    first read: a text stream cannot change its errors after that.
    """
    if input_fn is input and hasattr(sys.stdin, "reconfigure"):
        with contextlib.suppress(OSError, ValueError):  # io.UnsupportedOperation: read already
            sys.stdin.reconfigure(errors="surrogateescape")


def _is_text(value: str) -> bool:
    """False for a str holding lone surrogates (undecodable bytes smuggled in by the OS)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _split_off(store: MemoryStore, replaced):
    """The note keeping the unchanged part of `replaced` (write_back's "split_from"), if any."""
    return next((m for m in store.live() if m.metadata.get("split_from") == replaced.id), None)


def _kept_in(store) -> str:
    return str(store.path) if isinstance(store, PersistentMemoryStore) else store.url


def open_chat_store(settings: Settings, use_database: bool = True) -> MemoryStore:
    """settings.user_id's store: in PostgreSQL when settings.database_url is set (and
    use_database), else in settings.db_path, or in this process if that is None."""
    if use_database and settings.database_url is not None:
        return PostgresMemoryStore(
            settings.database_url, user_id=settings.user_id, embedding_model=settings.embed_model
        )
    if settings.db_path is None:
        return MemoryStore()
    return PersistentMemoryStore(
        settings.db_path, user_id=settings.user_id, embedding_model=settings.embed_model
    )


def _chat_loop(store: MemoryStore, settings: Settings, input_fn, say, chat_turn: ChatTurn) -> int:
    """Read lines until /quit or end of input; returns how many memories were written."""
    written = 0
    while True:
        try:
            line = input_fn("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            say()
            return written
        except UnicodeDecodeError as exc:  # e.g. a Latin-1 terminal, or a binary file piped in
            say(
                f"error: that line is not UTF-8 text ({exc.reason} at byte {exc.start}), so "
                "it was not read; set your terminal to UTF-8 and type it again"
            )
            continue
        if not _is_text(line):  # read with errors="surrogateescape": undecodable bytes
            say("error: that line holds bytes that are not UTF-8 text, so it was not stored")
            continue
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return written
        if line == "/help":
            say(HELP)
        elif line == "/memories":
            now = time.time()
            for m in store:
                age = format_age(now, m.created_at)
                replaced = f", replaced by {m.superseded_by}" if m.superseded_by else ""
                say(f"  {m.id}  [{m.kind}, importance {m.importance}, {age}{replaced}]  {m.text}")
            if not len(store):
                say("  (nothing stored yet)")
        elif line == "/users":
            if isinstance(store, PostgresMemoryStore):
                say(f"  {store.user_id} (a database login sees its own user only)")
            elif isinstance(store, PersistentMemoryStore):
                say("  " + (", ".join(list_users(store.path)) or "(nobody has memories yet)"))
            else:
                say("  (memories live in this process only: there is no store file)")
        elif line.split(maxsplit=1)[0] == "/export":  # not "/exporting the Q3 plan"
            target = line.removeprefix("/export").strip()
            if not target:
                say("usage: /export FILE   (one JSON object per memory, one per line)")
                continue
            try:
                count = export_jsonl(store, target)
            except (OSError, ValueError) as exc:  # ValueError: the target is a store
                say(f"error: {redact(str(exc))}")
                continue
            say(f"  exported {count} memories to {target}")
        else:
            try:
                result = chat_turn(line, store, settings=settings)
            except (RuntimeError, ValueError, sqlite3.Error) as exc:
                say(f"error: {redact(str(exc))}")
                continue
            written += len(result.written)
            say(f"assistant> {result.reply}")
            recalled = ", ".join(m.id for m in result.recalled) or "nothing"
            stored = ", ".join(m.id for m in result.written)
            skipped = getattr(result, "skipped", None)
            stored = f"stored as {stored}" if stored else f"not stored: {skipped or 'nothing new'}"
            replaced = list(getattr(result, "replaced", ()))
            stored += f", replacing {', '.join(m.id for m in replaced)}" if replaced else ""
            split = [_split_off(store, m) for m in replaced]  # a combined note's other facts
            stored += "".join(f"; kept {m.text!r} as {m.id}" for m in split if m is not None)
            say(f"  (recalled: {recalled}; {stored})")
