"""The default hybrid embedding (embeddings/hybrid.py), its Embedder paths, and BM25."""

from __future__ import annotations

import math

import numpy as np
import pytest

from base.text import tokenize
from config import OFFLINE_EMBED_MODEL
from conftest import NOW
from embedding_helpers import Embedder
from embeddings import hybrid, minilm
from embeddings.hashed_words import HashedWords
from embeddings.registry import offline_model
from evaluation.bm25 import BM25
from evaluation.strategies import STRATEGIES, Strategy, same_decay
from memory_store import MemoryStore
from scoring import relevance_score

MODEL = OFFLINE_EMBED_MODEL
HYBRID = offline_model(MODEL)
WORDS = HashedWords(hybrid.LEXICAL)  # the hybrid's lexical half
FACTS = [
    "My name is Dana and I live in Lisbon",
    "I am allergic to shellfish",
    "I live with two cats",
    "Dana's sister lives in Porto",
]


@pytest.fixture
def store():
    store = MemoryStore()
    embedder = Embedder(MODEL)
    for text in FACTS:
        embedder.remember(store, text, now=NOW)
    return store


def _halves(vector):
    v = np.asarray(vector, dtype=np.float64)
    return v[: minilm.DIMENSIONS], v[minilm.DIMENSIONS :]


def _unit(v):
    n = np.linalg.norm(v)
    return v / n if n else v


def test_the_default_model_is_the_hybrid_within_the_dimension_limit():
    assert Embedder().model == MODEL
    assert hybrid.Hybrid(minilm.MiniLM(), WORDS, hybrid.MIX) == HYBRID
    vector = Embedder().embed_one(FACTS[0])
    assert len(vector) == minilm.DIMENSIONS + hybrid.LEXICAL <= hybrid.MAX_DIMENSIONS
    assert 0 < hybrid.MIX < 1


def test_plain_cosine_is_the_mix_of_meaning_and_idf_weighted_words(store):
    query = "Where does Dana live?"
    q = Embedder(MODEL).query(store, query)
    memory = store.get("m1")
    semantic = float(minilm.embed_texts([query])[0] @ minilm.embed_texts([memory.text])[0])
    idf = HYBRID.query_context(store)
    words = np.zeros(hybrid.LEXICAL)
    for word in tokenize(query):
        words[WORDS.bucket(word)] += idf.idf(WORDS.bucket(word))  # its rarity, once
    bag = WORDS.presence(memory.text)  # each word of the memory once
    lexical = float(_unit(words) @ np.asarray(bag))
    want = hybrid.MIX * semantic + (1 - hybrid.MIX) * lexical
    assert relevance_score(q, memory.embedding) == pytest.approx(want, abs=1e-5)


def test_a_rare_word_counts_for_more_than_a_common_one(store):
    frequencies = HYBRID.query_context(store)
    live = WORDS.position("live")  # in three of the four memories
    lisbon = WORDS.position("lisbon")  # in one
    assert frequencies.counts[live] == 3 and frequencies.counts[lisbon] == 1
    assert frequencies.idf(lisbon) > frequencies.idf(live) > 0
    _, words = _halves(Embedder(MODEL).query(store, "live lisbon"))
    assert words[lisbon] > words[live] > 0


def test_a_query_word_no_memory_has_is_replaced_by_its_cue_words_the_store_has(store):
    home, city, live = (WORDS.bucket(w) for w in ("home", "city", "live"))
    _, words = _halves(Embedder(MODEL).query(store, "Which city is my home?"))
    # no memory says "home" or "city": the words half asks for "live" (in three memories)
    # alone, "mov" (no memory) is left out, as the words themselves are
    assert np.flatnonzero(words).tolist() == [live]
    assert words[live] == pytest.approx(math.sqrt(1 - hybrid.MIX))
    # a cue word of the question's own keeps its full weight ("live" here)
    frequencies = HYBRID.query_context(store)
    _, words = _halves(Embedder(MODEL).query(store, "home live lisbon"))
    lisbon = WORDS.bucket("lisbon")
    assert words[live] / words[lisbon] == pytest.approx(
        frequencies.idf(live) / frequencies.idf(lisbon)
    )
    # a word the store has is never replaced: "home" stays, "city" still gives "live"
    Embedder(MODEL).remember(store, "I got home late", now=NOW)
    _, words = _halves(Embedder(MODEL).query(store, "Which city is my home?"))
    assert sorted(np.flatnonzero(words).tolist()) == sorted([home, live])
    assert words[city] == 0


def test_a_memory_counts_each_word_once_and_a_query_word_lands_where_the_memorys_does(store):
    _, once = _halves(Embedder(MODEL).embed_one("Lisbon Lisbon trams"))
    filled = once[once > 0]
    assert len(filled) == 2 and filled[0] == pytest.approx(filled[1])  # not 2:1
    # "house" tokenizes to "hous", and splitting "hous" again gives "hou" (the bug the
    # query side once had): the query's word must sit where the memory's does
    word = tokenize("house")[0]
    assert tokenize(word) != [word]
    _, memory_half = _halves(Embedder(MODEL).embed_one("house"))
    _, query_half = _halves(Embedder(MODEL).query(store, "house"))
    assert np.flatnonzero(query_half).tolist() == np.flatnonzero(memory_half).tolist()
    assert np.flatnonzero(memory_half).tolist() == [WORDS.bucket(word)]


def test_the_semantic_half_of_a_query_leaves_out_words_most_of_a_large_store_holds():
    embedder = Embedder(MODEL)
    store = MemoryStore(MODEL)
    topics = ["painting", "a support group", "adoption agencies", "camping", "a charity race"]
    for i in range(hybrid.COMMON_MIN):  # every memory a speaker's turn, named
        speaker = ("Caroline", "Melanie")[i % 2]
        embedder.remember(store, f"{speaker}: I talked about {topics[i % 5]} {i}", now=NOW)
    question = "What did Caroline say about camping?"
    meaning, words = _halves(embedder.query(store, question))
    without = minilm.embed_texts(["What did say about camping?"])[0]  # "caroline": half
    assert np.allclose(_unit(meaning), without, atol=1e-6)
    assert words[WORDS.bucket(tokenize("Caroline")[0])] > 0  # the words still have the name
    store.remove(list(store)[-1].id)  # one memory short of COMMON_MIN: nothing is common yet
    meaning, _ = _halves(embedder.query(store, question))
    assert np.allclose(_unit(meaning), minilm.embed_texts([question])[0], atol=1e-6)
    only_names = embedder.query(store, "Caroline?")  # nothing but a name: kept as it is
    assert np.all(np.isfinite(only_names)) and np.any(_halves(only_names)[0])


def test_memory_vectors_never_change_as_the_store_grows(store):
    before = store.get("m1").embedding
    again = Embedder(MODEL).embed_one(FACTS[0])
    Embedder(MODEL).remember(store, "Lisbon Lisbon Lisbon", now=NOW)
    assert store.get("m1").embedding == before
    assert np.allclose(again, before, atol=1e-6)


def test_the_frequencies_follow_memories_that_come_and_go(store):
    lisbon = WORDS.position("lisbon")
    assert HYBRID.query_context(store).counts[lisbon] == 1
    Embedder(MODEL).remember(store, "Lisbon has trams", now=NOW)
    assert HYBRID.query_context(store).counts[lisbon] == 2
    store.remove("m1")
    frequencies = HYBRID.query_context(store)
    assert frequencies.counts[lisbon] == 1 and frequencies.documents == 4


def test_a_query_without_words_has_a_zero_lexical_half_and_ranks_by_meaning(store):
    q = Embedder(MODEL).query(store, "?!")
    _, words = _halves(q)
    assert not words.any() and np.isfinite(q).all()
    mark, shellfish = minilm.embed_texts(["?!", FACTS[1]])
    semantic = float(mark @ shellfish)
    got = relevance_score(q, store.get("m2").embedding)
    assert got == pytest.approx(math.sqrt(hybrid.MIX) * semantic, abs=1e-5)


def test_a_query_sharing_no_word_with_the_store_scores_by_meaning_alone(store):
    q = Embedder(MODEL).query(store, "Can I eat prawns?")
    prawns, shellfish = minilm.embed_texts(["Can I eat prawns?", FACTS[1]])
    semantic = float(prawns @ shellfish)
    got = relevance_score(q, store.get("m2").embedding)
    assert got == pytest.approx(hybrid.MIX * semantic, abs=1e-5)
    scores = [relevance_score(q, m.embedding) for m in store]
    assert max(scores) == scores[1]  # the shellfish memory, with no shared word


def test_the_empty_store_can_be_queried():
    vector = Embedder(MODEL).query(MemoryStore(), "Which city is my home?")
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    "name", ["memorylab/minilm-words-0", "memorylab/minilm-words-1617", "memorylab/minilm-words-x"]
)
def test_a_bad_hybrid_size_is_a_clear_error(name):
    with pytest.raises(ValueError, match=r"from 8 to 1616"):
        Embedder(name)


def test_an_unknown_offline_model_names_the_offline_models():
    with pytest.raises(ValueError, match="minilm-words-1616.*minilm-l6-v2.*hashed-bow-N"):
        Embedder("memorylab/word2vec")


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_is_refused_with_its_index(text):
    with pytest.raises(ValueError, match=r"texts\[1\] is empty"):
        Embedder(MODEL).embed(["fine", text])


def test_non_string_text_is_refused():
    with pytest.raises(TypeError, match=r"texts\[0\] must be a string, got int"):
        Embedder(MODEL).embed([7])


def test_a_memory_longer_than_256_tokens_says_it_was_cut(capsys):
    store = MemoryStore()
    long_text = " ".join(["gardening"] * 700)  # 6,999 characters: under the text cap
    memory = Embedder(MODEL).remember(store, long_text, now=NOW)
    assert memory.metadata["embedded"].startswith("the first 256 of ")
    short = Embedder(MODEL).remember(store, "short", now=NOW)
    assert "embedded" not in short.metadata
    captured = capsys.readouterr()
    assert captured.err == ""


def test_a_hashed_words_store_is_refused_by_the_hybrid():
    store = MemoryStore()
    Embedder("memorylab/hashed-bow-384").remember(store, "I live in Lisbon", now=NOW)
    with pytest.raises(ValueError, match="hashed-bow-384"):
        Embedder(MODEL).query(store, "Which city is my home?")


def test_the_minilm_model_alone_is_meaning_only():
    vector = Embedder(minilm.MODEL_NAME).embed_one(FACTS[0])
    assert len(vector) == minilm.DIMENSIONS
    assert np.allclose(vector, minilm.embed_texts([FACTS[0]])[0], atol=1e-6)


# --- BM25 ----------------------------------------------------------------------------------


def test_bm25_rewards_rare_shared_words_and_gives_zero_without_them():
    scores = BM25(FACTS).scores("Where does Dana live in Lisbon?")
    assert scores[0] == max(scores) and scores[1] == 0.0
    assert BM25(["I live in Lisbon", "I like tea"]).scores("Where do I live?") == [
        pytest.approx(math.log(2.0)),
        0.0,
    ]


def test_bm25_is_a_strategy_and_a_bad_relevance_kind_is_refused():
    assert STRATEGIES["bm25"].relevance == "bm25"
    with pytest.raises(ValueError, match="relevance must be one of embedding, bm25"):
        Strategy("x", (1, 0, 0), same_decay(0.995), relevance="tfidf")
