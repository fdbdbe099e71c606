"""evaluation/locomo.py and tools/locomo_data.py, on a small conversation written here in
LoCoMo's own format (the real data ships without a licence, so it is never in the tests)."""

from __future__ import annotations

import json
import zipfile

import pytest

from embedding_helpers import Embedder
from evaluation.cli import main
from evaluation.dataset import DatasetError
from evaluation.locomo import compare, evidence_ids, load_locomo, read_samples, sample_id
from tools import locomo_data

WORDS = Embedder("memorylab/hashed-bow-384")  # fast; the loader does not depend on it


def conversation(a="Caroline", b="Melanie", city="Lisbon"):
    return {
        "speaker_a": a,
        "speaker_b": b,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": a, "dia_id": "D1:1", "text": f"I moved to {city} last week!"},
            {"speaker": b, "dia_id": "D1:2", "text": "Wow, congratulations!",
             "img_url": ["https://example.org/x.jpg"],
             "blip_caption": "a photo of a cake with candles"},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": b, "dia_id": "D2:1", "text": "I started pottery classes."},
            {"speaker": a, "dia_id": "D2:2", "text": "I adopted a dog named Rex."},
        ],
        "session_2_summary": "ignored",
        "qa": [
            {"question": f"Where did {a} move?", "answer": city, "evidence": ["D1:1"],
             "category": 4},
            {"question": f"What did {b} start?", "evidence": ["D2:1; D1:2"], "category": 1},
            {"question": "When did the move happen?", "evidence": ["D:1:1"], "category": 2},
            {"question": "What is the dog's name?", "evidence": [], "category": 4},
            {"question": "What is the cat's name?", "adversarial_answer": "Tom",
             "evidence": ["D2:2"], "category": 5},
        ],
    }  # fmt: skip


@pytest.fixture
def copy(tmp_path):
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "26.json").write_text(json.dumps(conversation()), encoding="utf-8")
    (folder / "30.json").write_text(json.dumps(conversation("Jon", "Gina", "Porto")))
    return folder


def test_each_turn_is_a_memory_with_the_speaker_and_the_photo_caption(copy):
    first, second = load_locomo(copy, embedder=WORDS)
    assert (first.name, second.name) == ("conv-26", "conv-30")
    texts = [m.text for m in first.store]
    assert texts == [
        "Caroline: I moved to Lisbon last week!",
        "Melanie: Wow, congratulations! [shares a photo of a cake with candles]",
        "Melanie: I started pottery classes.",
        "Caroline: I adopted a dog named Rex.",
    ]
    memories = list(first.store)
    assert [m.id for m in memories][:2] == ["conv-26:D1:1", "conv-26:D1:2"]
    assert memories[0].metadata["speaker"] == "Caroline"
    assert memories[1].created_at == memories[0].created_at + 1  # a second apart, in order
    assert memories[2].created_at - memories[0].created_at > 40 * 86400  # 8 May -> 27 June


def test_questions_with_evidence_are_kept_and_asked_at_the_end(copy):
    first = load_locomo(copy, ["26"], WORDS)[0]
    got = [(q.text, q.evidence, q.category) for q in first.questions]
    assert got == [
        ("Where did Caroline move?", ("conv-26:D1:1",), "single-hop"),
        ("What did Melanie start?", ("conv-26:D2:1", "conv-26:D1:2"), "multi-hop"),
        ("When did the move happen?", ("conv-26:D1:1",), "temporal"),
    ]  # no evidence, and the adversarial question (category 5): left out
    last = max(m.created_at for m in first.store)
    assert {q.asked_at for q in first.questions} == {last}


def test_evidence_ids_mend_the_odd_spellings_of_the_data():
    assert evidence_ids(["D8:6; D9:17", "D9:1 D4:4", "D:11:26", "D30:05", "D", 3]) == [
        "D8:6", "D9:17", "D9:1", "D4:4", "D11:26", "D30:5"
    ]  # fmt: skip
    assert evidence_ids(None) == []


def test_a_zip_a_folder_and_locomo10_json_read_alike(copy, tmp_path):
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in copy.iterdir():
            z.write(f, f"data/multimodal_dialog/locomo10_v2/{f.name}")
    listing = tmp_path / "locomo10.json"
    samples = [{"sample_id": "conv-26", "conversation": conversation(),
                "qa": conversation()["qa"]}]  # fmt: skip
    listing.write_text(json.dumps(samples))
    assert read_samples(archive) == read_samples(copy)
    one = read_samples(listing)["conv-26"]
    assert (one["conversation"], one["qa"]) == (conversation(), conversation()["qa"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(session_1_date_time="8/5/2023"), "must read like '1:56 pm on 8 May"),
        (lambda c: c["session_1"][0].pop("speaker"), "must have 'speaker', 'dia_id' and 'text'"),
    ],
)
def test_a_malformed_conversation_is_a_clear_error(tmp_path, change, message):
    data = conversation()
    change(data)
    (tmp_path / "26.json").write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=message):
        load_locomo(tmp_path, embedder=WORDS)


def test_a_missing_copy_or_conversation_names_what_is_there(copy, tmp_path):
    with pytest.raises(DatasetError, match="no LoCoMo copy at .*tools/locomo_data.py"):
        load_locomo(tmp_path / "nowhere")
    with pytest.raises(
        DatasetError, match="has no conversation 'conv-41'; it has conv-26, conv-30"
    ):
        load_locomo(copy, ["41"], WORDS)
    with pytest.raises(DatasetError, match="named like 'conv-26' or '26'"):
        sample_id("twenty-six")


def test_compare_pools_every_question_and_bm25_finds_the_shared_words(copy):
    results = compare(copy, ["memorylab/hashed-bow-384"], ks=(1, 10))
    assert list(results) == ["bm25", "memorylab/hashed-bow-384"]
    bm25 = results["bm25"]
    assert bm25["questions"] == 6  # three questions in each of the two conversations
    assert bm25["overall"]["R@10"] == 1.0  # four memories each: all are in the top 10
    assert 0 < bm25["overall"]["R@1"] < 1
    assert set(bm25["by_category"]) == {"multi-hop", "single-hop", "temporal"}


def test_the_command_prints_every_retriever(copy, capsys):
    status = main(["--dataset", "locomo", str(copy), "--conversations", "26",
                   "--embed-model", "memorylab/hashed-bow-384", "--k", "1", "10"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    for row in ("bm25 (keywords)", "memorylab/hashed-bow-384 (words)",
                "memorylab/minilm-l6-v2 (meaning)", "R@10 by category (3 questions)"):  # fmt: skip
        assert row in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "locomo"], "needs the PATH of a local LoCoMo copy"),
        (["somewhere"], "a PATH and --conversations go with --dataset locomo"),
    ],
)
def test_the_command_refuses_a_locomo_run_without_its_path(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_the_tool_unpacks_a_copy_that_the_loader_reads(copy, tmp_path):
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(copy / "26.json", "data/multimodal_dialog/locomo10_v2/26.json")
    target = tmp_path / "unpacked"
    assert locomo_data.main([str(archive), "--to", str(target)]) == 0
    assert [p.name for p in target.iterdir()] == ["26.json"]
    assert read_samples(target) == read_samples(archive)
    assert locomo_data.main([str(tmp_path / "missing.zip"), "--to", str(target)]) == 2


def test_the_limits_tool_scores_the_lexical_half_as_the_default_embedding_does(copy):
    from embeddings import hybrid, minilm
    from tools import locomo_limits

    default = Embedder()  # the shipped hybrid: its cosine is what the tool decomposes
    (evalset,) = load_locomo(copy, ["26"], default)
    model = default.offline_model
    frequencies = model.query_context(evalset.store)
    asked = [q.text for q in evalset.questions]
    stored = [m.embedding for m in evalset.store]
    real = [[sum(x * y for x, y in zip(q, m)) for m in stored]
            for q in model.embed_queries(asked, frequencies)]  # fmt: skip
    (mirror,) = load_locomo(copy, ["26"], Embedder(minilm.MODEL_NAME))
    case = locomo_limits.Case(mirror)
    tool = hybrid.MIX * case.semantic + (1 - hybrid.MIX) * locomo_limits.lexical(case)
    assert tool.tolist() == [pytest.approx(row, abs=1e-5) for row in real]


def test_the_limits_tool_prints_every_variant_and_never_reads_the_acceptance_half(copy, capsys):
    from tools import locomo_limits

    assert locomo_limits.main([str(copy), "--conversations", "26", "--no-year"]) == 0
    table = capsys.readouterr().out
    for row in ("the default (memorylab/minilm-words-1616)", "BM25", "no hashing",
                "term expansion", "reciprocal-rank fusion", "turn before it",
                "share no content word", "Beating BM25 by 15% takes R@10"):  # fmt: skip
        assert row in table
    with pytest.raises(SystemExit) as refused:
        locomo_limits.main([str(copy), "--conversations", "30", "--no-year"])
    assert refused.value.code == 2
    assert "acceptance conversations are never measured" in capsys.readouterr().err


def test_a_turn_can_be_read_with_its_neighbours_or_grouped_into_an_episode():
    from evaluation.locomo import as_dataset

    sample = {"conversation": conversation(), "qa": conversation()["qa"]}
    turns = as_dataset(sample, "conv-26")
    pair = as_dataset(sample, "conv-26", "pair")
    window = as_dataset(sample, "conv-26", "window")
    assert [t["id"] for t in pair["sessions"][0]["turns"]] == ["conv-26:D1:1", "conv-26:D1:2"]
    first, second = (t["text"] for t in turns["sessions"][0]["turns"])
    assert [t["text"] for t in pair["sessions"][0]["turns"]] == [first, f"{first}\n{second}"]
    assert [t["text"] for t in window["sessions"][0]["turns"]] == [f"{first}\n{second}"] * 2
    assert pair["questions"] == turns["questions"]  # one memory a turn: the same evidence
    # never across sessions: session 2 starts on its own
    assert pair["sessions"][1]["turns"][0]["text"] == "Melanie: I started pottery classes."


def test_an_episode_holds_consecutive_turns_and_its_evidence_is_the_episodes(monkeypatch):
    from evaluation import locomo

    monkeypatch.setattr(locomo, "EPISODE_TURNS", 2)
    sample = {"conversation": conversation(), "qa": conversation()["qa"]}
    episodes = locomo.as_dataset(sample, "conv-26", "episode")
    assert [[t["id"] for t in s["turns"]] for s in episodes["sessions"]] == [
        ["conv-26:D1:1"],
        ["conv-26:D2:1"],
    ]
    assert [q["evidence"] for q in episodes["questions"]] == [
        ["conv-26:D1:1"], ["conv-26:D2:1", "conv-26:D1:1"], ["conv-26:D1:1"]
    ]  # fmt: skip
    with pytest.raises(ValueError, match="items must be one of"):
        locomo.as_dataset(sample, "conv-26", "sentence")


def test_a_distilled_episode_is_its_facts_and_a_question_finds_every_fact_of_its_episode():
    from evaluation.dataset import load_dataset
    from evaluation.locomo import as_dataset

    a, b = "Caroline", "Melanie"
    said = [("D1:1", a, "I decided to move to Lisbon. The rent is lower."),
            ("D1:2", b, "Wow, is that far?"),  # a question: no fact
            ("D1:3", b, "I always bake on Sundays. We switched to rye flour."),
            ("D1:4", a, "Really?"), ("D1:5", b, "ok")]  # fmt: skip
    sample = {
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": s, "dia_id": d, "text": t} for d, s, t in said],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [{"speaker": b, "dia_id": "D2:1",
                           "text": "My pottery class was fun. The teacher was kind and patient."}],
        },
        "qa": [{"question": "What does Melanie bake with?", "evidence": ["D1:3"], "category": 4},
               {"question": "What is fun?", "evidence": ["D2:1; D1:5"], "category": 1}],
    }  # fmt: skip
    distilled = as_dataset(sample, "conv-26", "distilled")
    first = "conv-26:D1:1"
    assert [[(t["id"], t["text"]) for t in s["turns"]] for s in distilled["sessions"]] == [
        [(f"{first}#f0", "On 2023-05-08 Caroline said: I decided to move to Lisbon."),
         (f"{first}#f1", "On 2023-05-08 Melanie said: I always bake on Sundays."),
         (f"{first}#f2", "On 2023-05-08 Melanie said: We switched to rye flour."),
         ("conv-26:D1:4#f0", "Caroline: Really?")],  # no statement: its longest turn
        [("conv-26:D2:1#f0", "On 2023-06-27 Melanie said: The teacher was kind and patient.")],
    ]  # fmt: skip
    assert [q["evidence"] for q in distilled["questions"]] == [
        [f"{first}#f0", f"{first}#f1", f"{first}#f2"],  # every fact of D1:3's episode
        ["conv-26:D2:1#f0", "conv-26:D1:4#f0"],
    ]
    evalset = load_dataset(distilled, WORDS)  # the loader takes it: ids unique, evidence known
    assert len(evalset.store) == 5
    with pytest.raises(ValueError, match="items must be one of .*episode, distilled"):
        as_dataset(sample, "conv-26", "facts")


def test_the_command_compares_bm25_and_the_embeddings_over_the_same_episodes(copy, capsys):
    assert main(["--dataset", "locomo", str(copy), "--items", "window", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "each turn with its neighbours" in out and "bm25" in out
    assert main(["--dataset", "locomo", str(copy), "--items", "distilled", "--k", "1"]) == 0
    assert "episodes distilled offline" in capsys.readouterr().out
