"""The lab's commands, one short line each, from the repository root:

    python code/run.py progress     which milestones pass, and what to do next
    python code/run.py mentor       feedback on your UNDERSTANDING.md answers
    python code/run.py evaluate     recall@k and MRR of the retrieval strategies
    python code/run.py chat         the terminal chat (same as python code/chat_with_memory.py)
    python code/run.py reembed      re-embed a store file with today's embedding model
    python code/run.py backup       a consistent copy of a store file
    python code/run.py pg-user      a user's own PostgreSQL login, printed as its URL

Anything after the command goes to it: `python code/run.py chat --user alice`,
`python code/run.py mentor --help`. The commands live in their own modules
(teaching/progress.py, teaching/mentor.py, evaluation/cli.py, llm/terminal_chat.py,
commands/reembed.py, commands/backup.py, commands/pg_user.py);
this file only picks one, so that each stays importable without running anything.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

COMMANDS = {  # name -> (module whose main(argv) runs it, what it does)
    "progress": ("teaching.progress", "which milestones pass, and what to do next"),
    "mentor": ("teaching.mentor", "feedback on your UNDERSTANDING.md answers"),
    "evaluate": ("evaluation.cli", "recall@k and MRR of the retrieval strategies"),
    "chat": ("chat_with_memory", "the terminal chat with a memory-backed assistant"),
    "reembed": ("commands.reembed", "re-embed a store file with today's embedding model"),
    "backup": ("commands.backup", "a consistent copy of a store file"),
    "pg-user": ("commands.pg_user", "a user's own PostgreSQL login, printed as its URL"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        f"  python code/run.py {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()
    ]
    return "usage:\n" + "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"unknown command {name!r}; the commands are:\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest)


def run(argv: list[str]) -> int:
    """main(argv), quiet when the reader of stdout stops early (`... progress | head`)."""
    try:
        status = main(argv)
        sys.stdout.flush()  # subtle: a closed pipe shows up here, not at the print
        return status
    except BrokenPipeError:
        # Not an error of ours: the reader had enough. Point stdout at devnull so that
        # Python's final flush at exit does not raise the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # code/, whatever the cwd
    sys.exit(run(sys.argv[1:]))
