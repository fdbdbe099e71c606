"""Offline by default: quiet, fast imports; litellm only on a model call, never the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import network_guard
from base.text import tokenize
from llm.offline_chat import RELATED_SIMILARITY, offline_reply, similarity

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "code"


def run_python(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """Run `python *args` from the repository root with code/ importable and no settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
    env |= {"PYTHONPATH": str(CODE), "MEMORY_LAB_ENV_FILE": "", "MEMORY_LAB_DB": ":memory:"}
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)  # the lab must set it itself
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )


GUARD = network_guard.first_line("exit")  # a subprocess that reaches out exits with 99


@pytest.mark.slow
def test_importing_the_lab_prints_nothing_and_loads_no_heavy_library():
    result = run_python(
        "-c",
        "import sys\n"
        "import scoring, retriever, memory_store, config, embedding_helpers, llm.gateway\n"
        "import chat_with_memory\n"
        "heavy = sorted(m for m in ('litellm', 'numpy', 'dotenv', 'openai') if m in sys.modules)\n"
        "sys.stderr.write(repr(heavy))\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == "[]"


LOWER_MODULES = sorted(  # what the course's modules stand on
    f"{folder}.{path.stem}"
    for folder in ("base", "storage", "embeddings", "llm", "commands")
    for path in (CODE / folder).glob("*.py")
    if path.stem != "__init__"
)


@pytest.mark.slow
def test_importing_every_module_below_the_course_modules_is_silent_and_light():
    # no numpy, no litellm (llm/gateway.py imports it late, minilm.py numpy on first use)
    assert "llm.gateway" in LOWER_MODULES and len(LOWER_MODULES) >= 20
    result = run_python(
        "-W",
        "error",
        "-c",
        "import sys\n"
        f"import {', '.join(LOWER_MODULES)}\n"
        "heavy = sorted(m for m in ('litellm', 'numpy', 'dotenv', 'openai') if m in sys.modules)\n"
        "sys.stderr.write(repr(heavy))\n",
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "[]")


@pytest.mark.parametrize(
    ("argv", "status", "shown"),
    [
        ([], 2, "python code/run.py progress"),
        (["--help"], 0, "python code/run.py evaluate"),
        (["grade"], 2, "unknown command 'grade'"),
        (["mentor", "--help"], 0, "usage: python code/run.py mentor"),
        (["evaluate", "--help"], 0, "usage: python code/run.py evaluate"),
        (["chat", "--help"], 0, "usage: python code/chat_with_memory.py"),
    ],
)
@pytest.mark.slow
def test_the_launcher_runs_each_command_in_one_short_line(argv, status, shown):
    result = run_python("code/run.py", *argv)
    assert result.returncode == status, result.stderr
    assert shown in result.stdout + result.stderr


@pytest.mark.slow
def test_importing_the_learner_core_raises_no_warning():
    result = run_python("-W", "error", "-c", "import scoring, retriever, memory_store")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.needs_milestones(4)
@pytest.mark.slow
def test_a_whole_offline_chat_turn_never_touches_the_network():
    source = GUARD + textwrap.dedent(
        """
        from chat_with_memory import chat_with_memory
        from embedding_helpers import Embedder
        from memory_store import MemoryStore
        from llm import gateway

        store = MemoryStore()
        Embedder().remember(store, "Eric prefers Groq for the default API", now=0)
        result = chat_with_memory("which API should I default to?", store, now=3600)
        print(result.reply)
        print(gateway.embed("memorylab/minilm-words-1616", ["Groq"])[0] ==
              Embedder().embed_one("Groq"))
        """
    )
    result = run_python("-c", source)
    assert result.returncode == 0, result.stderr
    assert "Eric prefers Groq for the default API (you told me" not in result.stdout
    assert "Eric prefers Groq for the default API (noted 1 hour ago)" in result.stdout
    assert result.stdout.strip().endswith("True")
    assert result.stderr == ""


@pytest.mark.needs_milestones(4)
@pytest.mark.slow
def test_a_fresh_process_offline_turn_never_imports_litellm():
    source = textwrap.dedent(
        """
        import sys
        from chat_with_memory import chat_with_memory
        from memory_store import MemoryStore

        store = MemoryStore()
        chat_with_memory("I live in Lisbon with my partner", store, now=0)
        result = chat_with_memory("Which city is my home?", store, now=3600)
        print(result.reply.splitlines()[1])
        print("litellm" in sys.modules)
        """
    )
    result = run_python("-c", source)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "- I live in Lisbon with my partner (you told me 1 hour ago)",
        "False",
    ]


@pytest.mark.slow  # imports litellm
def test_the_offline_model_gives_one_reply_directly_and_through_litellm():
    from llm import gateway
    from llm.memory_block import render_items

    system = "Notes:\n" + render_items(
        [{"text": "Eric prefers Groq for the default API", "written": "2026-03-01 09:00 UTC",
          "age": "2 days ago", "role": "user"}]
    )  # fmt: skip
    for message in ("which API should I default to?", "I now prefer OpenAI", "thanks!"):
        messages = [{"role": "system", "content": system}, {"role": "user", "content": message}]
        direct = gateway.complete("memorylab/offline-chat", messages)
        # an argument only litellm reads sends the call through its "memorylab" provider
        through = gateway.complete("memorylab/offline-chat", messages, temperature=0)
        assert direct == through == gateway.offline_reply(messages)
    assert "litellm" in sys.modules
    with pytest.raises(gateway.ModelCallError, match="unknown offline chat model"):
        gateway.complete("memorylab/other-chat", messages)


@pytest.mark.needs_milestones(4)
@pytest.mark.slow
def test_the_terminal_chat_runs_as_a_script():
    result = run_python(
        "code/chat_with_memory.py",
        stdin="I prefer Groq for the default API\nwhich API should I default to?\n/quit\n",
    )
    assert result.returncode == 0, result.stderr
    assert "- I prefer Groq for the default API (you told me just now)" in result.stdout
    assert "Goodbye. 1 memory was stored" in result.stdout  # the question is not kept
    assert result.stderr == ""


@pytest.mark.slow
def test_litellm_is_registered_once_with_the_memorylab_provider():
    from llm import gateway

    litellm = gateway.load_litellm()
    assert gateway.load_litellm() is litellm
    providers = [item["provider"] for item in litellm.custom_provider_map]
    assert providers.count("memorylab") == 1


def block(*items: dict) -> str:

    from llm.memory_block import render_memory_block  # noqa: F401  (format reference)

    return "<memories>\n[\n" + ",\n".join(json.dumps(i) for i in items) + "\n]\n</memories>"


@pytest.mark.parametrize(
    ("message", "starts"),
    [
        ("which API should I default to?", "Here is what I remember"),
        ("Remind me which API I use", "Here is what I remember"),
        ("I switched the default API to Groq", "Noted"),
    ],
)
def test_the_offline_model_tells_questions_from_statements(message, starts):
    memory = {"text": "Eric prefers Groq for the default API", "age": "2 days ago"}
    reply = offline_reply(
        [{"role": "system", "content": block(memory)}, {"role": "user", "content": message}]
    )
    assert reply.startswith(starts)
    assert "Eric prefers Groq for the default API (noted 2 days ago)" in reply


def ask(message, *notes):
    return offline_reply(
        [{"role": "system", "content": block(*notes)}, {"role": "user", "content": message}]
    )


def test_the_offline_model_says_how_many_unrelated_notes_it_was_given():
    notes = [{"text": "brushed teeth", "age": "1 hour ago"}, {"text": "lunch at noon"}]
    reply = ask("what API?", *notes)
    assert reply.startswith("I don't remember anything about that")
    assert "(I was reminded of 2 notes, but none seems related to your question.)" in reply
    one = ask("what API?", notes[0])
    assert "(I was reminded of 1 note, but it does not seem related to your question.)" in one
    assert "reminded" not in ask("what API?")  # nothing recalled: nothing to explain


@pytest.mark.parametrize(
    ("fact", "question"),
    [
        ("My name is Dana and I live in Lisbon", "Which city is my home?"),
        ("I am allergic to shellfish", "Can I eat prawns?"),
        ("I work as a nurse at the hospital", "What do I do for a living?"),
    ],
)
def test_the_offline_model_quotes_a_paraphrase_by_meaning(fact, question):
    assert not set(tokenize(fact)) & set(tokenize(question))  # no shared word at all
    reply = ask(question, {"text": fact, "age": "2 days ago"}, {"text": "brushed teeth"})
    assert reply == f"Here is what I remember about that:\n- {fact} (noted 2 days ago)"


def test_the_unrelated_aside_appears_only_when_nothing_is_quoted():
    reply = ask("Can I eat prawns?", {"text": "I am allergic to shellfish"}, {"text": "hi"})
    assert "reminded" not in reply
    assert "reminded" not in ask("I like tea", {"text": "brushed teeth"})


def test_the_offline_model_never_quotes_a_recalled_question():
    reply = ask("Which city is my home?", {"text": "Which city is my home?"})
    assert reply.startswith("I don't remember anything about that")


def test_related_means_a_similarity_above_the_threshold():
    assert similarity("Can I eat prawns?", "I am allergic to shellfish") > RELATED_SIMILARITY
    assert similarity("Can I eat prawns?", "brushed teeth") < RELATED_SIMILARITY


def test_the_offline_model_without_a_memory_block_is_stateless():
    reply = offline_reply([{"role": "user", "content": "what is my name?"}])
    assert reply.startswith("I don't remember")


@pytest.mark.slow
def test_the_network_guard_itself_catches_a_connection():
    # Without this, the offline test above could pass because the guard never fires.
    result = run_python(
        "-c", GUARD + "import socket\nsocket.create_connection(('203.0.113.1', 80), timeout=1)"
    )
    assert result.returncode == 99
    assert "NETWORK ACCESS" in result.stderr


def test_a_greeting_or_a_thanks_is_returned_not_noted():
    assert ask("ok thanks!", {"text": "I am allergic to shellfish"}) == "You're welcome."
    assert ask("hi", {"text": "I am allergic to shellfish"}) == "Hello!"
