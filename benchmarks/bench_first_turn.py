"""Time a fresh process's first offline chat turn, and how long the process takes to exit.

    python benchmarks/bench_first_turn.py                      # 5 fresh processes
    python benchmarks/bench_first_turn.py --runs 9
    python benchmarks/bench_first_turn.py --code OTHER/code    # another checkout's

Each run starts a new Python process that imports chat_with_memory, makes a store of three
notes with the offline models and asks one question, the way `python code/run.py chat`
starts. The child reports, from its own clock:

    import s       importing chat_with_memory (and what it imports at the top)
    first turn s   the first chat_with_memory call: MiniLM loads, the reply is made
    litellm        whether litellm was imported by the end of the turn

and the parent measures the whole process, start to exit ("process s"), so what the
interpreter does after the last line (litellm's teardown, say) is counted too. Medians
over --runs; a busy machine moves the seconds, so compare two runs made one after the other.

Results: the offline turn before and after the offline chat model was called directly
(commit 0d51c66; "before" is its parent's code/, exported with `git archive 0d51c66^`
and passed with --code), one run of 5 fresh processes each, back to back on the 2-core
machine (load average 1 before the first run, 6 after each), medians:

                                      import s   first turn s   process s   litellm
    through litellm (0d51c66^)          0.30        15.97          19.24       yes
    offline model called directly       0.31         1.66           2.30       no

The first turn is 9.6x shorter and the whole process 8.4x; docs/speed.md has the same
comparison made earlier on a busier machine (28.41 s -> 2.82 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, CODE)
from chat_with_memory import chat_with_memory
from config import Settings
from embedding_helpers import Embedder
from memory_store import MemoryStore
t1 = time.perf_counter()
settings = Settings(db_path=None)
store = MemoryStore()
embedder = Embedder(settings.embed_model)
for i, text in enumerate(["I live in Lisbon with my partner", "I am allergic to shellfish",
                          "The team lunch is on Friday at noon"]):
    embedder.remember(store, text, kind="semantic", importance=5, now=1_000_000.0 + i)
result = chat_with_memory("Which city is my home?", store, now=1_000_100.0,
                          settings=settings, embedder=embedder, write_back=False)
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "turn": t2 - t1, "litellm": "litellm" in sys.modules,
                  "reply": result.reply.splitlines()[0]}))
"""


def one_run(code: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
    env["MEMORY_LAB_ENV_FILE"] = ""
    env["MEMORY_LAB_DB"] = ":memory:"
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", f"CODE = {str(code)!r}\n" + CHILD],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    process = time.perf_counter() - start
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["process"] = process
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", type=Path, default=ROOT / "code", help="a checkout's code/")
    args = parser.parse_args(argv)
    runs = [one_run(args.code.resolve()) for _ in range(args.runs)]
    median = {key: statistics.median(r[key] for r in runs) for key in ("import", "turn", "process")}
    print(f"{args.runs} fresh processes, medians (seconds)")
    print(f"  import        {median['import']:.2f}")
    print(f"  first turn    {median['turn']:.2f}")
    print(f"  process       {median['process']:.2f}   (start to exit)")
    print(f"  litellm imported: {sorted({r['litellm'] for r in runs})}")
    print(f"  reply: {runs[-1]['reply']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
