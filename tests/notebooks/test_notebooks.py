"""Every workbook notebook is committed clean and runs top to bottom, offline and quietly.

"Quietly" means no error output and nothing on stderr: a warning a learner sees is a
question they will ask, and nbgrader scores a graded cell that writes to stderr as zero.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest
from recorded import recorded

import network_guard
from conftest import STUDENT_EDITION

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# Run first, invisibly, in every executed notebook: any non-local connection fails the cell.
NETWORK_GUARD = network_guard.first_line("raise")


def ids(paths):
    return [p.name for p in paths]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, (
        f"{path.name}: cells {dirty} carry outputs or execution counts; clear them with "
        f"`jupyter nbconvert --clear-output --inplace {path.relative_to(ROOT)}`"
    )
    assert "widgets" not in nb.metadata, f"{path.name}: saved widget state in its metadata"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_is_valid_nbformat(path):
    nbformat.validate(nbformat.read(path, as_version=4))


RUNNER = """
import sys
sys.modules.setdefault("rfc3987_syntax", None)  # no IRI grammar to build: teaching/notebook.py
import nbformat
from nbclient import NotebookClient
from traitlets.config import Config
source, target, guard = sys.argv[1:4]
nb = nbformat.read(source, as_version=4)
with open(guard) as file:
    nb.cells.insert(0, nbformat.v4.new_code_cell(file.read()))
# Encrypted like JupyterLab's kernels (tools/jupyter-settings): no "TCP without encryption".
config = Config({"KernelManager": {"transport_encryption": "auto"}})
NotebookClient(nb, config=config, timeout=300, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[4]}}).execute()
del nb.cells[0]
nbformat.write(nb, target)
"""


class Run(NamedTuple):
    notebook: nbformat.NotebookNode
    stderr: str  # what the runner and the kernel process logged, outside the notebook


def execute(path: Path, workdir: Path, predictions: bool = not STUDENT_EDITION) -> Run:
    """Run the notebook in its own folder, as a learner's 'Run All' would; return the result.

    Each notebook runs in its own Python process, so several can run at once. The kernel
    inherits this environment: no MEMORY_LAB_* setting or .env file of the machine, and
    every warning shown (so that the test sees it on stderr). In the master, empty
    predictions are recorded first (tests/notebooks/recorded.py), so it runs through; the
    student edition's stop at them.
    """
    guard, target = workdir / f"{path.stem}.guard.py", workdir / path.name
    guard.write_text(NETWORK_GUARD)
    if predictions:
        source = workdir / f"{path.stem}.recorded.ipynb"
        nbformat.write(recorded(nbformat.read(path, as_version=4)), source)
    else:
        source = path
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
    env.update(PYTHONWARNINGS="default", MEMORY_LAB_ENV_FILE="", MEMORY_LAB_DB=":memory:")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(source), str(target), str(guard), str(path.parent)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{path.name} could not be executed:\n{done.stderr[-3000:]}")
    return Run(nbformat.read(target, as_version=4), done.stderr)


class OnDemand(dict):
    """Notebook -> its run, executed the first time a test asks for it."""

    def __init__(self, workdir: Path) -> None:
        super().__init__()
        self.workdir = workdir

    def __missing__(self, path: Path):
        self[path] = execute(path, self.workdir)
        return self[path]


@pytest.fixture(scope="session")
def executed(request, tmp_path_factory) -> dict:
    """Every selected notebook, executed.

    Under pytest-xdist (the default, `-n logical` in pyproject.toml) each worker runs the
    notebooks of its own tests when they come, beside the other tests. Without it (`-n 0`,
    or `-o addopts=`), several kernels run at once here to keep the run short.
    """
    workdir = tmp_path_factory.mktemp("executed")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return OnDemand(workdir)
    wanted = [
        item.callspec.params["path"]
        for item in request.session.items
        if getattr(item, "originalname", "") == RUNS_TEST
    ]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {path: pool.submit(execute, path, workdir) for path in wanted}
        return {path: future.exception() or future.result() for path, future in futures.items()}


RUNS_TEST = "test_notebook_runs_top_to_bottom_without_errors_or_stderr"


WAITS = ("NotImplementedYet", "NotImplementedError", "PredictionMissing")


def first_error_is_a_stub(nb) -> str | None:
    """In the student edition, the first error's message when it is a learner stub's, or an
    empty prediction's ("make your prediction first")."""
    if not STUDENT_EDITION:
        return None
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                if output.ename in WAITS:
                    return output.evalue.splitlines()[0] if output.evalue else output.ename
                return None
    return None


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs_top_to_bottom_without_errors_or_stderr(path, executed):
    run = executed[path]
    if isinstance(run, BaseException):
        raise run
    nb = run.notebook
    stub = first_error_is_a_stub(nb)
    if stub:  # the student edition: the notebook runs up to the learner's first stub
        needed = "your prediction" if stub.startswith("make your prediction") else "your code"
        pytest.skip(f"{path.name} stops where {needed} is needed: {stub}")
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                trace = "\n".join(output.traceback[-3:])
                problem = f"raised {output.ename}: {output.evalue}\n{trace}"
            elif output.output_type == "stream" and output.name == "stderr":
                problem = f"wrote to stderr:\n{output.text}"
            else:
                continue
            code = textwrap.indent(cell.source[:400], "    | ")
            problems.append(f"cell {index} {problem}\n{code}")
    if "without encryption" in run.stderr:  # the kernel's log, in JupyterLab's terminal too
        problems.append(f"the kernel warned about its connection:\n{run.stderr[-2000:]}")
    assert not problems, f"{path.name}:\n" + "\n\n".join(problems)


@pytest.mark.slow
def test_an_empty_prediction_stops_run_all_before_any_fix_is_shown(tmp_path):
    """06a as a learner's Run All meets it, predictions empty: the first error is "make your
    prediction first" at failure 1's blame cell, and no cell that shows a fix prints it."""
    path = ROOT / "notebooks" / "06a_failure_modes.ipynb"
    nb = execute(path, tmp_path, predictions=False).notebook
    errors = [
        (index, output)
        for index, cell in enumerate(nb.cells)
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]
    assert errors, "06a ran through with every prediction empty"
    index, first = errors[0]
    if first.ename in ("NotImplementedYet", "NotImplementedError"):
        pytest.skip(f"06a stops earlier, where your code is needed: {first.evalue}")
    assert first.ename == "PredictionMissing", (first.ename, first.evalue)
    assert first.evalue.startswith("make your prediction first"), first.evalue
    assert "check_blame(1, blame)" in nb.cells[index].source
    assert not any(o.output_type == "stream" for o in nb.cells[index].outputs)
    fixes = [cell for cell in nb.cells if "require_blame(" in cell.source]
    assert len(fixes) >= 3
    for cell in fixes:  # run one by one, past the stop: each still waits for its prediction
        assert [o.output_type for o in cell.outputs] == ["error"], cell.source[:200]
        assert cell.outputs[0].ename == "PredictionMissing"
