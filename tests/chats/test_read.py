"""Reading chat files: SillyTavern JSONL, OpenAI messages, ShareGPT; every malformed file is
a stable error code."""

from __future__ import annotations

import json

import pytest

from roleplay.conversations.chats import read
from roleplay.conversations.chats.errors import ChatFileError, ChatFileInvalid, ChatFileTooLarge
from roleplay.conversations.chats.read import read_chat, sent_ms

HEADER = {
    "user_name": "Ann",
    "character_name": "Mira",
    "create_date": "2024-01-01@12h00m00s",
    "chat_metadata": {"note_prompt": ""},
}


def st_line(mes, *, user=False, **extra):
    name = "Ann" if user else "Mira"
    return {"name": name, "is_user": user, "is_system": False, "mes": mes, **extra}


def jsonl(*items) -> bytes:
    return "\n".join(json.dumps(item, ensure_ascii=False) for item in items).encode()


def test_a_sillytavern_chat_with_swipes_hidden_and_narrator_lines():
    data = jsonl(
        HEADER,
        st_line("Welcome, Ann.", swipes=["Welcome, Ann.", "You again?"], swipe_id=0,
                send_date="January 1, 2024 12:00pm"),
        st_line("Hello!", user=True, send_date="January 1, 2024 12:01pm"),
        st_line("B", swipes=["A", "B", "C"], swipe_id=1, extra={"reasoning": "x"},
                send_date="2024-01-01T12:02:00.000Z"),
        {"name": "Ann", "is_user": True, "is_system": True, "mes": "(hidden note)"},
        {"name": "System", "is_user": False, "mes": "Night falls.", "extra": {"type": "narrator"}},
        st_line("   "),
    )  # fmt: skip
    chat = read_chat(data)
    assert [(m.role, m.content, m.alternatives, m.selected) for m in chat.messages] == [
        ("assistant", "Welcome, Ann.", ("Welcome, Ann.", "You again?"), 0),
        ("user", "Hello!", (), 0),
        ("assistant", "B", ("A", "B", "C"), 1),
    ]
    assert [m.sent_ms for m in chat.messages] == [1704110400000, 1704110460000, 1704110520000]
    report = chat.report()
    assert report["format"] == "sillytavern"
    assert report["skipped"] == {"empty": 1, "hidden": 1, "narrator": 1}
    assert (report["user_name"], report["character_name"]) == ("Ann", "Mira")
    assert report["speakers"] == ["Mira"] and report["alternatives"] == 5


def test_a_chat_without_header_and_with_crlf_and_bom():
    data = b"\xef\xbb\xbf" + jsonl(st_line("Hi", user=True), st_line("Hello")).replace(
        b"\n", b"\r\n"
    )
    assert [m.content for m in read_chat(data).messages] == ["Hi", "Hello"]


def test_the_selected_swipe_is_the_text_and_too_many_are_cut_around_it():
    swipes = [f"reply {i}" for i in range(150)]
    chat = read_chat(jsonl(st_line("reply 140", swipes=swipes, swipe_id=140)))
    message = chat.messages[0]
    assert len(message.alternatives) == read.MAX_ALTERNATIVES
    assert message.alternatives[message.selected] == message.content == "reply 140"
    assert chat.alternatives_dropped == 50
    # no swipe_id: the text says which one it is
    chat = read_chat(jsonl(st_line("b", swipes=["a", "b"])))
    assert chat.messages[0].selected == 1


@pytest.mark.parametrize(
    "data",
    [
        json.dumps([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}]),
        json.dumps({"messages": [{"role": "user", "content": "Hi"},
                                 {"role": "assistant", "content": "Hello"}]}),
        json.dumps({"conversations": [{"from": "human", "value": "Hi"},
                                      {"from": "gpt", "value": "Hello"}]}),
        json.dumps([{"from": "system", "value": "x"}, {"from": "human", "value": "Hi"},
                    {"from": "gpt", "value": "Hello"}]),
        # a dataset's JSONL with one conversation on its line
        json.dumps({"id": "7", "conversations": [{"from": "human", "value": "Hi"},
                                                 {"from": "gpt", "value": "Hello"}]}) + "\n",
        json.dumps([{"messages": [{"role": "user", "content": "Hi"},
                                  {"role": "assistant", "content": "Hello"}]}]),
    ],
)  # fmt: skip
def test_openai_and_sharegpt_conversations(data):
    chat = read_chat(data.encode())
    assert [(m.role, m.content) for m in chat.messages] == [("user", "Hi"), ("assistant", "Hello")]
    assert chat.format in ("openai", "sharegpt")


@pytest.mark.parametrize(
    ("row", "fmt"),
    [
        # LMSYS-Chat-1M: OpenAI-style messages under "conversation"
        ({"conversation_id": "a1", "model": "vicuna-13b", "turn": 1, "language": "English",
          "conversation": [{"content": "Hi", "role": "user"},
                           {"content": "Hello", "role": "assistant"}]}, "openai"),
        # ShareGPT's raw dump: "items"
        ({"id": "x", "items": [{"from": "human", "value": "Hi"},
                               {"from": "chatgpt", "value": "Hello"}]}, "sharegpt"),
        # Capybara: exchanges
        ({"source": "x", "conversation": [{"input": "Hi", "output": "Hello"}]}, "pairs"),
    ],
)  # fmt: skip
def test_conversation_datasets(row, fmt):
    chat = read_chat(json.dumps(row).encode() + b"\n")
    assert [(m.role, m.content) for m in chat.messages] == [("user", "Hi"), ("assistant", "Hello")]
    assert chat.format == fmt


def test_a_pippa_conversation_names_the_bot_and_keeps_the_greeting():
    row = {
        "bot_id": "b1",
        "bot_name": "Mira",
        "bot_greeting": "*waves* Welcome.",
        "bot_definitions": "{{char}}: Hello.",
        "bot_description": "A guide.",
        "conversation": [
            {"message": "*waves* Welcome.", "is_human": False},
            {"message": "Hi Mira.", "is_human": True},
            {"message": "Sit down.", "is_human": False},
        ],
    }
    chat = read_chat(json.dumps(row).encode())
    assert chat.format == "pippa" and chat.character_name == "Mira"
    assert [(m.role, m.content) for m in chat.messages] == [
        ("assistant", "*waves* Welcome."),
        ("user", "Hi Mira."),
        ("assistant", "Sit down."),
    ]


def test_several_pippa_rows_are_several_conversations():
    row = {"bot_name": "M", "conversation": [{"message": "Hi", "is_human": True}]}
    with pytest.raises(ChatFileInvalid) as caught:
        read_chat(jsonl(row, row))
    assert caught.value.code == "several_conversations"


@pytest.mark.parametrize(
    ("data", "error", "code"),
    [
        (b"", ChatFileError, "invalid_chat_file"),
        (b"\xff\xfe\x00garbage", ChatFileError, "invalid_chat_file"),
        (b'{"mes": "a", "is_user": true}\n{not json', ChatFileError, "invalid_chat_file"),
        (b"42", ChatFileError, "invalid_chat_file"),
        (b'{"foo": 1}', ChatFileError, "invalid_chat_file"),
        (b'[{"role": "wizard", "content": "x"}]', ChatFileError, "invalid_chat_file"),
        (b'[{"mes": 7, "is_user": true}]', ChatFileError, "invalid_chat_file"),
        (b'[{"mes": "a", "swipes": ["a", 2]}]', ChatFileError, "invalid_chat_file"),
        (b'[{"mes": "a"}, 3]', ChatFileError, "invalid_chat_file"),
        (b"[" * 100_000 + b"]" * 100_000, ChatFileError, "invalid_chat_file"),
        (b"[" + b"1" * 5000 + b"]", ChatFileError, "invalid_chat_file"),
        (b'{"mes": "a"}\n' + b"[" * 100_000, ChatFileError, "invalid_chat_file"),
        (jsonl(HEADER), ChatFileInvalid, "empty_chat"),
        (
            jsonl(*[{"conversations": [{"from": "human", "value": "hi"}]}] * 2),
            ChatFileInvalid,
            "several_conversations",
        ),
        (b'[{"role": "system", "content": "only rules"}]', ChatFileInvalid, "empty_chat"),
        (
            b'{"conversation": [{"message": 3, "is_human": true}]}',
            ChatFileError,
            "invalid_chat_file",
        ),
        (
            b'{"conversation": [{"input": "a", "output": ["b"]}]}',
            ChatFileError,
            "invalid_chat_file",
        ),
        (b'{"conversation": [{"input": "", "output": null}]}', ChatFileInvalid, "empty_chat"),
        (b'{"conversation": [7]}', ChatFileError, "invalid_chat_file"),
    ],
)
def test_bad_files_are_refused_with_a_stable_code(data, error, code):
    with pytest.raises(error) as caught:
        read_chat(data)
    assert caught.value.code == code


def test_limits(monkeypatch):
    monkeypatch.setattr(read, "MAX_FILE_BYTES", 10)
    with pytest.raises(ChatFileTooLarge):
        read_chat(b"[" + b" " * 20 + b"]")
    monkeypatch.setattr(read, "MAX_FILE_BYTES", 10**6)
    monkeypatch.setattr(read, "MAX_MESSAGES", 2)
    with pytest.raises(ChatFileInvalid) as caught:
        read_chat(jsonl(*(st_line(str(i)) for i in range(3))))
    assert caught.value.code == "too_many_messages"
    monkeypatch.setattr(read, "MAX_MESSAGE_CHARS", 5)
    with pytest.raises(ChatFileInvalid) as caught:
        read_chat(jsonl(st_line("123456")))
    assert caught.value.code == "message_too_long"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1704110400, 1704110400000),
        (1704110400000, 1704110400000),
        ("2024-01-01T12:00:00Z", 1704110400000),
        ("2024-01-01@12h00m00s", 1704110400000),
        ("2024-1-1 @12h 0m 0s 250ms", 1704110400250),
        ("January 1, 2024 12:00pm", 1704110400000),
        ("yesterday", None),
        (True, None),
        (None, None),
        (-5, None),
    ],
)
def test_send_times(value, expected):
    assert sent_ms(value) == expected


def test_arbitrary_bytes_never_escape_as_anything_but_a_chat_error():
    import random

    rng = random.Random(7)
    samples = [
        b'[{"mes": "a", "is_user": true}]',
        jsonl(HEADER, st_line("x")),
        b'{"messages": []}',
        b'{"bot_name": "M", "conversation": [{"message": "a", "is_human": true}]}',
        b'{"conversation": [{"input": "a", "output": "b"}]}',
        b'{"messages": [{"msg": "a", "userId": "u"}, {"msg": "b", "characterId": "c"}]}',
        b'{"type": "risuChat", "data": {"message": [{"role": "user", "data": "a"}]}}',
        b'{"histories": {"histories": [{"msgs": [{"src": {"is_human": true}, "text": "a"}]}]}}',
    ]
    for _ in range(400):
        base = bytearray(rng.choice(samples))
        for _ in range(rng.randint(1, 4)):
            base[rng.randrange(len(base))] = rng.randrange(256)
        try:
            read_chat(bytes(base))
        except ChatFileError:
            pass


AGNAI = {
    "name": "Exported",
    "greeting": "Welcome.",
    "messages": [
        {"_id": "1", "msg": "Welcome.", "characterId": "c1", "createdAt": "2024-01-01T12:00:00Z"},
        {"_id": "2", "msg": "Hi.", "userId": "u1", "createdAt": "2024-01-01T12:01:00Z"},
        {"_id": "3", "msg": "Sit down.", "characterId": "c1", "createdAt": "2024-01-01T12:02:00Z"},
    ],
}
RISU = {
    "type": "risuChat",
    "ver": 1,
    "data": {
        "name": "Chat 1",
        "message": [
            {"role": "char", "data": "Welcome."},
            {"role": "user", "data": "Hi.", "time": 1704110460000},
            {"role": "char", "data": "Sit down.", "saying": "c1"},
        ],
        "note": "",
    },
}
CAI = {
    "histories": {
        "histories": [
            {
                "msgs": [
                    {"src": {"is_human": False, "name": "Mira"}, "text": "Welcome."},
                    {"src": {"is_human": True, "name": "Ann"}, "text": "Hi."},
                    {"src": {"is_human": False, "name": "Mira"}, "text": "Sit down."},
                ]
            }
        ]
    }
}


@pytest.mark.parametrize(("data", "fmt"), [(AGNAI, "agnai"), (RISU, "risuai"), (CAI, "cai_tools")])
def test_chats_of_other_roleplay_tools(data, fmt):
    chat = read_chat(json.dumps(data).encode())
    assert chat.format == fmt
    assert [(m.role, m.content) for m in chat.messages] == [
        ("assistant", "Welcome."),
        ("user", "Hi."),
        ("assistant", "Sit down."),
    ]
    if fmt == "agnai":
        assert chat.messages[1].sent_ms == 1704110460000
    if fmt == "risuai":
        assert chat.messages[1].sent_ms == 1704110460000
    if fmt == "cai_tools":
        assert chat.messages[0].name == "Mira"


def test_several_cai_histories_are_several_conversations():
    several = {"histories": {"histories": [CAI["histories"]["histories"][0]] * 3}}
    with pytest.raises(ChatFileInvalid) as caught:
        read_chat(json.dumps(several).encode())
    assert caught.value.code == "several_conversations"
    assert caught.value.details == {"conversations": 3}


@pytest.mark.parametrize(
    "data",
    [
        {"messages": [{"msg": 5, "userId": "u"}]},
        {"messages": [{"msg": "a"}, 7]},
        {"type": "risuChat", "data": {"message": [{"role": "user", "data": ["x"]}]}},
    ],
)
def test_other_tools_malformed_lines_are_refused(data):
    with pytest.raises(ChatFileError) as caught:
        read_chat(json.dumps(data).encode())
    assert caught.value.code == "invalid_chat_file"


def test_an_empty_risu_chat_is_empty():
    with pytest.raises(ChatFileInvalid) as caught:
        read_chat(json.dumps({"type": "risuChat", "data": {"message": "x"}}).encode())
    assert caught.value.code == "empty_chat"
