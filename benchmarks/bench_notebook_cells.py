"""How long a learner waits on each notebook cell: run the notebooks, report the slowest cells.

    python benchmarks/bench_notebook_cells.py                     # every notebook, 3 runs
    python benchmarks/bench_notebook_cells.py 00 01 --runs 5      # notebooks by number
    python benchmarks/bench_notebook_cells.py --json timings.json # also save every time

Each run executes one notebook top to bottom in a fresh kernel, one notebook at a time (as
a learner's Run All would, nothing else competing for the machine), with the offline
defaults the tests use. A cell's time is the kernel's, from nbclient's timestamps: from the
moment the kernel starts the cell to its reply. "kernel" is the time to a kernel ready for
the first cell. The table shows medians over the runs.

Deliberately left out: the browser. Drawing a widget in JupyterLab adds front-end time a
kernel cannot see; the browser test covers that the pictures draw at all.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

sys.modules.setdefault("rfc3987_syntax", None)  # this process builds no IRI grammar either
import nbformat  # noqa: E402 (after the line above)
from nbclient import NotebookClient  # noqa: E402
from traitlets.config import Config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def run_once(path: Path) -> dict:
    """{'kernel': s, 'total': s, 'cells': [s per code cell, None for markdown]}, one run."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        config=Config({"KernelManager": {"transport_encryption": "auto"}}),  # as in JupyterLab
        kernel_name="python3",
        timeout=600,
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.perf_counter()
    with client.setup_kernel():
        kernel = time.perf_counter() - started
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    total = time.perf_counter() - started
    cells = []
    for cell in nb.cells:
        stamps = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type == "code" and "shell.execute_reply" in stamps:
            cells.append(
                seconds_between(stamps["iopub.execute_input"], stamps["shell.execute_reply"])
            )
        else:
            cells.append(None)
    errors = [o.ename for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    return {"kernel": kernel, "total": total, "cells": cells, "errors": errors}


def first_line(cell) -> str:
    lines = [line for line in cell.source.splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return text if len(text) <= 60 else text[:57] + "..."


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebook numbers or names (default: all)")
    parser.add_argument("--runs", type=int, default=3, help="runs per notebook (default 3)")
    parser.add_argument("--top", type=int, default=15, help="slowest cells to show")
    parser.add_argument("--json", type=Path, help="write every measured time to this file")
    args = parser.parse_args(argv)

    for name in [n for n in os.environ if n.startswith("MEMORY_LAB_")]:
        del os.environ[name]
    os.environ.update(MEMORY_LAB_ENV_FILE="", MEMORY_LAB_DB=":memory:")  # the tests' defaults
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.notebooks:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.notebooks)]

    results, rows = {}, []
    for path in paths:
        runs = [run_once(path) for _ in range(args.runs)]
        nb = nbformat.read(path, as_version=4)
        median = {
            "kernel": statistics.median(r["kernel"] for r in runs),
            "total": statistics.median(r["total"] for r in runs),
        }
        print(
            f"{path.stem:<32} total {median['total']:6.1f} s  kernel {median['kernel']:4.1f} s"
            + (f"  errors: {runs[0]['errors']}" if runs[0]["errors"] else ""),
            flush=True,
        )
        for index, cell in enumerate(nb.cells):
            times = [r["cells"][index] for r in runs if r["cells"][index] is not None]
            if times:
                rows.append((statistics.median(times), path.stem, index, first_line(cell)))
        results[path.name] = {"median": median, "runs": runs}

    rows.sort(reverse=True)
    print(f"\nslowest cells (median of {args.runs} runs):")
    print(f"| {'notebook':<30} | cell | {'first line':<60} | seconds |")
    print(f"|{'-' * 32}|------|{'-' * 62}|---------|")
    for seconds, stem, index, line in rows[: args.top]:
        print(f"| {stem:<30} | {index:>4} | {line:<60} | {seconds:7.2f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
