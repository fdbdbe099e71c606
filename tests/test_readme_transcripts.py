"""The README's chat transcripts are what the shipped chat prints, turn for turn.

Each ``` block of the README's "Chat with your memory" section that starts with "you> "
is replayed: its messages are typed into the terminal chat (llm/terminal_chat.py through
chat_with_memory.main, offline, memories in this process only), and what the chat
prints must be the block, line for line.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from chat_with_memory import main

ROOT = Path(__file__).resolve().parent.parent


def transcripts() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Chat with your memory") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"^```\w*\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    return [block for block in blocks if block.startswith("you> ")]


def test_the_readme_shows_the_chat():
    assert len(transcripts()) >= 2


@pytest.mark.needs_milestones(4)
@pytest.mark.parametrize("block", transcripts(), ids=lambda b: b.splitlines()[0][5:30])
def test_a_readme_transcript_is_what_the_chat_prints(block):
    said = [line[len("you> ") :] for line in block.splitlines() if line.startswith("you> ")]
    typed = iter([*said, "/quit"])
    out = io.StringIO()
    assert main(["--db", ":memory:"], input_fn=lambda prompt: next(typed), output=out) == 0
    shown = out.getvalue().splitlines()
    # the banner and the goodbye frame it; each reply follows the message it answers
    body = shown[shown.index(next(s for s in shown if s.startswith("assistant>"))) :]
    body = body[: next(i for i, s in enumerate(body) if s.startswith("Goodbye"))]
    expected = [line for line in block.splitlines() if not line.startswith("you> ")]
    assert body == expected
