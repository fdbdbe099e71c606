"""commands/reembed.py: a store made by another embedding model is refused, then re-embedded."""

from __future__ import annotations

import io

import pytest

from chat_with_memory import main as chat_main
from commands import reembed
from conftest import DAY, NOW
from embedding_helpers import Embedder
from run import COMMANDS
from storage.sqlite_store import PersistentMemoryStore

OLD = "memorylab/hashed-bow-384"


@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "old.sqlite3"
    with PersistentMemoryStore(path, "dana") as store:
        words = Embedder(OLD)
        words.remember(store, "My name is Dana and I live in Lisbon", now=NOW - DAY, importance=8)
        words.remember(store, "I am allergic to shellfish", now=NOW, metadata={"role": "user"})
        store.supersede("m1", "m2")  # a link that must survive (nonsense, but a link)
    with PersistentMemoryStore(path, "sam") as store:
        Embedder(OLD).remember(store, "Sam likes tea", now=NOW)
    return path


def run_chat(path, user):
    out = io.StringIO()
    status = chat_main(["--db", str(path), "--user", user], input_fn=_eof, output=out)
    return status, out.getvalue()


def _eof(prompt):
    raise EOFError


def test_the_new_default_refuses_an_old_store_and_gives_the_command(old_file):
    status, out = run_chat(old_file, "dana")
    assert status == 1
    assert "were embedded with 'memorylab/hashed-bow-384'" in out
    assert f"python code/run.py reembed --user dana --db {old_file}" in out
    assert "reembed" in COMMANDS


def test_reembed_changes_only_the_vectors_and_only_of_that_user(old_file):
    with PersistentMemoryStore(old_file, "dana") as store:
        before = {m.id: m.to_dict() for m in store}
    assert reembed.main(["--user", "dana", "--db", str(old_file)]) == 0
    model = Embedder().model
    with PersistentMemoryStore(old_file, "dana", embedding_model=model) as store:
        after = {m.id: m.to_dict() for m in store}
        for memory in store:
            assert memory.embedding == Embedder().memory("x", memory.text).embedding
    for memory_id, old in before.items():
        new = after[memory_id]
        assert new["embedding_model"] == model
        assert {k: v for k, v in new.items() if not k.startswith("embedding")} == {
            k: v for k, v in old.items() if not k.startswith("embedding")
        }
    with PersistentMemoryStore(old_file, "sam") as sam:
        assert sam.embedding_model == OLD  # another user's memories are left alone
    status, out = run_chat(old_file, "dana")
    assert status == 0 and "(2 so far)" in out


def test_reembed_without_a_file_is_a_clear_error(monkeypatch, capsys):
    with pytest.raises(SystemExit):
        reembed.main(["--db", ":memory:"])
    assert "there is no store file to re-embed" in capsys.readouterr().err


def test_a_store_of_the_retired_default_is_refused_with_the_command_then_re_embedded(tmp_path):
    """memorylab/minilm-bow-256 (MiniLM at 0.9 and word counts) was the default before the
    embedding was tuned on real conversations; its vectors are no longer made."""
    from memory_store import Memory

    retired = "memorylab/minilm-bow-256"
    path = tmp_path / "retired.sqlite3"
    with PersistentMemoryStore(path, "dana", embedding_model=retired) as store:
        vector = [1.0] + [0.0] * 639  # 384 + 256 numbers, as that model made them
        store.add(Memory("m1", "I live in Lisbon", created_at=NOW, embedding=vector,
                         embedding_model=retired))  # fmt: skip
    status, out = run_chat(path, "dana")
    assert status == 1
    assert f"were embedded with '{retired}'" in out
    assert f"python code/run.py reembed --user dana --db {path}" in out
    with pytest.raises(ValueError, match=r"minilm-bow-256 is retired.*python code/run.py reembed"):
        Embedder(retired)
    assert reembed.main(["--user", "dana", "--db", str(path)]) == 0
    with PersistentMemoryStore(path, "dana", embedding_model=Embedder().model) as store:
        assert [m.embedding_model for m in store] == [Embedder().model]
