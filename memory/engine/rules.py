"""Local rules that catch a user's explicit, short preferences in one chat message (seed 004).

Only user messages are fed to ``find_preferences``; assistant output, tool results and
injected context never are (the caller's duty). The rules recognise a few explicit phrases in
English and Chinese ("be brief", "call me Sam", "请用中文", "简洁一点", "语气要轻松"); anything
complex is added by hand. A rule-found preference is temporary (expires after
``TEMPORARY_DAYS``) unless its sentence says it lasts ("from now on", "always", "以后"...).

How a message is read:

1. Masked: fenced code (```/~~~, unterminated runs to the end), inline code, ``>`` quote
   lines and quotations ("…", “…”, '…', 「…」, 『…』, «…») become filler of the same length, so
   offsets still point into the original text and nothing quoted is ever matched.
2. Split into sentences on ``. ! ? 。！？ ; ；`` and newlines (not on the dots of "e.g.",
   "Dr." and similar).
3. Per sentence, a phrase is skipped when the sentence holds an example marker, a conditional
   or reported-speech marker before the phrase, a negation in the phrase's clause (the text
   after the last comma or colon), or when the clause before it is only a subject ("I speak
   English", "他们叫我小王": a statement, not a request). A question counts only as a polite
   request ("can you be brief?"), never when it asks what to do ("should I be brief?").
4. At most one result per category: the last stated wins.

Choices the spec leaves open: contents are in the phrase's language; negated requests
("don't be brief") produce nothing, except phrases that are negative by nature ("no emoji",
"别啰嗦"); an English name is its leading capitalised words (at most 3), a Chinese one at most
8 characters, cut before particles such as 吧/就好. Every pattern is linear, and the checks
before a phrase are computed once per sentence, so a long adversarial message stays linear.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

CATEGORIES = ("length", "language", "tone", "address", "format")
TEMPORARY_DAYS = 1
MAX_CONTENT = 240
MAX_NAME = 40


@dataclass(frozen=True, slots=True)
class Found:
    """One preference found in a message, with the span of its phrase in the original text."""

    kind: str  # always "preference" (addressing the user by a name is one too)
    category_key: str  # one of CATEGORIES
    content: str  # a short canonical statement, never user text beyond an address name
    temporary: bool  # True unless the sentence marks it as lasting
    start: int
    end: int


_FILL = "\x00"
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_F = re.I

_MASK = re.compile(
    r"```[\s\S]*?(?:```|\Z)|~~~[\s\S]*?(?:~~~|\Z)|(?m:^[ \t]*[>＞].*$)|`[^`\n]*`"
    r'|"[^"\n]*"|“[^“”\n]*”|‘[^‘’\n]*’|「[^「」\n]*」|『[^『』\n]*』|«[^«»\n]*»'
    r"|(?<!\w)'[^'\n]*'(?!\w)"
)
_SPLIT = re.compile(
    r"(?<!\be)(?<!\be\.g)(?<!\bi)(?<!\bi\.e)(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bdr)(?<!\bprof)"
    r"(?<!\bst)\.|[!?。！？;；\n]",
    _F,
)
_EXAMPLE = re.compile(
    r"\be\.g\.|\bexamples?\b|\bfor\s+instance\b|\bsuch\s+as\b|\blike\s+saying\b"
    r"|例如|比如|举个例子|举例|譬如|例子|示例|例句",
    _F,
)
_COND = re.compile(
    r"\b(?:if|when|whenever|unless|in\s+case|suppose)\b|如果|假如|假设|要是|万一|除非|倘若|的话|当你",
    _F,
)
_REPORTED = re.compile(
    r"(?i:\b(?:he|she|they|someone|somebody|people|everyone|you|(?:my|his|her|their)\s+\w+)"
    r"\s+(?:\w+\s+)?(?:said|says|told|tells|asked|asks|wrote|writes)\b|\bapparently\b)"
    r"|\b(?!I\b)[A-Z][a-z]+\s+(?:said|says|told|tells|asked|asks|wrote|writes)\b"
    r"|(?:他|她|它|别人|有人|人家|大家|朋友|同事|老板|老师|妈妈|爸爸|老妈|老爸|哥哥|姐姐)们?"
    r"(?:也|都|总|总是|一直|曾经|刚才|刚刚|又|还)?(?:跟我|对我|和我)?(?:说|讲|告诉)|据说|听说"
)
_NEG = re.compile(
    r"\b(?:don['’]?t|do\s+not|doesn['’]?t|never|not|no|stop|quit|won['’]?t|shouldn['’]?t"
    r"|mustn['’]?t|can['’]?t|cannot|without)\b|不要|不用|不必|不需要|无需|不想|不希望|没必要|不许|甭|别再|千万别",
    _F,
)
_NEG_TAIL = re.compile(r"(?:不|别|没)(?:再|太|要太|那么)?\s*$")
_CLAUSE = re.compile(r"[,，、:：]")
_LASTING = re.compile(
    r"\b(?:always|from\s+now|permanently|forever|going\s+forward|from\s+here\s+on|every\s+time"
    r"|in\s+(?:the\s+)?future)\b|以后|今后|一直|永远|从现在起|从现在开始|往后|始终|总是",
    _F,
)
_POLITE = re.compile(
    r"\b(?:can|could|would|will)\s+you\b(?!\s+(?:like|prefer|want|rather))|\bplease\b"
    r"|能|可以|可不可以|麻烦|请",
    _F,
)
_ASKING = re.compile(
    r"\b(?:should|shall|do|must|may|can)\s+(?:i|we)\b|\b(?:do|would)\s+you\s+(?:like|prefer|want)\b"
    r"|我(?:应该|要不要|需要|是否|可以|能)|要不要|是否|你(?:喜欢|希望|想|觉得|更喜欢)",
    _F,
)
_SUBJECT = re.compile(
    r"\W*(?:(?:and|but|so|well|also|oh|yeah|actually)\W+)*"
    r"(?:i|we|they|he|she|it|people|everyone|(?:my|his|her|our|their)\s+\w+)(?:['’](?:ll|d|m|s|re|ve))?"
    r"(?:\s+(?:also|only|usually|always|often|sometimes|can|could|will|would|normally|generally"
    r"|mostly|just|do|did|really|never|still|am|is|are|was|were|get|got|getting))*\W*"
    r"|\W*(?:我|他|她|它|别人|大家|人家|朋友|同事)们?"
    r"(?:也|都|会|只|只会|一般|平时|通常|经常|总是|一直|能|可以|还|就)*\W*",
    _F,
)
_LEAD = re.compile(
    r"\W*(?:(?:please|pls|just|ok|okay|and|but|so|now|also|hey|a\s+bit|a\s+little|even|much"
    r"|(?:can|could|would|will)\s+you)\W*)*",
    _F,
)

_Build = Callable[[re.Match[str]], tuple[str, int, int] | None]


@dataclass(frozen=True, slots=True)
class _Rule:
    """A phrase pattern of one category; ``build`` gives (content, start, end) or None."""

    category: str
    pattern: re.Pattern[str]
    build: _Build
    lead: bool = False  # only at the start of its clause ("more serious, please")


def _const(content: str) -> _Build:
    return lambda m: (content, m.start(), m.end())


def _keyed(table: dict[str, str], template: str) -> _Build:
    """Content from the first named group that matched, normalised through ``table``."""

    def build(m: re.Match[str]) -> tuple[str, int, int]:
        key = next(v for v in m.groupdict().values() if v).lower()
        return template.format(table.get(key, key.capitalize())), m.start(), m.end()

    return build


_ZH_CUT = re.compile(r"就|吧|好吗|好不好|以后|今后|可以|行吗|即可|吗|啊|呀|哦|呢|嘛|啦|了|哈|喔")
_ZH_BAD_FIRST = frozenset(
    "一去来起做干帮别不怎什睡上下你我他她它的了吧吗呢啊给把被跟和回出过进吃喝看走再也都还就"
)
_NAME_STOP = frozenset(
    "i me you he she it we they him her us them back later tomorrow tonight today now soon "
    "again anytime sometime maybe when if whenever after before please up on at in out over "
    "whatever anything something everyone nobody sir".split()
)


def _clean_name(raw: str) -> str:
    """The name cut before Chinese particles, at most MAX_NAME chars, no trailing punctuation."""
    cut = _ZH_CUT.search(raw)
    name = raw[: cut.start()] if cut else raw
    return name[:MAX_NAME].rstrip(" \t.'’-")


def _address(template: str, latin_caps: bool, max_cjk: int) -> _Build:
    def build(m: re.Match[str]) -> tuple[str, int, int] | None:
        raw, end = m.group("name"), 0
        for word in re.finditer(r"\S+", raw):
            w = word.group().rstrip(".'’-")
            cjk = bool(w) and "\u3400" <= w[0] <= "\ufaff"
            capital = w[:1].isupper() or not latin_caps
            if not w or not (cjk or capital) or w.lower() in _NAME_STOP:
                break
            end = word.start() + len(w)
        name = _clean_name(raw[:end])
        cjk_len = sum("\u3400" <= c <= "\ufaff" for c in name)
        if not name or name[0] in _ZH_BAD_FIRST or cjk_len > max_cjk:
            return None
        return template.format(name), m.start(), m.start("name") + len(name)

    return build


_N = r"(?:一点|一些|点儿?|些)"
_TW = "casual|relaxed|informal|laid-back|chill|formal|serious|professional"
_TONE_EN = {w: "a casual, relaxed" for w in "casual relaxed informal laid-back chill".split()}
_TONE_EN |= {"formal": "a formal", "professional": "a formal", "serious": "a serious"}
_TZ = "轻松|随意|活泼|随和|正式|严肃"
_TONE_ZH = {"随意": "轻松", "活泼": "轻松", "随和": "轻松"}
_LANGS = (
    "english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish|italian"
    "|portuguese|russian|arabic|hindi|vietnamese|thai|indonesian|dutch|polish|turkish"
)
_LZ = (
    "简体中文|繁体中文|中文|汉语|普通话|粤语|英文|英语|日文|日语|韩文|韩语"
    "|法语|法文|德语|德文|西班牙语|俄语"
)
_LANG_ZH = {"汉语": "中文", "普通话": "中文", "英语": "英文", "日文": "日语", "韩文": "韩语"}
_LANG_ZH |= {"法文": "法语", "德文": "德语"}
_REPLIES = r"(?:your\s+|the\s+)?(?:replies|answers|responses|messages)"


# The phrases, one pattern per meaning (case-insensitive).
_BRIEF_EN = (
    rf"\b(?:(?:be|keep\s+(?:it|things|{_REPLIES})|make\s+(?:it|them|{_REPLIES}))\s+"
    r"(?:(?:more|very|really|super)\s+)?(?:brief|short|shorter|concise|succinct|terse)"
    r"|(?:shorter|brief|briefer|concise|short)\s+(?:replies|answers|responses|messages)"
    r"|(?:be\s+)?less\s+(?:verbose|wordy|long-winded)|don['’]?t\s+ramble)\b"
)
_DETAILED_EN = (
    rf"\b(?:(?:be|make\s+(?:it|them|{_REPLIES}))\s+(?:(?:more|very|really)\s+)?"
    r"(?:detailed|thorough|elaborate)|(?:longer|more\s+detailed|detailed|fuller|more\s+thorough)"
    r"\s+(?:replies|answers|responses|messages)|go\s+into\s+(?:more\s+)?detail"
    r"|be\s+more\s+verbose)\b"
)
_BRIEF_ZH = (
    rf"(?:简洁|简短|精简|简练|(?:说|写|讲|回答|回复)得?短){_N}|少(?:说|写)(?:一?点|些)"
    r"|言简意赅|长话短说|(?:别|不要)(?:那么|太)?(?:啰嗦|罗嗦|啰唆)"
)
_DETAILED_ZH = rf"(?:详细|具体|详尽|(?:说|写|讲|回答|回复)得?长|多(?:写|说|讲)){_N}"
_LANG_EN_RX = (
    r"\b(?:(?:reply|respond|answer|write|talk|speak|chat|communicate|text)"
    r"(?:\s+(?:to|with)\s+me)?(?:\s+only)?\s+in|speak|switch\s+to|use)"
    rf"\s+(?P<k>{_LANGS})\b"
)
_LANG_ZH_RX = (
    rf"(?:请|麻烦)?(?:(?:用|使用|以|改用|换成)(?P<k>{_LZ})"
    r"(?:回答|回复|回应|交流|聊天|说话|对话)?"
    rf"|说(?P<k2>{_LZ})|(?:回答|回复)用(?P<k3>{_LZ}))"
)
_TONE_EN_RX = (
    r"\b(?:(?:be|sound|keep\s+it|stay)\s+(?:(?:a\s+(?:bit|little)\s+)?more\s+)?"
    rf"(?P<k>{_TW})|(?:an?\s+)?(?:more\s+)?(?P<k2>{_TW})\s+(?:tone|voice|register))\b"
)
_TONE_ZH_RX = (
    rf"语气(?:要|请|可以|能|再|更|稍微)*(?P<k>{_TZ}){_N}?|(?<!放)(?P<k2>{_TZ}){_N}"
    rf"|(?:用|以|换成?)(?:更|比较)?(?P<k3>{_TZ})(?:一点|一些)?的?(?:语气|口吻|风格)"
)
_CALL_EN = r"\bcall\s+me\s+(?P<name>[^\W_][\w'’.\-]*(?:[ \t]+[^\W_][\w'’.\-]*){0,2})"
_CALL_ZH = (
    rf"(?:叫我|称呼我(?:为|作|做)?|管我叫|喊我)(?P<name>[{_CJK}]{{1,9}}"
    r"|[A-Za-z][A-Za-z0-9'\-]*(?:[ ]+[A-Z][A-Za-z0-9'\-]*){0,2})"
)
_NO_EMOJI_EN = (
    r"\b(?:no|without|never\s+use|don['’]?t\s+use|do\s+not\s+use|stop\s+using"
    r"|avoid(?:\s+using)?|skip\s+the|drop\s+the)\s+(?:any\s+|the\s+)?(?:emojis?|emoticons?)\b"
)
_BULLETS_EN = r"\b(?:use|with|in|as)\s+(?:a\s+)?(?:bullet(?:ed)?\s*(?:points?|lists?)|bullets)\b"
_NO_EMOJI_ZH = (
    r"(?:不要|别|不用|不许|禁止|请勿|勿)(?:再)?(?:用|使用|发|加|带|打)(?:任何)?"
    r"(?:表情(?:符号|包)?|emoji|颜文字)"
)
_BULLETS_ZH = r"(?:用|使用|以)(?:项目符号|要点|列表|分点|条目)|分点(?:回答|列出|说明|作答)"


def _rule(category: str, pattern: str, build: _Build, lead: bool = False) -> _Rule:
    return _Rule(category, re.compile(pattern, _F), build, lead)


_RULES = (
    _rule("length", _BRIEF_EN, _const("Keep replies brief.")),
    _rule("length", _DETAILED_EN, _const("Give detailed replies.")),
    _rule("length", _BRIEF_ZH, _const("回复简洁一些。")),
    _rule("length", _DETAILED_ZH, _const("回复详细一些。")),
    _rule("language", _LANG_EN_RX, _keyed({}, "Reply in {}.")),
    _rule("language", _LANG_ZH_RX, _keyed(_LANG_ZH, "用{}回复。")),
    _rule("tone", _TONE_EN_RX, _keyed(_TONE_EN, "Use {} tone.")),
    _rule("tone", rf"\bmore\s+(?P<k>{_TW})\b", _keyed(_TONE_EN, "Use {} tone."), lead=True),
    _rule("tone", _TONE_ZH_RX, _keyed(_TONE_ZH, "语气{}一些。")),
    _rule("address", _CALL_EN, _address("Call the user {}.", latin_caps=True, max_cjk=8)),
    _rule("address", _CALL_ZH, _address("称呼用户为{}。", latin_caps=False, max_cjk=8)),
    _rule("format", _NO_EMOJI_EN, _const("Do not use emoji.")),
    _rule("format", _BULLETS_EN, _const("Use bullet points.")),
    _rule("format", _NO_EMOJI_ZH, _const("不要使用表情符号。")),
    _rule("format", _BULLETS_ZH, _const("用要点列表回复。")),
)


def _mask(text: str) -> str:
    """``text`` with code, quote lines and quotations replaced by filler (newlines kept)."""
    return _MASK.sub(lambda m: re.sub(r"[^\n]", _FILL, m.group()), text)


def _sentences(masked: str) -> Iterator[tuple[int, str, str]]:
    """(offset, sentence, terminator) for each sentence of the masked text."""
    pos = 0
    for m in _SPLIT.finditer(masked):
        yield pos, masked[pos : m.start()], m.group()
        pos = m.end()
    yield pos, masked[pos:], ""


def _first(pattern: re.Pattern[str], sentence: str) -> int:
    m = pattern.search(sentence)
    return m.start() if m else len(sentence) + 1


def _scan(base: int, sent: str, term: str) -> Iterator[tuple[str, Found]]:
    """The accepted phrases of one sentence (``base`` is its offset in the text)."""
    if _EXAMPLE.search(sent):
        return
    if (term and term in "?？") or sent.rstrip().endswith(("吗", "么")):
        if _ASKING.search(sent) or not _POLITE.search(sent):
            return
    cond, reported = _first(_COND, sent), _first(_REPORTED, sent)
    bounds = [m.start() for m in _CLAUSE.finditer(sent)]
    negs = [(m.start(), m.end()) for m in _NEG.finditer(sent)]
    neg_starts = [s for s, _ in negs]
    temporary = _LASTING.search(sent) is None
    for rule in _RULES:
        for m in rule.pattern.finditer(sent):
            s = m.start()
            if cond < s or reported < s:
                continue
            i = bisect_left(bounds, s)
            clause_at = bounds[i - 1] + 1 if i else 0
            j = bisect_left(neg_starts, clause_at)
            if (j < len(negs) and negs[j][1] <= s) or _NEG_TAIL.search(sent[max(0, s - 4) : s]):
                continue
            clause = sent[clause_at:s]
            if len(clause) <= 80 and _SUBJECT.fullmatch(clause):
                continue
            if rule.lead and not (len(clause) <= 60 and _LEAD.fullmatch(clause)):
                continue
            built = rule.build(m)
            if built is not None:
                content, a, b = built
                yield (
                    rule.category,
                    Found(
                        "preference",
                        rule.category,
                        content[:MAX_CONTENT],
                        temporary,
                        base + a,
                        base + b,
                    ),
                )


def find_preferences(text: str) -> list[Found]:
    """The explicit short preferences of one user message, at most one per category (the
    last stated wins), in text order. Never raises on any ``str``."""
    if not isinstance(text, str) or not text:
        return []
    best: dict[str, Found] = {}
    carry = False  # "For example:" / "If you're tired:" ending a line governs the next one
    for base, sent, term in _sentences(_mask(text)):
        if not carry:
            for category, found in _scan(base, sent, term):
                if category not in best or found.start >= best[category].start:
                    best[category] = found
        marked = _EXAMPLE.search(sent) or _COND.search(sent)
        carry = bool(marked) and sent.rstrip().endswith((":", "："))
    return sorted(best.values(), key=lambda f: f.start)
