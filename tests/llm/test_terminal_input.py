"""The terminal chat reads bytes it cannot decode without a traceback.

Run as a real process: a line of stdin that is not UTF-8 is refused with a message and
the lines around it still reach the chat; a --user whose bytes are not UTF-8 gets a usage
error naming the option.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CHAT = Path(__file__).resolve().parents[2] / "code" / "chat_with_memory.py"
pytestmark = pytest.mark.slow  # a subprocess each


def run(args: list[bytes], stdin: bytes, tmp_path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "MEMORY_LAB_DB": ":memory:",
        "MEMORY_LAB_ENV_FILE": "",
        "MEMORY_LAB_EMBED_MODEL": "memorylab/hashed-bow-384",
        "PYTHONIOENCODING": "utf-8",
    }
    return subprocess.run(
        [os.fsencode(sys.executable), os.fsencode(CHAT), *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


@pytest.mark.needs_milestones(4)  # reaches the learner's retriever
def test_a_line_that_is_not_utf8_is_refused_and_the_chat_goes_on(tmp_path):
    stdin = b"I live in Lisbon\n\xff\xfe caf\xe9\nI am allergic to shellfish\n/memories\n/quit\n"
    done = run([], stdin, tmp_path)
    out = done.stdout.decode()
    assert done.returncode == 0 and done.stderr == b""
    assert "error: that line holds bytes that are not UTF-8 text, so it was not stored" in out
    assert "I live in Lisbon" in out and "I am allergic to shellfish" in out
    assert "2 memories were stored" in out


def test_a_user_name_that_is_not_utf8_gets_a_usage_error_not_a_traceback(tmp_path):
    done = run([b"--user", b"al\xffice"], b"/quit\n", tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err
    assert "--user must be text in your terminal's encoding (UTF-8)" in err
