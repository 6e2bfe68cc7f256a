"""The DIO protocol's parsers (pure): a submission's rules at their limits (±1), any JSON
a client may send answered with a Submission or a named field (never another error), and
the adapter's checks of an answer: the identity sent, the SHA-256 of the prompt."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roleplay.dio.engine import compiler
from roleplay.dio.engine.ports import ActivePrompt, DioError, TaskStatus
from roleplay.dio.engine.protocol import (
    MAX_ID_CHARS,
    MAX_LANGUAGE_CHARS,
    Submission,
    SubmissionInvalid,
    active_answer,
    parse_active,
    parse_identity_query,
    parse_receipt,
    parse_status,
    parse_submission,
    receipt_answer,
    status_answer,
    submission_body,
)

BODY = {
    "userId": "user-42",
    "rpConversationId": "conversation-8",
    "targetPromptId": "lia-character",
    "instruction": "From now on Lia answers in short sentences.",
    "requestId": "rp-turn-101:dio",
}


def _field_of(body) -> str:
    with pytest.raises(SubmissionInvalid) as caught:
        parse_submission(body)
    return caught.value.field


def test_the_seed_example_is_accepted_with_the_derived_ids():
    sub = parse_submission({**BODY, "conversationId": "dio_conversation-8", "language": "zh"})
    assert sub.identity.conversation_id == "conversation-8"
    assert sub.task_message_id == "rp-turn-101:dio:assistant"
    assert sub.language == "zh"
    answer = receipt_answer(sub)
    assert answer["conversationId"] == "dio_conversation-8"
    assert answer["appliesFrom"] == "next_turn" and answer["accepted"] is True


@pytest.mark.parametrize("field", ["userId", "targetPromptId", "requestId"])
def test_ids_at_their_limit(field):
    assert parse_submission({**BODY, field: "x" * MAX_ID_CHARS})
    assert _field_of({**BODY, field: "x" * (MAX_ID_CHARS + 1)}) == field
    assert _field_of({**BODY, field: ""}) == field
    assert _field_of({**BODY, field: 7}) == field
    assert _field_of({k: v for k, v in BODY.items() if k != field}) == field


def test_instruction_at_its_limit_and_its_alias():
    limit = compiler.MAX_INSTRUCTION_CHARS
    assert parse_submission({**BODY, "instruction": "a" * limit}).instruction == "a" * limit
    assert _field_of({**BODY, "instruction": "a" * (limit + 1)}) == "instruction"
    aliased = {k: v for k, v in BODY.items() if k != "instruction"}
    assert parse_submission({**aliased, "message": "short"}).instruction == "short"
    assert _field_of({**BODY, "message": "another"}) == "message"
    assert _field_of(aliased) == "instruction"
    assert _field_of({**BODY, "instruction": "   "}) == "instruction"


def test_language_at_its_limit():
    assert parse_submission({**BODY, "language": "x" * MAX_LANGUAGE_CHARS})
    assert _field_of({**BODY, "language": "x" * (MAX_LANGUAGE_CHARS + 1)}) == "language"


def test_the_conversation_forms():
    bare = {k: v for k, v in BODY.items() if k != "rpConversationId"}
    assert parse_submission({**bare, "conversationId": "c-1"}).identity.conversation_id == "c-1"
    assert parse_submission({**bare, "conversationId": "dio_c-1"}).identity.conversation_id == "c-1"
    assert _field_of({**BODY, "conversationId": "dio_other"}) == "conversationId"
    assert _field_of({**bare, "conversationId": "dio_"}) == "conversationId"
    assert _field_of(bare) == "rpConversationId"


def test_unknown_fields_and_non_objects_are_named():
    assert _field_of({**BODY, "surprise": 1}) == "surprise"
    assert _field_of(["not", "an", "object"]) == "body"


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)


@SETTINGS
@given(st.dictionaries(st.sampled_from(sorted({*BODY, "conversationId", "message", "language",
                                               "taskMessageId", "other"})),
                       json_values | st.text(max_size=250), max_size=9))  # fmt: skip
def test_any_body_is_a_submission_or_a_named_field(body):
    try:
        sub = parse_submission(body)
    except SubmissionInvalid as exc:
        assert exc.field
        return
    assert isinstance(sub, Submission)
    assert 0 < len(sub.identity.user_id) <= MAX_ID_CHARS
    assert 0 < len(sub.instruction) <= compiler.MAX_INSTRUCTION_CHARS


@SETTINGS
@given(st.dictionaries(st.sampled_from(["userId", "conversationId", "targetPromptId", "x"]),
                       st.text(max_size=210), max_size=4))  # fmt: skip
def test_any_query_is_an_identity_or_a_named_field(query):
    try:
        identity = parse_identity_query(query)
    except SubmissionInvalid as exc:
        assert exc.field
        return
    assert identity.user_id == query["userId"]


def test_the_adapter_refuses_an_answer_with_another_identity():
    sub = parse_submission(BODY)
    good = receipt_answer(sub)
    receipt = parse_receipt(good, sub)
    assert receipt.request_id == "rp-turn-101:dio"
    assert receipt.task_message_id == "rp-turn-101:dio:assistant"
    for field in ("conversationId", "targetPromptId", "requestId", "taskMessageId"):
        with pytest.raises(DioError) as caught:
            parse_receipt({**good, field: "someone-else"}, sub)
        assert caught.value.code == "dio_identity_mismatch"
    for broken in ({**good, "accepted": False}, {**good, "ok": False}, "text", None):
        with pytest.raises(DioError) as caught:
            parse_receipt(broken, sub)
        assert caught.value.code == "dio_unavailable"
    assert submission_body(sub)["conversationId"] == "dio_conversation-8"


def test_status_round_trip_and_its_checks():
    status = TaskStatus("r:dio", "succeeded", True, "v-1", compiler.sha256("p"), None, None)
    assert parse_status(status_answer(status), "r:dio") == status
    with pytest.raises(DioError) as caught:
        parse_status(status_answer(status), "other:dio")
    assert caught.value.code == "dio_identity_mismatch"
    with pytest.raises(DioError):
        parse_status({**status_answer(status), "status": "done"}, "r:dio")
    with pytest.raises(DioError):
        parse_status({**status_answer(status), "promptChanged": "yes"}, "r:dio")


def test_an_active_prompt_whose_hash_is_not_its_own_is_refused():
    prompt = "Lia, a lighthouse keeper. She answers in short sentences."
    active = ActivePrompt(
        2, "v-2", prompt, compiler.sha256(prompt), [{"op": "add", "text": "short"}]
    )
    assert parse_active(active_answer(active)) == active
    with pytest.raises(DioError) as caught:
        parse_active({**active_answer(active), "compiledPrompt": prompt + "!"})
    assert caught.value.code == "dio_hash_mismatch"
    for field, value in (
        ("version", 0),
        ("version", True),
        ("versionId", ""),
        ("compiledPrompt", ""),
    ):
        with pytest.raises(DioError):
            parse_active({**active_answer(active), field: value})


def test_the_compiler_output_shape():
    text, changes = compiler.parse_output(
        {"compiledPrompt": "Full prompt.", "changeset": [{"op": "add", "text": "short"}]}
    )
    assert text == "Full prompt." and changes == [{"op": "add", "text": "short"}]
    assert compiler.parse_output({"compiledPrompt": "x"})[1] == []
    limit = compiler.MAX_PROMPT_CHARS
    assert compiler.parse_output({"compiledPrompt": "x" * limit})
    too_many = [{"op": "add", "text": ""}] * (compiler.MAX_CHANGES + 1)
    for broken in (
        {"compiledPrompt": "x" * (limit + 1)},
        {"compiledPrompt": ""},
        {"compiledPrompt": "x", "changeset": too_many},
        {"compiledPrompt": "x", "changeset": [{"op": "append", "text": ""}]},
        {"compiledPrompt": "x", "changeset": "add"},
        ["compiledPrompt"],
    ):
        with pytest.raises(compiler.CompileOutputInvalid):
            compiler.parse_output(broken)
    assert compiler.parse_output(
        {"compiledPrompt": "x", "changeset": [{"op": "add"}] * compiler.MAX_CHANGES}
    )
