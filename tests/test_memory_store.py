"""memory_store.py: validation helpers, the Memory record and the MemoryStore's rules."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from base.validation import (
    EPOCH_RANGE,
    KINDS,
    as_number,
    as_timestamp,
    as_vector,
    check_importance,
    check_k,
    time_problem,
)
from conftest import DAY, HOUR, NOW
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore


def make(memory_id="m1", text="decided to default to Groq", **fields) -> Memory:
    """A valid memory at NOW; override any field by keyword."""
    fields = {"created_at": NOW, "embedding": [1.0, 0.0, 0.0]} | fields
    return Memory(memory_id, text, **fields)


# --- validation helpers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (NOW, NOW),
        (1_000_000, 1_000_000.0),  # an int is seconds too
        (datetime(2026, 1, 1, tzinfo=UTC), 1767225600.0),
        (datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))), 1767225600.0),
    ],
)
def test_as_timestamp_converts_numbers_and_aware_datetimes_to_epoch_seconds(value, expected):
    result = as_timestamp(value)
    assert isinstance(result, float)
    assert result == pytest.approx(expected)


def test_as_timestamp_reads_a_naive_datetime_as_local_time():
    naive = datetime(2026, 1, 1, 12, 30)
    assert as_timestamp(naive) == pytest.approx(naive.timestamp())


BAD_NUMBERS = [(True, TypeError), ("3", TypeError), (None, TypeError), (math.nan, ValueError)]
BAD_NUMBERS += [(math.inf, ValueError), (-math.inf, ValueError)]


@pytest.mark.parametrize(("value", "error"), BAD_NUMBERS)
def test_as_timestamp_rejects_non_times_naming_the_argument(value, error):
    with pytest.raises(error, match="created_at"):
        as_timestamp(value, "created_at")


@pytest.mark.parametrize(("value", "error"), BAD_NUMBERS)
def test_as_number_rejects_bools_strings_and_non_finite_values_naming_them(value, error):
    with pytest.raises(error, match="weight"):
        as_number(value, "weight")


@pytest.mark.parametrize("values", [[1, 2.5], (1, 2.5), np.array([1.0, 2.5]), [np.float64(1), 2.5]])
def test_as_vector_accepts_lists_tuples_and_arrays_as_a_tuple_of_floats(values):
    vector = as_vector(values)
    assert isinstance(vector, tuple)
    assert all(type(x) is float for x in vector)
    assert vector == pytest.approx((1.0, 2.5))


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ([], ValueError, "at least one value"),
        ([1.0, float("nan")], ValueError, r"embedding\[1\]"),
        ([1.0, 2.0, float("inf")], ValueError, r"embedding\[2\]"),
        ([1.0, "2"], TypeError, r"embedding\[1\]"),
        ([True, 1.0], TypeError, r"embedding\[0\]"),
        ([1.0, None], TypeError, r"embedding\[1\]"),
        ("1.0, 2.0", TypeError, "sequence of numbers"),
        (3.0, TypeError, "sequence of numbers"),
    ],
)
def test_as_vector_rejects_bad_vectors_naming_the_index(values, error, message):
    with pytest.raises(error, match=message):
        as_vector(values)


@pytest.mark.parametrize("importance", [1, 5.5, 10])
def test_check_importance_accepts_one_to_ten_inclusive(importance):
    assert check_importance(importance) == pytest.approx(importance)


@pytest.mark.parametrize("importance", [0, 11, 0.99, 10.01, float("nan")])
def test_check_importance_rejects_values_outside_one_to_ten(importance):
    with pytest.raises(ValueError, match="importance"):
        check_importance(importance)


# --- Memory ---------------------------------------------------------------------------


def test_memory_course_example_keeps_its_values():
    m = Memory("m1", "decided to default to Groq", kind="semantic", created_at=NOW - 10,
               last_accessed=NOW - 10, importance=8, embedding=[1.0, 0.0, 0.0])  # fmt: skip
    assert (m.id, m.kind, m.importance, m.embedding_model, m.superseded_by) == (
        "m1", "semantic", 8, None, None)  # fmt: skip
    assert (m.created_at, m.last_accessed) == pytest.approx((NOW - 10, NOW - 10))


@pytest.mark.parametrize("kind", KINDS)
def test_memory_accepts_all_three_kinds(kind):
    assert make(kind=kind).kind == kind


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "fact"}, "kind must be one of"),
        ({"last_accessed": NOW - DAY}, "earlier than created_at"),
        ({"embedding": None}, "needs an embedding"),
        ({"superseded_by": "m1"}, "cannot supersede itself"),
    ],
)
def test_memory_rejects_an_invalid_construction(fields, message):
    with pytest.raises(ValueError, match=message):
        make("m1", **fields)


def test_memory_created_at_defaults_to_now_and_last_accessed_to_created_at():
    before = time.time()
    m = Memory("m1", "hello", embedding=[1.0])
    assert before <= m.created_at <= time.time()
    assert m.last_accessed == m.created_at


def test_memory_converts_datetimes_to_epoch_seconds_on_construction_and_assignment():
    created = datetime(2026, 1, 1, tzinfo=UTC)
    m = make(created_at=created)
    assert m.created_at == pytest.approx(created.timestamp())
    m.last_accessed = created + timedelta(hours=2)
    assert isinstance(m.last_accessed, float)
    assert m.last_accessed == pytest.approx(created.timestamp() + 2 * HOUR)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("last_accessed", "yesterday", TypeError),
        ("importance", 11, ValueError),
        ("kind", "fact", ValueError),
        ("embedding", [], ValueError),
        ("id", "", ValueError),
        ("text", None, TypeError),
        ("superseded_by", "m1", ValueError),  # itself
        ("metadata", None, TypeError),
        ("last_accessed", None, ValueError),
        ("created_at", None, ValueError),
        ("embedding", None, ValueError),
    ],
)
def test_memory_rejects_an_invalid_assignment_after_construction(field, value, error):
    m = make()
    with pytest.raises(error, match=field):
        setattr(m, field, value)


def test_memory_stores_a_read_only_float32_copy_of_the_embedding():
    vector = [1.0, 0.0, 0.0]
    m = make(embedding=vector)
    vector[0] = 99.0  # the caller's list changes; the memory must not
    assert m.embedding == pytest.approx((1.0, 0.0, 0.0)) and m.embedding == (1.0, 0.0, 0.0)
    assert [type(x) for x in m.embedding] == [float] * 3  # iterated as Python floats
    with pytest.raises(TypeError):
        m.embedding[0] = 5.0  # type: ignore[index]


def test_an_embedding_costs_four_bytes_a_value():
    import sys

    m = make(embedding=[0.5] * 384)
    assert sys.getsizeof(m.embedding) < 4 * 384 + 200  # a tuple of floats: about 12 KB
    assert sys.getsizeof(tuple(m.embedding)) > 3_000


@pytest.mark.parametrize(("importance", "shown"), [(8, "8"), (8.0, "8"), (7.5, "7.5")])
def test_memory_shows_whole_importances_as_ints_and_keeps_halves(importance, shown):
    m = make(importance=importance)
    assert m.importance == pytest.approx(importance)
    assert f"importance={shown}," in repr(m)


def test_memory_repr_leaves_out_the_embedding_and_shortens_long_text():
    m = make(text="x" * 100, embedding=[0.123456] * 5)
    assert "0.123456" not in repr(m)
    assert "x" * 57 + "..." in repr(m)
    assert "x" * 58 not in repr(m)


def test_memory_round_trips_through_to_dict_and_from_dict():
    m = make(kind="semantic", importance=7.5, embedding_model="memorylab/hashed-bow-3",
             superseded_by="m2", metadata={"role": "user"})  # fmt: skip
    data = m.to_dict()
    assert data["embedding"] == [1.0, 0.0, 0.0]  # a list: JSON-ready
    assert Memory.from_dict(data).to_dict() == data


def test_memory_from_dict_rejects_unknown_fields():
    data = make().to_dict() | {"colour": "blue"}
    with pytest.raises(ValueError, match="unknown Memory field.*colour"):
        Memory.from_dict(data)


@given(
    st.floats(min_value=EPOCH_RANGE[0], max_value=EPOCH_RANGE[1]),
    st.floats(min_value=0, max_value=EPOCH_RANGE[1] - EPOCH_RANGE[0]),
)
def test_any_times_in_range_and_in_order_construct_and_round_trip(created_at, gap):
    last_accessed = created_at + gap
    assume(last_accessed <= EPOCH_RANGE[1])
    m = make(created_at=created_at, last_accessed=last_accessed)
    again = Memory.from_dict(m.to_dict())
    assert again.created_at == pytest.approx(created_at)
    assert again.last_accessed == pytest.approx(last_accessed)
    assert again.to_dict() == m.to_dict()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.7e12, r"time 1700000000000.0 is after the year 9999.*looks like milliseconds"),
        (1_700_000_000_000, r"after the year 9999.*looks like milliseconds: divide by 1000"),
        (1e300, r"time 1e\+300 is after the year 9999: times are epoch seconds in \["),
        (-1e12, r"time -1000000000000.0 is before the year 1"),
    ],
)
def test_a_time_outside_the_years_1_to_9999_is_refused_naming_milliseconds(value, message):
    with pytest.raises(ValueError, match=message):
        as_timestamp(value)
    with pytest.raises(ValueError, match=message.replace("time", "created_at", 1)):
        make(created_at=value)


def test_the_course_times_and_the_ends_of_the_range_stay_valid():
    assert as_timestamp(NOW) == 1_000_000.0 and as_timestamp(NOW - 1e6) == 0.0
    assert as_timestamp(EPOCH_RANGE[1]) == 253_402_300_799.0
    assert "1e300" not in str(time_problem(1e300)) and "milliseconds:" not in time_problem(1e300)


# --- MemoryStore ----------------------------------------------------------------------


def test_store_add_returns_the_memory_and_the_store_keeps_insertion_order():
    store = MemoryStore()
    m3 = make("m3")
    assert store.add(m3) is m3
    store.add(make("m1"))
    assert [m.id for m in store] == ["m3", "m1"]
    assert store.get("m3") is m3
    assert ("m3" in store, "m2" in store, len(store)) == (True, False, 2)
    with pytest.raises(KeyError, match="m2"):
        store.get("m2")


def test_store_refuses_a_duplicate_id_naming_it():
    store = MemoryStore()
    store.add(make("m1"))
    with pytest.raises(ValueError, match="'m1' is already in the store"):
        store.add(make("m1", "another text"))
    assert len(store) == 1


@pytest.mark.parametrize("not_a_memory", ["m1", {"id": "m1"}, None])
def test_store_refuses_anything_but_a_memory(not_a_memory):
    with pytest.raises(TypeError, match="expects a Memory"):
        MemoryStore().add(not_a_memory)


def test_store_refuses_an_embedding_of_another_dimension():
    store = MemoryStore()
    store.add(make("m1", embedding=[1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="2-dimensional.*3-dimensional"):
        store.add(make("m2", embedding=[1.0, 0.0]))


def test_store_learns_its_embedding_model_from_the_first_memory():
    store = MemoryStore()
    store.add(make("m1", embedding_model="model-a"))
    assert store.embedding_model == "model-a"
    with pytest.raises(EmbeddingModelMismatch, match="model-b.*model-a"):
        store.add(make("m2", embedding_model="model-b"))


def test_store_with_a_fixed_model_refuses_other_models_from_the_start():
    store = MemoryStore("model-a")
    with pytest.raises(ValueError, match="model-b.*model-a") as error:
        store.add(make("m1", embedding_model="model-b"))
    assert isinstance(error.value, EmbeddingModelMismatch)  # a ValueError subclass
    assert len(store) == 0


@pytest.mark.parametrize(("first", "second"), [(None, "model-a"), ("model-a", None)])
def test_store_does_not_mix_hand_made_vectors_with_a_named_model(first, second):
    store = MemoryStore()
    store.add(make("m1", embedding_model=first))
    with pytest.raises(EmbeddingModelMismatch, match="hand-made vectors"):
        store.add(make("m2", embedding_model=second))


def test_supersede_keeps_both_memories_and_live_skips_the_old_one():
    store = MemoryStore()
    store.add(make("m1", "default API is OpenAI"))
    store.add(make("m2", "default API is Groq"))
    store.supersede("m1", "m2")
    assert store.get("m1").superseded_by == "m2"
    assert [m.id for m in store] == ["m1", "m2"]
    assert [m.id for m in store.live()] == ["m2"]


@pytest.mark.parametrize(
    ("old", "new", "error", "message"),
    [
        ("m1", "m1", ValueError, "cannot supersede itself"),
        ("m1", "m9", KeyError, "m9"),
        ("m9", "m1", KeyError, "m9"),
    ],
)
def test_supersede_refuses_itself_and_unknown_ids(old, new, error, message):
    store = MemoryStore()
    store.add(make("m1"))
    with pytest.raises(error, match=message):
        store.supersede(old, new)


def test_store_refuses_a_memory_superseded_by_a_missing_id():
    with pytest.raises(ValueError, match="superseded by 'm7'"):
        MemoryStore().add(make("m1", superseded_by="m7"))


def test_next_id_counts_from_len_plus_one_and_skips_taken_ids():
    store = MemoryStore()
    assert store.next_id() == "m1"
    store.add(make("m2"))
    assert store.next_id() == "m3"
    assert store.next_id("note") == "note2"


def test_iterating_while_adding_is_safe_because_iteration_is_a_snapshot():
    store = MemoryStore()
    store.add(make("m1"))
    for memory in store:
        store.add(make(memory.id + "-copy"))
    assert [m.id for m in store] == ["m1", "m1-copy"]


def test_a_recall_stamped_before_creation_is_accepted_as_clock_skew():
    # Construction refuses last_accessed < created_at (a typo), but a retrieval whose clock
    # runs a little behind the writer's must not fail halfway through touching memories.
    m = make(created_at=NOW, last_accessed=NOW)
    m.last_accessed = NOW - 5
    assert m.last_accessed == NOW - 5


def test_memory_created_at_defaults_to_a_given_last_access():
    m = make(created_at=None, last_accessed=NOW - 10)
    assert m.created_at == m.last_accessed == NOW - 10


@pytest.mark.parametrize("name", ["now", "importance"])
def test_a_number_too_large_for_a_float_is_a_value_error_naming_it(name):
    from base.validation import as_number

    with pytest.raises(ValueError, match=f"{name} is too large"):
        (as_timestamp if name == "now" else as_number)(10**400, name)
    with pytest.raises(ValueError, match=r"embedding\[0\] is too large"):
        as_vector([10**400])


def test_supersede_refuses_a_replacement_that_is_itself_superseded():
    # m1 -> m2, then m2 -> m1 would make a cycle and leave nothing live
    store = MemoryStore()
    store.add(make("m1"))
    store.add(make("m2"))
    store.supersede("m1", "m2")
    with pytest.raises(ValueError, match="'m1' is itself superseded by 'm2'"):
        store.supersede("m2", "m1")
    assert [m.id for m in store.live()] == ["m2"]


def test_memory_belongs_to_the_default_user_unless_told_and_round_trips_its_user():
    assert make().user_id == "default"
    m = make(user_id="ada")
    assert Memory.from_dict(m.to_dict()).user_id == "ada"


@pytest.mark.parametrize(
    ("user_id", "error"), [("", ValueError), ("   ", ValueError), (None, TypeError), (7, TypeError)]
)
def test_memory_rejects_a_missing_or_non_string_user_id(user_id, error):
    with pytest.raises(error, match="user_id must be a non-empty string"):
        make(user_id=user_id)


def test_remove_returns_the_memory_and_forgets_only_it():
    store = MemoryStore()
    a, b = store.add(make("a")), store.add(make("b"))
    assert store.remove("a") is a
    assert list(store) == [b] and "a" not in store
    with pytest.raises(KeyError, match="'a'"):
        store.remove("a")


def test_remove_refuses_a_replacement_that_a_superseded_memory_still_points_to():
    store = MemoryStore()
    store.add(make("old"))
    store.add(make("new"))
    store.supersede("old", "new")
    with pytest.raises(ValueError, match="'new' replaced 'old'"):
        store.remove("new")
    assert "new" in store
    store.remove("old")
    store.remove("new")
    assert len(store) == 0


@pytest.mark.parametrize("values", [(1.0, float("nan")), [0.5, float("inf")]])
def test_as_vector_fast_path_still_refuses_non_finite_floats(values):
    with pytest.raises(ValueError, match=r"embedding\[1\] must be finite"):
        as_vector(values)


@pytest.mark.parametrize(
    ("k", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (1.0, TypeError),
        (True, TypeError),
        ("3", TypeError),
        (None, TypeError),
    ],
)
def test_check_k_refuses_anything_but_a_positive_integer(k, error):
    # the one policy: a wrong type is a TypeError, a wrong value a ValueError
    with pytest.raises(error, match="k must be an integer >= 1"):
        check_k(k)


def test_check_query_refuses_a_vector_of_another_length_naming_the_model():
    store = MemoryStore()
    store.add(make(embedding=[1.0, 0.0, 0.0], embedding_model="memorylab/hashed-bow-3"))
    assert store.check_query([0.0, 1.0, 0.0]) == (0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="has 2 values.*have 3.*memorylab/hashed-bow-3"):
        store.check_query([1.0, 0.0])


def test_extend_rebuilds_a_store_from_copies_even_when_a_fact_was_replaced_later():
    original = MemoryStore()
    for memory_id in ("a", "b", "c", "d"):
        original.add(make(memory_id))
    original.supersede("a", "b")
    original.supersede("b", "c")
    copies = [Memory.from_dict(m.to_dict()) for m in original]  # "a" names "b" before it exists
    rebuilt = MemoryStore()
    assert rebuilt.extend(copies) == copies
    assert [m.to_dict() for m in rebuilt] == [m.to_dict() for m in original]
    assert [m.id for m in rebuilt.live()] == ["c", "d"]


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        ([make("a"), make("a")], "already in the store"),
        ([make("a", superseded_by="zz")], "neither in the store nor in this batch"),
        ([make("a", superseded_by="b"), make("b", superseded_by="a")], "in a circle"),
        ([make("a"), make("b", embedding=[1.0, 0.0])], "3-dimensional ones"),
        ([make("a"), make("b", embedding_model="other")], "embedded with"),
    ],
)
def test_extend_checks_the_whole_batch_first_and_leaves_the_store_unchanged(batch, message):
    store = MemoryStore()
    store.add(make("kept"))
    links = [m.superseded_by for m in batch]
    with pytest.raises(ValueError, match=message):
        store.extend(batch)
    assert [m.id for m in store] == ["kept"]
    assert [m.superseded_by for m in batch] == links  # the memories are untouched too


def test_extend_refuses_a_link_to_a_stored_memory_that_was_itself_replaced():
    store = MemoryStore()
    store.add(make("old"))
    store.add(make("new"))
    store.supersede("old", "new")
    with pytest.raises(ValueError, match="itself superseded by 'new'"):
        store.extend([make("x", superseded_by="old")])
    assert "x" not in store


# --- transactions: all or nothing --------------------------------------------------------


class Interrupted(Exception):
    """Raised inside a transaction to stand for any failure halfway through."""


def test_a_failed_transaction_puts_back_every_add_remove_link_and_field():
    store = MemoryStore()
    store.extend([make("a"), make("b"), make("gone")])
    with pytest.raises(Interrupted), store.transaction():
        store.add(make("c"))
        store.supersede("a", "c")
        store.remove("gone")
        store.get("b").last_accessed = NOW + 3600
        store.get("b").importance = 9
        store.get("b").metadata["note"] = "changed"
        raise Interrupted
    assert [m.id for m in store] == ["a", "b", "gone"]
    a, b = store.get("a"), store.get("b")
    assert a.superseded_by is None
    assert (b.last_accessed, b.importance, b.metadata) == (NOW, 5, {})


def test_a_transaction_that_ends_keeps_everything_and_a_nested_one_joins_it():
    store = MemoryStore()
    store.add(make("a"))
    with pytest.raises(Interrupted), store.transaction():
        store.add(make("b"))
        with store.transaction():  # joins: ending the inner block commits nothing yet
            store.add(make("c"))
        raise Interrupted
    assert [m.id for m in store] == ["a"]
    with store.transaction() as same:
        assert same is store
        store.add(make("b"))
    assert [m.id for m in store] == ["a", "b"]


def test_the_first_memory_of_a_failed_transaction_does_not_fix_the_stores_model():
    store = MemoryStore()
    with pytest.raises(Interrupted), store.transaction():
        store.add(make("a", embedding_model="memorylab/hashed-bow-3"))
        raise Interrupted
    assert (store.embedding_model, store.dimension) == (None, None)
    store.add(make("b", embedding=[1.0, 0.0]))  # any model and length may come first again


def test_save_on_an_in_memory_store_writes_nothing():
    store = MemoryStore()
    store.add(make("a"))
    store.get("a").last_accessed = NOW + 1
    assert store.save() == 0
