"""Re-embed a store file: every memory of one user, with today's embedding model.

A store records the model that made its vectors and refuses any other (the silent bug
the course warns about), so a file filled before the default changed (for example by
memorylab/hashed-bow-384) is refused by the new default. This command re-embeds it:

    python code/run.py reembed                     # the default user, the default file
    python code/run.py reembed --user alice --db memories.sqlite3

Texts, times, importance, links and metadata stay as they are; only the vectors and the
model's name change, in one transaction (all or nothing). The model is
MEMORY_LAB_EMBED_MODEL (config.py), or --embed-model.

Deliberately left out: keeping the old vectors (export the store first with /export in
the chat if you want them).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

from config import IN_MEMORY, load_settings
from embeddings.registry import offline_model
from storage.rows import FIELDS, snapshot, to_columns
from storage.sqlite_file import connect
from storage.sqlite_store import PersistentMemoryStore, StoreFileError

COMMAND = "python code/run.py reembed"


def reembed(path, user_id: str, model: str, api_base=None, timeout: float = 60.0) -> int:
    """Re-embed user_id's memories in the file at `path` with `model`; returns how many."""
    with PersistentMemoryStore(path, user_id=user_id) as store:  # accepts the stored model
        memories = list(store)
    if not memories:
        return 0
    texts = [m.text for m in memories]
    offline = offline_model(model)  # None: a real model, through litellm
    if offline is not None:
        vectors = offline.embed_documents(texts)
    else:
        from llm.gateway import embed

        vectors = embed(model, texts, api_base=api_base, timeout=timeout)
    column = FIELDS.index("embedding")
    db = connect(Path(path))  # its triggers re-seal every row it changes
    db.isolation_level = "DEFERRED"  # `with db:` below: one transaction, committed at the end
    try:
        with db:  # one transaction: every vector or none
            for memory, vector in zip(memories, vectors):
                fresh = replace(memory, embedding=vector, embedding_model=model)
                db.execute(
                    "UPDATE memories SET embedding = ?, embedding_model = ? "
                    "WHERE user_id = ? AND id = ?",
                    (to_columns(snapshot(fresh))[column], model, user_id, memory.id),
                )
            db.execute(
                "UPDATE users SET embedding_model = ?, dimension = ? WHERE user_id = ?",
                (model, len(vectors[0]), user_id),
            )
    finally:
        db.close()
    return len(memories)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--user", help="whose memories (default: MEMORY_LAB_USER)")
    parser.add_argument("--db", metavar="PATH", help="the store file (default: MEMORY_LAB_DB)")
    parser.add_argument("--embed-model", help="default: MEMORY_LAB_EMBED_MODEL")
    args = parser.parse_args(argv)
    settings = load_settings()
    path = args.db or settings.db_path
    if path is None or path == IN_MEMORY:
        parser.error("there is no store file to re-embed: give --db PATH")
    user = args.user or settings.user_id
    model = args.embed_model or settings.embed_model
    try:
        count = reembed(path, user, model, settings.api_base, settings.timeout)
    except (StoreFileError, OSError, sqlite3.Error, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"re-embedded {count} memories of user {user!r} in {path} with {model}")
    return 0
