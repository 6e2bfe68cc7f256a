"""The orchestrator's forced rules (seed 002), pure: specialists the program adds whatever
the model chose.

- The first turn adds ``judge_npc`` and ``direct_scene`` (to sort out who is who and set the
  scene's scale), each only if enabled.
- A person's name in the last 4 visible messages or the current query that the old state
  does not mention adds ``judge_npc``.
- Any forced specialist means phase 2 adds ``update_director_state`` (when enabled) if the
  orchestrator does not call it itself: forced, not merely offered (seed 002 line 59); the
  Director's candidate still has to pass its checks and the commit.

Names are found by a multilingual rule set, not a model:

- English: capitalised words after a title ("Captain Reyes", "Mr. Hale"), or capitalised
  words that are not the first word of a sentence and not common capitalised words ("I",
  "Monday", "God").
- Chinese: a common surname with an honorific ("王先生", "李老师"), a familiar prefix with a
  surname before a particle or punctuation ("老张", "小李"), or a name introduced as one
  ("名叫林清", "他叫张三").
- Japanese: a name with an honorific ("田中さん", "ユキちゃん", "佐藤先生").

The character's and the user's own names are never new people.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FIRST_TURN = ("judge_npc", "direct_scene")
NEW_PERSON = "judge_npc"
DIRECTOR_TOOL = "update_director_state"
RECENT_MESSAGES = 4

TITLES = (
    "Mr", "Mrs", "Ms", "Miss", "Dr", "Doctor", "Sir", "Dame", "Lady", "Lord", "Captain",
    "Capt", "Professor", "Prof", "King", "Queen", "Prince", "Princess", "Master", "Madam",
    "Father", "Mother", "Sister", "Brother", "Uncle", "Aunt", "General", "Sergeant", "Officer",
    "Detective", "Commander", "Lieutenant", "Inspector", "Duke", "Duchess", "Baron", "Count",
)  # fmt: skip
COMMON = {
    "I", "I'm", "I'll", "I've", "I'd", "OK", "Okay", "God", "Oh", "Yes", "No", "Hello", "Hi",
    "Hey", "Thanks", "Please", "Sorry", "Well", "Mister", "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March", "April", "May",
    "June", "July", "August", "September", "October", "November", "December", "English",
    "Chinese", "Japanese", "French", "German", "Christmas", "Easter", "TV", "AI",
    *TITLES,
}  # fmt: skip
_WORD = r"[A-Z][a-z]+(?:['-][A-Z]?[a-z]+)?"
_TITLED = re.compile(rf"\b(?:{'|'.join(TITLES)})\.?\s+({_WORD}(?:\s+{_WORD})?)")
_CAPITALISED = re.compile(rf"(?<![\w'])({_WORD}(?:\s+{_WORD})*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:\"“”\n]\s*|^\s*[-*]\s*)$")

SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏"
    "魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚"
    "邵万钱严覃武戴莫孔向汤"
)
_ZH_HONORIFIC = "|".join(
    "先生 小姐 女士 老师 师父 师傅 大人 公子 姑娘 阿姨".split()
    + "叔叔 大哥 大姐 老板 医生 队长 掌柜 少爷 夫人 将军".split()
)
_ZH_SURNAME_HONORIFIC = re.compile(rf"[{SURNAMES}][\u4e00-\u9fff]?(?:{_ZH_HONORIFIC})")
_ZH_FAMILIAR = re.compile(
    rf"(?:老|小|阿)[{SURNAMES}](?=[和说来在是的也都又就去把被跟对与、，。！？,.!?\s]|$)"
)
_ZH_INTRODUCED = re.compile(
    r"(?:名叫|叫做|名字是|名字叫|他叫|她叫|我叫)([\u4e00-\u9fff]{2,3}?)(?=[，。！？、,.!?\s的]|$)"
)
_JA_HONORIFIC = re.compile(
    r"([\u4e00-\u9fff\u30a0-\u30ff]{1,5}|[\u3040-\u309f]{2,4})(?:さん|くん|君|ちゃん|様|さま|先生|殿|氏)"
)


@dataclass(frozen=True)
class Forced:
    """The specialists the rules add, and whether phase 2 must add the Director."""

    tools: tuple[str, ...]
    names: tuple[str, ...]
    force_director: bool


def person_names(text: str) -> list[str]:
    """The candidate names of people in ``text``, in the order found, each once."""
    found: list[str] = []
    for match in _TITLED.finditer(text):
        found.append(match.group(1))
    for match in _CAPITALISED.finditer(text):
        words = match.group(1).split()
        if _SENTENCE_START.search(text[: match.start()]) and not _mid_sentence(text, words[0]):
            # The first word of a sentence is capitalised anyway: a name only if the same
            # word also appears capitalised mid-sentence.
            words = words[1:]
        words = [w for w in words if w not in COMMON]
        if words:
            found.append(" ".join(words))
    for pattern in (_ZH_SURNAME_HONORIFIC, _ZH_FAMILIAR):  # the whole form names the person
        found.extend(match.group(0) for match in pattern.finditer(text))
    for pattern in (_ZH_INTRODUCED, _JA_HONORIFIC):
        found.extend(match.group(1) for match in pattern.finditer(text))
    names = list(dict.fromkeys(name for name in found if name.strip()))
    # A name inside a longer one is the same person ("王" in "王先生", "Tom" in "Tom Hale").
    return [name for name in names if not any(name != other and name in other for other in names)]


def _mid_sentence(text: str, word: str) -> bool:
    for match in re.finditer(rf"(?<![\w']){re.escape(word)}(?![\w'])", text):
        if not _SENTENCE_START.search(text[: match.start()]):
            return True
    return False


def forced_tools(
    *,
    first_turn: bool,
    recent: Sequence[str],
    query: str,
    old_state: str | None,
    known: Iterable[str],
    enabled: Sequence[str],
) -> Forced:
    """What the rules add for a turn: ``recent`` the visible messages before it (oldest
    first; the last :data:`RECENT_MESSAGES` count), ``known`` the names that are never new
    (the character's, the user's), ``enabled`` the scenario's ``enabledTools``."""
    tools: list[str] = []
    if first_turn:
        tools.extend(tool for tool in FIRST_TURN if tool in enabled)
    state = (old_state or "").casefold()
    known_folded = {name.casefold() for name in known if name}
    texts = [*list(recent)[-RECENT_MESSAGES:], query]
    new = [
        name
        for name in person_names("\n".join(texts))
        if name.casefold() not in state
        and not any(part in known_folded for part in (name.casefold(), *name.casefold().split()))
    ]
    if new and NEW_PERSON in enabled and NEW_PERSON not in tools:
        tools.append(NEW_PERSON)
    return Forced(tuple(tools), tuple(new), bool(tools) and DIRECTOR_TOOL in enabled)
