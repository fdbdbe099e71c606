"""Every workbook notebook is committed clean and runs top to bottom, offline and quietly.

"Quietly" means no error output and nothing on stderr: a warning a learner sees is a
question they will ask, and nbgrader scores a graded cell that writes to stderr as zero.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# Run first, invisibly, in every executed notebook: any non-local connection fails the cell.
NETWORK_GUARD = textwrap.dedent(
    """
    import socket as _socket
    _real_connect, _real_getaddrinfo = _socket.socket.connect, _socket.getaddrinfo

    def _is_local(host):
        host = host.decode() if isinstance(host, bytes) else host
        return not isinstance(host, str) or host in ("", "localhost", "::1") or host.startswith(
            ("127.", "/")
        )

    def _guarded_connect(sock, address, *args, **kwargs):
        host = address[0] if isinstance(address, tuple) else address
        if not _is_local(host):
            raise RuntimeError(f"the notebook tried to reach the network: {address!r}")
        return _real_connect(sock, address, *args, **kwargs)

    def _guarded_getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            raise RuntimeError(f"the notebook tried to look up {host!r} on the network")
        return _real_getaddrinfo(host, *args, **kwargs)

    _socket.socket.connect, _socket.getaddrinfo = _guarded_connect, _guarded_getaddrinfo
    del _socket
    """
)


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


def execute(path: Path) -> nbformat.NotebookNode:
    """Run a copy of the notebook in its own folder, as a learner's 'Run All' would."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(NETWORK_GUARD))
    env_before = dict(os.environ)
    os.environ["PYTHONWARNINGS"] = "default"  # show every warning, so the test sees it
    try:
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    del nb.cells[0]
    return nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs_top_to_bottom_without_errors_or_stderr(path):
    nb = execute(path)
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
    assert not problems, f"{path.name}:\n" + "\n\n".join(problems)
