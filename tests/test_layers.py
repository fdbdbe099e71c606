"""code/'s layers: imports point down only, no cycle, seven modules at the top.

The imports are read with ast, function-level ones included (an import inside a
function is still an arrow, and the usual way a cycle hides). The rules are those of
code/README.md:

    base/                        imports nothing else of code/
    memory_store, config         stand on base/ alone
    storage/ embeddings/ llm/    stand above them: never import the learner core, the
                                 course's chat and embedding modules, the commands,
                                 teaching/ or the feature packages
    scoring                      stands on base/ and memory_store alone
    practice/                    the learner's exercises and optional milestones: stands on
                                 base/, memory_store, config, the learner core and the layers
                                 under the course's modules (storage/ embeddings/ llm/),
                                 never on teaching/, the features, the commands or the
                                 course's chat and embedding modules; the features may
                                 import it
    extensions/ evaluation/ scale/   never import teaching/
    anything in code/            never imports grading/; no import cycle between modules,
                                 and no loop between folders (imports collapsed to the
                                 folder or top module they are in)
    code/'s top                  the course's six modules and the launcher, nothing else:
                                 every other learner file is in practice/

grading/ is laid out by job, a package each, and held to it the same way
(`grading_breaks`):

    sandbox/     launcher, seccomp, cgroup, worker: stand on layout alone (never the judge,
                 the nbgrader course or the self-check); the worker imports nothing of
                 grading/ (it runs alone, inside the sandbox)
    judge/       grader, verdict, fresh, oracle: never the nbgrader course or the self-check
    course/      editions, autograde, results, gradebook, queue, preprocessors, reshape:
                 never the self-check
    selfcheck/   its runner and its catalogue (mistakes, attacks): imported by nothing but
                 itself and the command line (__main__); the catalogue imports nothing of
                 grading/ but itself (never its runner, nor the grader it tests)
    layout, markers, points   the edition's facts, under every job: import none of them
    no import cycle inside a job, and no loop between the jobs (imports collapsed to the
    package or top module they are in)

Tests plant a violation in a copy of code/ (or grading/) and check that it is caught.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from teaching.milestones import CORE_FILES, EXERCISE_FILES, LEARNER_FILES

CODE = Path(__file__).resolve().parent.parent / "code"

LEARNER_CORE = {"scoring", "retriever"}
PRACTICE = "practice"  # the learner's exercises (checked) and optional milestones (graded)
COURSE_MODULES = {"embedding_helpers", "chat_with_memory"}
BOTTOM = {"memory_store", "config"}  # stand on base/ alone
MIDDLE = {"storage", "embeddings", "llm"}  # what the course's modules stand on
FEATURES = {"extensions", "evaluation", "scale"}
ABOVE_MIDDLE = (
    LEARNER_CORE | {PRACTICE} | COURSE_MODULES | FEATURES | {"teaching", "commands", "run"}
)
PRACTICE_STANDS_ON = {"base", PRACTICE} | BOTTOM | LEARNER_CORE | MIDDLE
TOP_LEVEL = LEARNER_CORE | COURSE_MODULES | BOTTOM | {"run"}  # DESIGN.md's Layout, exactly


def module_names(code: Path) -> dict[str, Path]:
    """'base.validation' -> code/base/validation.py, 'base' -> code/base/__init__.py, ..."""
    names = {}
    for path in code.rglob("*.py"):
        parts = list(path.relative_to(code).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            names[".".join(parts)] = path
    return names


def imports_of(path: Path, name: str) -> set[str]:
    """Every module name an import statement in `path` mentions, relative ones resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..lab import y
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # a submodule?
    return found


def import_graph(code: Path) -> dict[str, set[str]]:
    """module -> the modules of code/ it imports (a name is resolved to its longest module)."""
    names = module_names(code)

    def resolve(imported: str) -> str | None:
        while imported and imported not in names:
            imported = imported.rpartition(".")[0]
        return imported or None

    graph = {}
    for name, path in names.items():
        targets = {resolve(i) for i in imports_of(path, name)} - {None, name}
        graph[name] = targets
    return graph


def imports_grading(code: Path) -> list[str]:
    return sorted(
        name
        for name, path in module_names(code).items()
        if any(i.split(".")[0] == "grading" for i in imports_of(path, name))
    )


GRADING = CODE.parent / "grading"
SHARED = {"layout", "markers", "points"}  # the edition's facts, under every job
CATALOGUE = {"selfcheck", "selfcheck.mistakes", "selfcheck.attacks"}


def grading_graph(folder: Path) -> dict[str, set[str]]:
    """'sandbox.launcher' -> {'sandbox.seccomp', 'layout', ...}: grading/'s own imports."""
    names = module_names(folder)

    def resolve(imported: str) -> str | None:
        imported = imported.removeprefix("grading").removeprefix(".")
        while imported and imported not in names:
            imported = imported.rpartition(".")[0]
        return imported or None

    return {
        name: {resolve(i) for i in imports_of(path, f"grading.{name}")
               if i.split(".")[0] == "grading"} - {None, name}
        for name, path in names.items()
    }  # fmt: skip


def grading_breaks(folder: Path) -> list[str]:
    """Every import inside grading/ that crosses its jobs, as 'a -> b: the rule'."""
    broken = []
    graph = grading_graph(folder)
    for module, targets in sorted(graph.items()):
        job = module.split(".")[0]
        for target in sorted(targets):
            to = target.split(".")[0]
            if module == "sandbox.worker":
                broken.append(f"{module} -> {target}: the worker imports nothing of grading/")
            if job == "sandbox" and to not in {"sandbox", "layout"}:
                broken.append(f"{module} -> {target}: the sandbox stands on layout alone")
            if job == "judge" and to in {"course", "selfcheck"}:
                broken.append(f"{module} -> {target}: judging never writes records")
            if job == "course" and to == "selfcheck":
                broken.append(f"{module} -> {target}: the course never imports the self-check")
            if to == "selfcheck" and job not in {"selfcheck", "__main__"}:
                broken.append(f"{module} -> {target}: only the self-check uses its catalogue")
            if module in CATALOGUE and target not in CATALOGUE:
                broken.append(f"{module} -> {target}: the catalogue imports only itself")
            if job in SHARED and to not in SHARED:
                broken.append(f"{module} -> {target}: layout, markers, points are under every job")
    for loop in cycles(graph):  # one across jobs is a loop between them too: said below
        if len({module.split(".")[0] for module in loop}) == 1:
            broken.append(f"{' <-> '.join(loop)}: no import goes round in a circle")
    for loop in cycles(folder_graph(graph)):
        broken.append(f"{' <-> '.join(loop)}: no loop between grading/'s jobs")
    return broken


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow that breaks a layering rule, as 'a -> b: the rule'."""
    broken = []
    for module, targets in sorted(graph.items()):
        layer = module.split(".")[0]
        for target in sorted(targets):
            to = target.split(".")[0]
            if layer == "base" and to != "base":
                broken.append(f"{module} -> {target}: base/ imports nothing else of code/")
            if layer in BOTTOM and to not in BOTTOM | {"base"}:
                broken.append(f"{module} -> {target}: memory_store and config stand on base/")
            if layer in MIDDLE and to in ABOVE_MIDDLE:
                broken.append(f"{module} -> {target}: storage/, embeddings/, llm/ stand lower")
            if layer == "scoring" and to not in {"base", "memory_store"}:
                broken.append(f"{module} -> {target}: scoring stands on base/ and memory_store")
            if layer == PRACTICE and to not in PRACTICE_STANDS_ON:
                broken.append(f"{module} -> {target}: practice/ stands on the learner core")
            if layer in FEATURES and to == "teaching":
                broken.append(f"{module} -> {target}: features never import teaching/")
    return broken


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph collapsed to folders and top modules: 'storage' -> {'base', ...}."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folder = module.split(".")[0]
        folders.setdefault(folder, set()).update(
            t.split(".")[0] for t in targets if t.split(".")[0] != folder
        )
    return folders


def test_no_import_goes_round_in_a_circle():
    assert cycles(import_graph(CODE)) == []


def test_every_import_points_down_a_layer():
    assert upward_imports(import_graph(CODE)) == []


def test_no_two_folders_import_each_other_even_through_others():
    # subtle: modules can be cycle-free while their folders are not (a -> b.x, b.y -> a)
    assert cycles(folder_graph(import_graph(CODE))) == []


def test_nothing_in_code_imports_the_instructor_tools():
    assert imports_grading(CODE) == []


def test_the_top_of_code_holds_the_course_modules_and_one_launcher():
    top = {path.name for path in CODE.glob("*.py")}
    assert top == {f"{m}.py" for m in TOP_LEVEL}, "every other learner file goes in practice/"
    assert not (CODE / "__init__.py").exists(), "code/ is never a package (`code` is stdlib)"
    assert (CODE / "README.md").is_file(), "code/README.md is the map of code/"


def test_every_learner_file_beyond_the_core_is_in_practice():
    beyond = [name for name in LEARNER_FILES + EXERCISE_FILES if name not in CORE_FILES]
    assert beyond, "the registry names the optional milestones' and the exercises' files"
    assert [name for name in beyond if not name.startswith(f"code/{PRACTICE}/")] == []
    assert all((CODE.parent / name).is_file() for name in LEARNER_FILES + EXERCISE_FILES)


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from . import b\n")
    (tmp_path / "pkg" / "b.py").write_text("from .a import f\n")
    (tmp_path / "top.py").write_text("import pkg.a\n")
    graph = import_graph(tmp_path)
    # `from . import b` imports the package pkg first, then its module pkg.b
    assert graph == {"pkg": set(), "pkg.a": {"pkg", "pkg.b"}, "pkg.b": {"pkg.a"}, "top": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


@pytest.fixture
def code_copy(tmp_path):
    copy = tmp_path / "code"
    shutil.copytree(CODE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def plant(path: Path, source: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + source, encoding="utf-8")


def test_a_planted_upward_import_is_caught(code_copy):
    plant(
        code_copy / "base" / "validation.py",
        "def _late():\n    from scoring import recency_score\n",
    )
    plant(code_copy / "extensions" / "kinds.py", "from teaching.milestones import MILESTONES\n")
    plant(code_copy / "memory_store.py", "def _late():\n    import storage.rows\n")
    plant(code_copy / "storage" / "rows.py", "def _late():\n    import embedding_helpers\n")
    plant(code_copy / "storage" / "limits.py", "def _late():\n    import practice.reflection\n")
    plant(code_copy / "practice" / "reflection.py", "def _late():\n    import extensions.kinds\n")
    plant(code_copy / "practice" / "persistence.py", "from teaching import milestones\n")
    assert upward_imports(import_graph(code_copy)) == [
        "base.validation -> scoring: base/ imports nothing else of code/",
        "extensions.kinds -> teaching.milestones: features never import teaching/",
        "memory_store -> storage.rows: memory_store and config stand on base/",
        "practice.persistence -> teaching: practice/ stands on the learner core",
        "practice.persistence -> teaching.milestones: practice/ stands on the learner core",
        "practice.reflection -> extensions.kinds: practice/ stands on the learner core",
        "storage.limits -> practice.reflection: storage/, embeddings/, llm/ stand lower",
        "storage.rows -> embedding_helpers: storage/, embeddings/, llm/ stand lower",
    ]


def test_a_planted_folder_loop_is_caught(code_copy):
    # No module cycle: storage.rows -> embeddings.minilm, embeddings.hybrid -> storage.sqlite_file
    plant(code_copy / "storage" / "rows.py", "def _late():\n    import embeddings.minilm\n")
    plant(code_copy / "embeddings" / "hybrid.py", "def _late():\n    import storage.sqlite_file\n")
    graph = import_graph(code_copy)
    assert cycles(graph) == []
    assert cycles(folder_graph(graph)) == [["embeddings", "storage"]]


def test_a_planted_cycle_is_caught(code_copy):
    # llm/offline_chat.py imports llm/memory_block.py; a late import back closes a circle
    plant(code_copy / "llm" / "memory_block.py", "def _late():\n    import llm.offline_chat\n")
    assert cycles(import_graph(code_copy)) == [["llm.memory_block", "llm.offline_chat"]]


def test_a_planted_grading_import_is_caught(code_copy):
    plant(code_copy / "config.py", "import grading.layout\n")
    assert imports_grading(code_copy) == ["config"]


@pytest.mark.parametrize(
    "package", sorted(p.name for p in CODE.iterdir() if (p / "__init__.py").is_file())
)
def test_every_module_of_a_package_is_named_in_its_map(package):
    """Each package's docstring lists its modules, so the map never leaves one out."""
    folder = CODE / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    modules += [f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()]
    missing = [name for name in sorted(modules) if name not in (doc or "")]
    assert not missing, f"code/{package}/__init__.py does not name {missing}"


@pytest.mark.skipif(not GRADING.is_dir(), reason="the student edition has no grading/")
def test_grading_imports_keep_to_their_jobs():
    assert grading_breaks(GRADING) == []


@pytest.mark.skipif(not GRADING.is_dir(), reason="the student edition has no grading/")
def test_a_planted_crossing_in_grading_is_caught(tmp_path):
    copy = tmp_path / "grading"
    shutil.copytree(GRADING, copy, ignore=shutil.ignore_patterns("__pycache__"))
    plant(copy / "sandbox" / "worker.py", "import grading.layout\n")
    plant(
        copy / "sandbox" / "cgroup.py", "def _late():\n    from grading.course.queue import claim\n"
    )
    plant(copy / "judge" / "verdict.py", "def _late():\n    import grading.course.results\n")
    plant(copy / "course" / "queue.py", "def _late():\n    import grading.selfcheck.mistakes\n")
    plant(copy / "selfcheck" / "attacks.py", "def _late():\n    from .runner import build\n")
    plant(copy / "points.py", "def _late():\n    from grading.judge.fresh import seeded\n")
    assert grading_breaks(copy) == [
        "course.queue -> selfcheck.mistakes: the course never imports the self-check",
        "course.queue -> selfcheck.mistakes: only the self-check uses its catalogue",
        "judge.verdict -> course.results: judging never writes records",
        "points -> judge.fresh: layout, markers, points are under every job",
        "sandbox.cgroup -> course.queue: the sandbox stands on layout alone",
        "sandbox.worker -> layout: the worker imports nothing of grading/",
        "selfcheck.attacks -> selfcheck.runner: the catalogue imports only itself",
        "selfcheck.attacks <-> selfcheck.runner: no import goes round in a circle",
        "course <-> judge <-> points <-> sandbox <-> selfcheck: no loop between grading/'s jobs",
    ]


@pytest.mark.skipif(not GRADING.is_dir(), reason="the student edition has no grading/")
def test_a_planted_cycle_inside_one_job_of_grading_is_caught(tmp_path):
    # verdict.py imports objects.py; a late import back closes a circle inside judge/
    copy = tmp_path / "grading"
    shutil.copytree(GRADING, copy, ignore=shutil.ignore_patterns("__pycache__"))
    plant(
        copy / "judge" / "objects.py", "def _late():\n    from grading.judge.verdict import CELLS\n"
    )
    assert grading_breaks(copy) == [
        "judge.objects <-> judge.verdict: no import goes round in a circle"
    ]
