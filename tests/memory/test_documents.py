"""JSON memory documents (seed 000): the document rules, and the compare-and-set service
against the real database."""

from __future__ import annotations

import pytest

from memory.documents.selectors import document_history, read_document
from memory.documents.services import forget_sessions, put_document
from memory.engine.documents import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_SAFE_INTEGER,
    check_expected_revision,
    check_memory,
    check_slot,
    depth,
    serialized_size,
)
from memory.errors import MemoryInvalid, RevisionConflict
from memory.models import MemoryDocument, MemoryDocumentRevision


def _sized(size: int) -> dict:
    """An object whose compact JSON is exactly ``size`` bytes."""
    base = serialized_size({"a": ""})
    return {"a": "x" * (size - base)}


def _nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"n": value}
    return value


def _code(call) -> str:
    with pytest.raises(MemoryInvalid) as info:
        call()
    return info.value.code


def test_size_limit_is_64_kib_of_compact_utf8_json():
    check_memory(_sized(MAX_DOCUMENT_BYTES))
    assert _code(lambda: check_memory(_sized(MAX_DOCUMENT_BYTES + 1))) == "memory_too_large"
    # Bytes, not characters: one CJK character is three.
    wide = {"a": "门" * ((MAX_DOCUMENT_BYTES - serialized_size({"a": ""})) // 3 + 1)}
    assert _code(lambda: check_memory(wide)) == "memory_too_large"


def test_depth_limit_is_32_levels():
    assert depth(_nested(MAX_DEPTH)) == MAX_DEPTH
    check_memory(_nested(MAX_DEPTH))
    assert _code(lambda: check_memory(_nested(MAX_DEPTH + 1))) == "memory_too_deep"
    assert depth({"a": [[{"b": 1}]]}) == 4 and depth({}) == 1 and depth(3) == 0
    # Far too deep for recursion is still an answer, not a crash.
    assert _code(lambda: check_memory(_nested(100_000))) == "memory_too_deep"


@pytest.mark.parametrize("value", [None, [], [{"a": 1}], 1, "x", True, 1.5])
def test_only_an_object_is_a_document(value):
    assert _code(lambda: check_memory(value)) == "memory_not_object"


def test_values_json_cannot_hold_are_refused():
    assert _code(lambda: check_memory({"a": float("nan")})) == "memory_not_json"
    assert _code(lambda: check_memory({"a": {1, 2}})) == "memory_not_json"


@pytest.mark.parametrize("value", [-1, True, False, 1.0, "3", None, MAX_SAFE_INTEGER - 1])
def test_expected_revision_is_a_safe_non_negative_integer(value):
    assert _code(lambda: check_expected_revision(value)) == "invalid_revision"


def test_expected_revision_bounds():
    assert check_expected_revision(0) == 0
    assert check_expected_revision(MAX_SAFE_INTEGER - 2) == MAX_SAFE_INTEGER - 2


@pytest.mark.parametrize("slot", ["", "-a", "a/b", "a b", "x" * 65, "门", None, 3])
def test_bad_slot_names(slot):
    assert _code(lambda: check_slot(slot)) == "invalid_slot"


def test_good_slot_names():
    for slot in ("default", "scene.state", "table:1", "A_b-9", "x" * 64):
        assert check_slot(slot) == slot


@pytest.mark.django_db
def test_write_read_replace_and_history(tenant):
    assert read_document(tenant, "c1", "default") == {"revision": 0, "memory": None}
    first = {"scene": "城门", "keyHolder": "用户"}
    assert put_document(tenant, "c1", "default", 0, first, origin="api") == 1
    assert read_document(tenant, "c1", "default") == {"revision": 1, "memory": first}
    # The whole object is replaced, never merged.
    assert put_document(tenant, "c1", "default", 1, {"keyHolder": "守卫"}, origin="tool") == 2
    assert read_document(tenant, "c1", "default") == {
        "revision": 2,
        "memory": {"keyHolder": "守卫"},
    }
    history = document_history(tenant, "c1", "default")
    assert [(h["revision"], h["origin"], h["memory"]) for h in history] == [
        (2, "tool", {"keyHolder": "守卫"}),
        (1, "api", first),
    ]
    # Slots and conversations are apart.
    assert read_document(tenant, "c1", "other") == {"revision": 0, "memory": None}
    assert read_document(tenant, "c2", "default") == {"revision": 0, "memory": None}


@pytest.mark.django_db
def test_a_stale_write_is_a_conflict_naming_the_current_revision(tenant):
    put_document(tenant, "c", "s", 0, {"v": 1}, origin="api")
    put_document(tenant, "c", "s", 1, {"v": 2}, origin="api")
    for stale in (0, 1, 5):
        with pytest.raises(RevisionConflict) as info:
            put_document(tenant, "c", "s", stale, {"v": "late"}, origin="api")
        assert info.value.code == "revision_conflict"
        assert info.value.details["current_revision"] == 2
    with pytest.raises(RevisionConflict) as info:
        put_document(tenant, "c", "empty", 3, {"v": 1}, origin="api")
    assert info.value.details["current_revision"] == 0
    assert read_document(tenant, "c", "s") == {"revision": 2, "memory": {"v": 2}}
    assert MemoryDocumentRevision.objects.count() == 2


@pytest.mark.django_db
def test_a_failed_save_leaves_nothing_half_written(tenant):
    put_document(tenant, "c", "s", 0, {"v": 1}, origin="api")
    bad = [
        {"v": "x" * MAX_DOCUMENT_BYTES},
        {"v": "nul\x00"},
        {"k\ud800": 1},
        [1],
        _nested(MAX_DEPTH + 1),
    ]
    for memory in bad:
        with pytest.raises(MemoryInvalid):
            put_document(tenant, "c", "s", 1, memory, origin="api")
    with pytest.raises(MemoryInvalid):
        put_document(tenant, "c", "bad slot", 0, {"v": 1}, origin="api")
    assert read_document(tenant, "c", "s") == {"revision": 1, "memory": {"v": 1}}
    assert MemoryDocumentRevision.objects.count() == 1
    assert MemoryDocument.objects.count() == 1


@pytest.mark.django_db
def test_secrets_are_scrubbed_before_they_are_stored(tenant):
    memory = {"note": "mail alice@example.com", "deep": [{"key": "sk-" + "a1B2" * 8}]}
    put_document(tenant, "c", "s", 0, memory, origin="api")
    stored = read_document(tenant, "c", "s")["memory"]
    text = str(stored) + str(document_history(tenant, "c", "s"))
    assert "alice@example.com" not in text and "a1B2a1B2" not in text
    assert stored["note"] == "mail [redacted:email]"
    assert stored["deep"][0]["key"] == "[redacted:api_key]"


@pytest.mark.django_db
def test_tenants_are_apart_and_forgetting_a_conversation_removes_its_documents(
    tenant, other_tenant
):
    put_document(tenant, "c", "s", 0, {"mine": 1}, origin="api")
    assert read_document(other_tenant, "c", "s") == {"revision": 0, "memory": None}
    put_document(other_tenant, "c", "s", 0, {"theirs": 1}, origin="api")
    assert forget_sessions(tenant, ["c"]) == 1
    assert read_document(tenant, "c", "s") == {"revision": 0, "memory": None}
    assert read_document(other_tenant, "c", "s")["memory"] == {"theirs": 1}
    assert MemoryDocumentRevision.objects.filter(tenant=tenant).count() == 0
