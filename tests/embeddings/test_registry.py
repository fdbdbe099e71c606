"""embeddings/registry.py: each offline model's name is read there once, into its object."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from config import OFFLINE_CHAT_MODEL, OFFLINE_EMBED_MODEL, PROVIDER, TOY_EMBED_MODEL
from conftest import NOW
from embedding_helpers import Embedder
from embeddings import registry
from embeddings.hashed_words import HashedWords
from embeddings.hybrid import LEXICAL, MIX, Hybrid
from embeddings.minilm import MiniLM
from embeddings.model import OfflineModel
from embeddings.registry import Entry, offline_model
from memory_store import MemoryStore


@pytest.mark.parametrize(
    ("name", "kind", "dimensions"),
    [
        ("memorylab/hashed-bow-384", HashedWords, 384),
        ("memorylab/hashed-bow-8", HashedWords, 8),
        ("memorylab/hashed-bow-65536", HashedWords, 65536),
        ("memorylab/minilm-l6-v2", MiniLM, 384),
        ("memorylab/minilm-words-256", Hybrid, 384 + 256),
        ("memorylab/minilm-words-8", Hybrid, 384 + 8),
        ("memorylab/minilm-words-1616", Hybrid, 2000),  # pgvector's HNSW limit, exactly
    ],
)
def test_each_name_is_the_model_of_its_class_and_size(name, kind, dimensions):
    model = offline_model(name)
    assert type(model) is kind
    assert (model.name, model.dimensions) == (name, dimensions)


def test_the_configured_defaults_are_the_tuned_hybrid_and_the_toy():
    assert offline_model(OFFLINE_EMBED_MODEL) == Hybrid(MiniLM(), HashedWords(LEXICAL), MIX)
    assert offline_model(TOY_EMBED_MODEL) == HashedWords(384)
    assert repr(offline_model(OFFLINE_EMBED_MODEL)) == (
        f"Hybrid(MiniLM(), HashedWords({LEXICAL}), mix={MIX})"
    )


@pytest.mark.parametrize("entry", registry.MODELS, ids=lambda entry: entry.name)
def test_every_registry_line_makes_models_named_as_the_line_says(entry):
    sizes = [None] if entry.sizes is None else [entry.sizes[0], entry.sizes[-1]]
    for size in sizes:
        model = entry.make() if size is None else entry.make(size)
        assert offline_model(model.name) == model
        if size is not None:
            assert model.name == entry.name[:-1] + str(size)
    if entry.example:
        assert offline_model(entry.example).name == entry.example


@pytest.mark.parametrize(
    "name", ["text-embedding-3-small", "ollama/nomic-embed-text", "openai/memorylab/x"]
)
def test_a_real_models_name_is_no_offline_model(name):
    assert offline_model(name) is None
    assert not registry.is_offline(name)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("memorylab/hashed-bow-4", "with N from 8 to 65536, e.g. memorylab/hashed-bow-384"),
        ("memorylab/hashed-bow-65537", "with N from 8 to 65536"),
        ("memorylab/hashed-bow-", "expected memorylab/hashed-bow-N"),
        ("memorylab/hashed-bow-064", "expected memorylab/hashed-bow-N"),  # one model, one name
        ("memorylab/hashed-bow-\u00b2", "expected memorylab/hashed-bow-N"),
        ("memorylab/minilm-words-0", "with N from 8 to 1616, e.g. memorylab/minilm-words-1616"),
        ("memorylab/minilm-words-1617", "with N from 8 to 1616"),
        ("memorylab/minilm-words-x", "expected memorylab/minilm-words-N"),
    ],
)
def test_a_bad_size_names_the_rule_and_an_example(name, message):
    with pytest.raises(ValueError, match=f"unknown offline embedding model '{name}': .*{message}"):
        offline_model(name)


@pytest.mark.parametrize(
    "name",
    ["memorylab/word2vec", "memorylab/offline-chat", "memorylab/minilm-l6-v2 ", "memorylab/"],
)
def test_an_unknown_offline_name_lists_the_offline_models(name):
    listing = (
        r"the offline models are memorylab/minilm-words-N \(meaning and words, N from 8 to "
        r"1616; the default is memorylab/minilm-words-1616\), "
        r"memorylab/minilm-l6-v2 \(meaning\) and "
        r"memorylab/hashed-bow-N \(words, N from 8 to 65536\)$"
    )
    with pytest.raises(ValueError, match=listing):
        offline_model(name)


class Letters(OfflineModel):
    """A made-up model: how often a, b and c occur in a text."""

    name, dimensions = "memorylab/letters", 3

    def embed_documents(self, texts, truncated=None):
        return [tuple(float(text.count(c)) for c in "abc") for text in texts]


def test_a_new_offline_model_is_one_class_and_one_registry_line(monkeypatch):
    line = Entry("memorylab/letters", "letters", Letters)
    monkeypatch.setattr(registry, "MODELS", (*registry.MODELS, line))
    embedder, store = Embedder("memorylab/letters"), MemoryStore()
    memory = embedder.remember(store, "abba", now=NOW)
    assert memory.embedding_model == "memorylab/letters"
    assert tuple(memory.embedding) == (2.0, 2.0, 0.0)
    assert embedder.query(store, "cab") == (1.0, 1.0, 1.0)


# --- nobody else reads a name ----------------------------------------------------------------
#
# Outside code/embeddings/ a model name is only ever passed along whole. The rule, checked on
# code/, tools/ and benchmarks/ with ast (docstrings and comments are prose, and free):
#   - a string that mentions the provider is a whole name the registry knows, or the offline
#     chat model's, or (in config.py) the provider itself: no prefix like "memorylab/" or
#     "memorylab/hashed-bow-", whole or as a piece of an f-string;
#   - no string method (startswith, split, removeprefix, ...) is called with the provider,
#     except by config.is_offline, the one test of a name's provider (config.py stands under
#     embeddings/, so it cannot ask the registry).

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "code"
NAME = re.compile(rf"{PROVIDER}/[\w.-]*")  # "memorylab-pg" and the like are no model names
STRING_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix", "split", "rsplit"}
STRING_METHODS |= {"partition", "rpartition", "find", "rfind", "index", "rindex", "replace"}


def scanned_files() -> list[Path]:
    files = [*CODE.rglob("*.py"), *(ROOT / "tools").rglob("*.py")]
    files += (ROOT / "benchmarks").rglob("*.py")
    return sorted(p for p in files if (CODE / "embeddings") not in p.parents)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def _mentions_provider(node: ast.AST) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            if PROVIDER in inner.value:
                return True
        if isinstance(inner, ast.Name | ast.Attribute):
            if (inner.id if isinstance(inner, ast.Name) else inner.attr) == "PROVIDER":
                return True
    return False


def _whole_name(name: str, in_config: bool) -> bool:
    if name == OFFLINE_CHAT_MODEL or (in_config and name == PROVIDER):
        return True
    try:
        return offline_model(name) is not None
    except ValueError:
        return False


def name_parsing(source: str, path: str) -> list[str]:
    """Where `source` reads a model name instead of passing it whole: 'path:line what'."""
    tree = ast.parse(source, path)
    docstrings, in_config = _docstrings(tree), Path(path).name == "config.py"
    allowed = set()  # the nodes inside config.is_offline
    for node in ast.walk(tree):
        if in_config and isinstance(node, ast.FunctionDef) and node.name == "is_offline":
            allowed |= {id(inner) for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            for name in NAME.findall(node.value):
                if not _whole_name(name, in_config):
                    found.append(f"{path}:{node.lineno} the string {node.value!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if node.func.attr in STRING_METHODS and id(node) not in allowed:
                if any(_mentions_provider(a) for a in arguments):
                    found.append(f"{path}:{node.lineno} .{node.func.attr}() with the provider")
    return found


def test_no_module_outside_embeddings_reads_a_model_name():
    files = scanned_files()
    assert CODE / "embedding_helpers.py" in files and CODE / "llm" / "gateway.py" in files
    assert not any("embeddings" in p.relative_to(ROOT).parts[:2] for p in files)
    found = [f for p in files for f in name_parsing(p.read_text("utf-8"), str(p.relative_to(ROOT)))]
    assert not found, "ask embeddings/registry.py instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "planted",
    [
        'model.startswith("memorylab/")',
        'name[len("memorylab/hashed-bow-") :]',
        'f"memorylab/hashed-bow-{size}"',
        "model.split(PROVIDER + '/')",
        'model.removeprefix(f"{config.PROVIDER}/")',
        'help="an offline model, memorylab/minilm-bow-N"',
    ],
)
def test_the_scan_catches_a_planted_parse(planted):
    assert name_parsing(f"x = {planted}\n", "code/planted.py")


@pytest.mark.parametrize(
    "passed_whole",
    [
        'Embedder("memorylab/hashed-bow-384")',
        'CHAT_MODEL = "memorylab/offline-chat"',
        'f"{PROVIDER}/{model}"',  # putting a name together is not reading one
        'def f():\n    """memorylab/minilm-bow-N, in prose."""',
    ],
)
def test_the_scan_lets_a_whole_name_pass(passed_whole):
    assert name_parsing(f"{passed_whole}\n", "code/planted.py") == []
