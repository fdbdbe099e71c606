"""One way to call the extensions: store, embedder, ..., now, then keyword-only options.

And one error policy: a wrong type is a TypeError, a wrong value a ValueError, and a
model that cannot be reached is a ModelCallError (or, where an offline answer exists,
that answer with the reason recorded). Each extension is called here with keyword
arguments in that one order.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from conftest import DAY, NOW
from embedding_helpers import Embedder
from llm import gateway
from memory_store import MemoryStore

EXTENSIONS = (
    "kinds",
    "superseding",
    "importance_rating",
    "consolidation",
    "forgetting",
    "what_to_embed",
    "distillation",
    "context_budget",
)
REAL_MODEL = "openai/gpt-4o-mini"  # never reached: litellm is made to fail below
LEAK = "the staging server leaked memory again overnight"


def public_functions():
    for name in EXTENSIONS:
        module = importlib.import_module(f"extensions.{name}")
        for attr, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                if not attr.startswith("_"):
                    yield f"{name}.{attr}", value


FUNCTIONS = dict(public_functions())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_extension_takes_store_embedder_inputs_now_then_keyword_options(name):
    parameters = list(inspect.signature(FUNCTIONS[name]).parameters.values())
    positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    if "store" in positional:
        assert positional[0] == "store", positional
    if "embedder" in positional:
        assert positional.index("embedder") == positional.index("store") + 1, positional
    if "now" in positional:
        assert positional[-1] == "now", f"after now, options are keyword-only: {positional}"
    options = [
        p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty
    ]
    if "now" in positional or "store" in positional:
        assert options == [], f"options must be keyword-only: {[p.name for p in options]}"
    for p in parameters:  # a model is always optional, and None means the configured one
        if p.name == "model":
            assert p.default is None


@pytest.fixture
def embedder():
    return Embedder("memorylab/hashed-bow-384")


@pytest.fixture
def store(embedder):
    store = MemoryStore()
    embedder.remember(store, "Eric prefers Groq for the default API", kind="semantic", now=NOW)
    for i in range(5):
        embedder.remember(store, f"{LEAK} ({i})", importance=3, now=NOW - 400 * DAY + i)
    return store


def turns(*texts):
    return [{"role": "user", "content": t, "time": NOW + 60 * i} for i, t in enumerate(texts)]


def calls(store, embedder):
    """Each extension that works on a store, called with keywords in the one order."""
    from extensions import (
        consolidation,
        context_budget,
        distillation,
        forgetting,
        importance_rating,
        kinds,
        superseding,
        what_to_embed,
    )

    query = embedder.query(store, "which API should I default to?")
    episode = turns("We moved the staging server to a bigger machine.", "It has 64 GB now.")
    return {
        "kinds.rank_by_kind": lambda **kw: kinds.rank_by_kind(
            store=store, query_embedding=query, now=NOW, **kw
        ),
        "kinds.retrieve_by_kind": lambda **kw: kinds.retrieve_by_kind(
            store=store, query_embedding=query, now=NOW, k=2, **kw
        ),
        "superseding.remember_fact": lambda **kw: superseding.remember_fact(
            store=store, embedder=embedder, text="Eric now prefers OpenAI", now=NOW, **kw
        ),
        "importance_rating.remember_rated": lambda **kw: importance_rating.remember_rated(
            store=store, embedder=embedder, text="We signed the contract", now=NOW, **kw
        ),
        "consolidation.consolidate": lambda **kw: consolidation.consolidate(
            store=store, embedder=embedder, now=NOW, dry_run=True, **kw
        ),
        "forgetting.prune": lambda **kw: forgetting.prune(store=store, now=NOW, dry_run=True, **kw),
        "what_to_embed.remember_episodes": lambda **kw: what_to_embed.remember_episodes(
            store=store, embedder=embedder, turns=episode, **kw
        ),
        "distillation.remember_distilled": lambda **kw: distillation.remember_distilled(
            store=store, embedder=embedder, episode=episode, now=NOW, **kw
        ),
        "context_budget.recall_within_budget": lambda **kw: context_budget.recall_within_budget(
            store=store, query_embedding=query, now=NOW, budget_tokens=400, **kw
        ),
    }


CALLED = (
    "kinds.rank_by_kind",
    "kinds.retrieve_by_kind",
    "superseding.remember_fact",
    "importance_rating.remember_rated",
    "consolidation.consolidate",
    "forgetting.prune",
    "what_to_embed.remember_episodes",
    "distillation.remember_distilled",
    "context_budget.recall_within_budget",
)


@pytest.mark.parametrize("name", CALLED)
def test_every_extension_runs_when_called_with_keywords_in_the_one_order(store, embedder, name):
    assert name in FUNCTIONS
    result = calls(store, embedder)[name]()
    assert result is not None


@pytest.mark.parametrize("name", CALLED)
def test_a_store_of_the_wrong_type_is_a_type_error(store, embedder, name):
    with pytest.raises(TypeError, match="store"):
        call_with(store, embedder, name, store=["not", "a", "store"])


@pytest.mark.parametrize(
    ("now", "error"), [("yesterday", TypeError), (float("nan"), ValueError), (None, TypeError)]
)
@pytest.mark.parametrize("name", [n for n in CALLED if n != "what_to_embed.remember_episodes"])
def test_a_bad_now_is_a_type_error_or_a_value_error_and_changes_nothing(
    store, embedder, name, now, error
):
    before = [(m.id, m.last_accessed, m.superseded_by) for m in store]
    with pytest.raises(error, match="now"):
        call_with(store, embedder, name, now=now)
    assert [(m.id, m.last_accessed, m.superseded_by) for m in store] == before


def call_with(store, embedder, name, **override):
    function = FUNCTIONS[name]
    arguments = inspect.signature(function).parameters
    kwargs = {"store": store}
    if "embedder" in arguments:
        kwargs["embedder"] = embedder
    defaults = {
        "query_embedding": embedder.query(store, "which API should I default to?"),
        "text": "Eric now prefers OpenAI",
        "turns": turns("We moved the staging server."),
        "episode": turns("We moved the staging server."),
        "now": NOW,
        "budget_tokens": 400,
    }
    for needed, value in defaults.items():
        if needed in arguments:
            kwargs[needed] = value
    return function(**{**kwargs, **override})


@pytest.fixture
def unreachable(monkeypatch):
    """litellm fails every chat call, as a model without a key or a network would."""
    litellm = gateway.load_litellm()

    def refuse(**kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(litellm, "completion", refuse)


@pytest.mark.slow
def test_an_unreachable_model_falls_back_with_its_reason_or_raises_model_call_error(
    store, embedder, unreachable
):
    from extensions import consolidation, context_budget, distillation, importance_rating

    rated = importance_rating.remember_rated(
        store, embedder, "We signed the contract", NOW, model=REAL_MODEL
    )
    assert "model failed" in rated.metadata["importance_note"]
    (plan,) = consolidation.consolidate(store, embedder, NOW, model=REAL_MODEL, dry_run=True)
    assert plan.source.startswith("offline (model failed")
    memories = sorted(store, key=lambda m: m.id)
    context = context_budget.fit_to_budget(memories, 120, NOW, model=REAL_MODEL)
    assert context.source == "offline"  # the model's summary failed: the offline one stands
    with pytest.raises(gateway.ModelCallError, match="no route to host"):
        distillation.remember_distilled(
            store, embedder, turns("We moved the staging server."), NOW, model=REAL_MODEL
        )
    assert len(store) == 7  # the rated memory only: no fact of a failed distillation


def test_memories_written_by_an_extension_are_all_or_nothing(store, embedder, monkeypatch):
    from extensions import what_to_embed

    real, calls_made = embedder.remember, []

    def second_write_fails(*args, **kwargs):
        calls_made.append(1)
        if len(calls_made) == 2:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(embedder, "remember", second_write_fails)
    conversation = [
        {"role": "user", "content": "We moved the staging server.", "time": NOW},
        {"role": "user", "content": "The contract with Acme was signed.", "time": NOW + 7200},
    ]
    before = [m.id for m in store]
    with pytest.raises(OSError, match="disk full"):
        what_to_embed.remember_episodes(store, embedder, conversation)
    assert [m.id for m in store] == before  # the first episode is gone too
