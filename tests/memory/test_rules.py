"""Local preference rules (seed 004): a corpus of explicit phrases in English and Chinese with
their exact results, a corpus of near misses that yield nothing (quotes, code, conditionals,
examples, reported speech, negations, questions, not-a-name), "last stated wins", spans, and
properties (never raises, one per category, bounded content, quoted phrases are inert)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memory.engine.rules import CATEGORIES, MAX_CONTENT, TEMPORARY_DAYS, Found, find_preferences

BRIEF, DETAILED = "Keep replies brief.", "Give detailed replies."
BRIEF_ZH, DETAILED_ZH = "回复简洁一些。", "回复详细一些。"
CASUAL, FORMAL, SERIOUS = (
    "Use a casual, relaxed tone.",
    "Use a formal tone.",
    "Use a serious tone.",
)
NO_EMOJI, BULLETS = "Do not use emoji.", "Use bullet points."

POSITIVE = [
    # English: length
    ("Be brief.", [("length", BRIEF, True)]),
    ("be BRIEF", [("length", BRIEF, True)]),
    ("Please keep it short from now on.", [("length", BRIEF, False)]),
    ("I'd like shorter replies.", [("length", BRIEF, True)]),
    ("Can you be less verbose?", [("length", BRIEF, True)]),
    ("Keep your answers concise, always.", [("length", BRIEF, False)]),
    ("Be more detailed, please.", [("length", DETAILED, True)]),
    ("Longer replies from now.", [("length", DETAILED, False)]),
    ("Go into more detail.", [("length", DETAILED, True)]),
    # English: language
    ("Reply in Japanese.", [("language", "Reply in Japanese.", True)]),
    ("Please speak English from now on.", [("language", "Reply in English.", False)]),
    ("answer in chinese", [("language", "Reply in Chinese.", True)]),
    ("Switch to French permanently.", [("language", "Reply in French.", False)]),
    # English: tone
    ("Be casual.", [("tone", CASUAL, True)]),
    ("Use a more relaxed tone.", [("tone", CASUAL, True)]),
    ("Be formal.", [("tone", FORMAL, True)]),
    ("More serious, please.", [("tone", SERIOUS, True)]),
    ("Could you be more professional?", [("tone", FORMAL, True)]),
    # English: address
    ("Call me Sam.", [("address", "Call the user Sam.", True)]),
    ("Please call me Captain Rex!", [("address", "Call the user Captain Rex.", True)]),
    ("From now on, call me Sam.", [("address", "Call the user Sam.", False)]),
    ("You can call me Dr. Smith.", [("address", "Call the user Dr. Smith.", True)]),
    ("call me Sam when we chat", [("address", "Call the user Sam.", True)]),
    ("Call me 小王", [("address", "Call the user 小王.", True)]),
    # English: format
    ("No emoji please.", [("format", NO_EMOJI, True)]),
    ("Don't use emojis.", [("format", NO_EMOJI, True)]),
    ("Use bullet points.", [("format", BULLETS, True)]),
    # Chinese: length
    ("简洁一点。", [("length", BRIEF_ZH, True)]),
    ("简短点", [("length", BRIEF_ZH, True)]),
    ("说短一点", [("length", BRIEF_ZH, True)]),
    ("以后详细一点", [("length", DETAILED_ZH, False)]),
    ("多写一点！", [("length", DETAILED_ZH, True)]),
    ("别啰嗦", [("length", BRIEF_ZH, True)]),
    ("能不能简洁一点？", [("length", BRIEF_ZH, True)]),
    # Chinese: language
    ("请用中文", [("language", "用中文回复。", True)]),
    ("用英文回答", [("language", "用英文回复。", True)]),
    ("说中文！", [("language", "用中文回复。", True)]),
    ("从现在开始用日语回复", [("language", "用日语回复。", False)]),
    # Chinese: tone
    ("语气要轻松", [("tone", "语气轻松一些。", True)]),
    ("轻松一点", [("tone", "语气轻松一些。", True)]),
    ("正式一点。", [("tone", "语气正式一些。", True)]),
    ("严肃一点", [("tone", "语气严肃一些。", True)]),
    # Chinese: address
    ("叫我小王", [("address", "称呼用户为小王。", True)]),
    ("称呼我为老师", [("address", "称呼用户为老师。", True)]),
    ("你可以叫我阿明", [("address", "称呼用户为阿明。", True)]),
    ("以后叫我小王吧", [("address", "称呼用户为小王。", False)]),
    ("叫我小王就好了", [("address", "称呼用户为小王。", True)]),
    ("可以叫我Sam吗？", [("address", "称呼用户为Sam。", True)]),
    # Chinese: format
    ("不要用表情", [("format", "不要使用表情符号。", True)]),
    ("别用emoji", [("format", "不要使用表情符号。", True)]),
    ("用要点列表回答", [("format", "用要点列表回复。", True)]),
    # several in one message; text order
    (
        "Be brief. Call me Sam. Reply in English.",
        [
            ("length", BRIEF, True),
            ("address", "Call the user Sam.", True),
            ("language", "Reply in English.", True),
        ],
    ),
    (
        "请用中文，简洁一点，叫我小王。",
        [
            ("language", "用中文回复。", True),
            ("length", BRIEF_ZH, True),
            ("address", "称呼用户为小王。", True),
        ],
    ),
    # skipped parts do not hide the rest of the message
    ("```\nbe brief\n```\nCall me Sam.", [("address", "Call the user Sam.", True)]),
    ('> be formal\nBe casual. She said "be brief".', [("tone", CASUAL, True)]),
    ("If you're tired, whatever. Be brief!", [("length", BRIEF, True)]),
    ("No, be brief.", [("length", BRIEF, True)]),
    ("I don't care, just be brief", [("length", BRIEF, True)]),
]

NEAR_MISSES = [
    # quote blocks, code, quotation marks
    "> be brief",
    "  > Call me Sam",
    "```\nbe brief\n```",
    "```python\nprint('call me Sam')",  # unterminated fence runs to the end
    "Type `be brief` to toggle it.",
    'She wrote "be brief" on the board.',
    "He wrote “call me Sam” twice.",
    "The sign said 'keep it short'.",
    "他写了「简洁一点」",
    "标题是『叫我小王』",
    # conditionals (also carried over a colon line)
    "If you are busy, be brief.",
    "When you reply, keep it short.",
    "unless it matters, be brief",
    "如果你忙的话，简洁一点。",
    "要是累了就简洁一点",
    "假如我说叫我小王呢",
    "If you're tired:\nbe brief",
    # examples
    "For example, call me Sam.",
    "e.g. be brief",
    "Phrases such as be brief are common.",
    "例如：叫我小王。",
    "比如说简洁一点",
    "举个例子，请用中文",
    "For example:\nbe brief",
    # reported speech about third parties
    "She said be brief.",
    "My boss told me to keep it short.",
    "Tom said call me Sam.",
    "他说简洁一点。",
    "老师说请用中文。",
    # negations
    "Don't be brief.",
    "Please don't call me Sam.",
    "Never speak English.",
    "Not in English.",
    "不要用中文回答",
    "别叫我小王。",
    "不要说中文",
    # questions asking, not requesting
    "Should I be brief?",
    "Would you like me to be more detailed?",
    "Do you speak English?",
    "我应该简洁一点吗？",
    "要不要说中文？",
    # statements, not requests
    "I speak English.",
    "我会说中文。",
    "They call me Sam.",
    "他们都叫我小王。",
    "I use bullet points in my notes.",
    "Things are getting more serious.",
    "放轻松一点",
    # not a name
    "Call me back.",
    "call me later",
    "Call me when you land.",
    "call me maybe",
    "Call me, please.",
    "call me sam",
    "叫我一下",
    "明天叫我起床",
    "叫我这个世界上最伟大的英雄人物",
    # nothing at all
    "",
    "Hello there!",
    "今天天气不错。",
]


def triples(found: list[Found]) -> list[tuple[str, str, bool]]:
    return [(f.category_key, f.content, f.temporary) for f in found]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_explicit_phrases_are_found(text: str, expected: list[tuple[str, str, bool]]) -> None:
    found = find_preferences(text)
    assert triples(found) == expected
    assert all(f.kind == "preference" for f in found)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_yield_nothing(text: str) -> None:
    assert find_preferences(text) == []


@pytest.mark.parametrize(
    ("text", "content", "span"),
    [
        ("Be brief... actually be more detailed.", DETAILED, "be more detailed"),
        ("be detailed. no wait, keep it short", BRIEF, "keep it short"),
        ("简洁一点。算了，详细一点。", DETAILED_ZH, "详细一点"),
        ("Call me Sam. Actually, call me Samuel.", "Call the user Samuel.", "call me Samuel"),
        ("Be casual, no, be formal", FORMAL, "be formal"),
    ],
)
def test_last_stated_wins(text: str, content: str, span: str) -> None:
    (found,) = find_preferences(text)
    assert found.content == content
    assert text[found.start : found.end] == span


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hi! Please call me Captain Rex, thanks.", "call me Captain Rex"),
        ("好的，以后叫我小王吧。", "叫我小王"),
        ("ok so, keep it short", "keep it short"),
        ("麻烦请用英文回答", "用英文回答"),
        ("> quoted\nBe formal.", "Be formal"),
    ],
)
def test_spans_point_at_the_phrase(text: str, words: str) -> None:
    (found,) = find_preferences(text)
    assert words in text[found.start : found.end]


def test_names_are_bounded_and_trimmed() -> None:
    (found,) = find_preferences("Call me " + "Abcdefghij" * 10 + "!")
    assert found.content == "Call the user " + ("Abcdefghij" * 4) + "."
    (found,) = find_preferences("call me Sam-")
    assert found.content == "Call the user Sam."
    (found,) = find_preferences("call me Jean Luc Picard The Second")
    assert found.content == "Call the user Jean Luc Picard."


def test_constants() -> None:
    assert TEMPORARY_DAYS == 1
    assert CATEGORIES == ("length", "language", "tone", "address", "format")


ADVERSARIAL = [
    "call me " * 20_000,
    "Call me A " * 20_000,
    "be " * 50_000 + "x",
    "be" + " " * 100_000 + "x",
    "'" * 100_000,
    "a '" * 50_000,
    "「" * 100_000,
    "`" * 100_001,
    "叫我" * 50_000,
    "简洁一点" * 30_000,
    "be brief, " * 20_000,
    "don't " * 20_000 + "be brief",
    "If " * 20_000 + "be brief",
    "Dr. " * 30_000,
    "e.g." * 30_000,
    "语气" * 50_000,
    "A" * 200_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_long_adversarial_input_finishes(text: str) -> None:
    check_invariants(text, find_preferences(text))


def check_invariants(text: str, found: list[Found]) -> None:
    categories = [f.category_key for f in found]
    assert len(categories) == len(set(categories))
    for f in found:
        assert f.kind == "preference"
        assert f.category_key in CATEGORIES
        assert 0 < len(f.content) <= MAX_CONTENT
        assert 0 <= f.start < f.end <= len(text)
    assert [f.start for f in found] == sorted(f.start for f in found)


PHRASES = [text for text, _ in POSITIVE if "\n" not in text and '"' not in text]
FRAGMENTS = [
    *PHRASES,
    *"be brief call me Sam if e.g. said don't".split(),
    *"叫我 小王 简洁一点 请用中文 如果 例如 他说 不要".split(),
    *[" ", "\n", ".", "?", "？", "。", ",", "，", ">", "`", "```", '"', "'", "“", "”", "「", "」"],
    *["\x00", "\ud800", "Dr.", "from now on", "以后"],
]
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=300)  # surrogates, NULs
SOUP = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40).map(
    "".join
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(ANY_TEXT, SOUP))
def test_never_raises_and_keeps_invariants(text: str) -> None:
    check_invariants(text, find_preferences(text))


WRAPPERS = [
    ("> ", ""),
    ("\n> ", "\n"),
    ("```\n", "\n```"),
    ("~~~\n", "\n~~~"),
    ("`", "`"),
    ('"', '"'),
    ("“", "”"),
    (" '", "' "),
    ("「", "」"),
    ("『", "』"),
]
PLAIN = st.text(st.sampled_from("abc xyz 好的 ,，"), max_size=20)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(PHRASES),
    st.sampled_from(WRAPPERS),
    PLAIN,
    PLAIN,
)
def test_wrapped_phrase_yields_nothing(phrase: str, wrap: tuple[str, str], a: str, b: str) -> None:
    opening, closing = wrap
    assume(not ("'" in opening and "'" in phrase))  # an apostrophe would close the quotation
    if opening.startswith(">"):
        a = ""  # a quote line starts the line
    text = a + "\n" + opening + phrase + closing + "\n" + b
    inside_start = len(a) + 1
    inside_end = inside_start + len(opening) + len(phrase) + len(closing)
    found = find_preferences(text)
    check_invariants(text, found)
    assert not [f for f in found if f.start < inside_end and f.end > inside_start]
