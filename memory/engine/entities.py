"""People named by their relation, resolved to their names by what was said (pure).

A question says "her mentor"; the turns about that person say "Gina" once they have been
introduced ("my mentor Gina", "Gina, my mentor, …", "Gina is my mentor"). Recall finds the
turns that state the relation (its word is in them), reads the names those turns give it
(:func:`aliases`), and asks for each name as a sub-query, so the turns about the person
come up though they never repeat the relation.

- :func:`relations` are the nouns a possessive points at in the question ("her mentor",
  "his sister's dog" → "sister"), those of :data:`RELATIONS` only: a list of people's
  roles, so "her car" asks for no one.
- Chinese questions name people by kinship or role words (:data:`RELATIONS_ZH`: "哥哥的狗",
  "师父"), and their names follow them ("我哥马超", "带我的师父韩雪").
- :func:`aliases` reads names in a text next to a relation word: a capitalised word (not
  the first of its sentence, unless the pattern fixes it) before or after it, a word or
  two of description allowed between ("my old roommate Aiko", "my mentor at work, Gina").
"""

from __future__ import annotations

import re

RELATIONS = frozenset(
    """
    mentor mentee teacher student coach boss manager colleague coworker friend bestie
    partner husband wife boyfriend girlfriend fiance fiancee spouse mother mom mum father
    dad parent parents sister brother sibling son daughter kid child children grandma
    grandmother grandpa grandfather aunt uncle cousin niece nephew neighbor neighbour
    roommate therapist doctor counselor pet dog cat puppy kitten
    """.split()
)
# The other words a person in that relation is called by: a question says "flatmate" or
# "sibling" where the turn said "roommate" or "brother". Each is searched as well.
SAME_AS = {
    "roommate": ("flatmate", "housemate"),
    "flatmate": ("roommate", "housemate"),
    "housemate": ("roommate", "flatmate"),
    "sibling": ("brother", "sister"),
    "spouse": ("husband", "wife", "partner"),
    "partner": ("husband", "wife", "boyfriend", "girlfriend"),
    "relative": ("cousin", "aunt", "uncle", "niece", "nephew"),
    "adviser": ("mentor",),
    "advisor": ("mentor",),
    "mentor": ("adviser", "advisor"),
    "kid": ("son", "daughter"),
    "kids": ("son", "daughter", "children"),
    "child": ("son", "daughter"),
    "children": ("son", "daughter", "kids"),
    "parent": ("mother", "father", "mom", "dad"),
    "parents": ("mother", "father", "mom", "dad"),
    "mom": ("mother", "mum"),
    "mum": ("mother", "mom"),
    "mother": ("mom", "mum"),
    "dad": ("father",),
    "father": ("dad",),
    "pup": ("dog", "puppy"),
    "puppy": ("dog",),
    "dog": ("puppy",),
    "boss": ("manager",),
    "manager": ("boss",),
    "coworker": ("colleague",),
    "colleague": ("coworker",),
}
RELATIONS = RELATIONS | frozenset(SAME_AS)
POSSESSIVES = r"(?i:my|his|her|their|your|our)"
_RELATION_RE = re.compile(
    rf"\b(?:{POSSESSIVES}|[A-Z][a-z]+'s)\s+(\w+?)(?:'s)?(?:\s+(\w+?)(?:'s)?)?\b"
)
_NAME = r"([A-Z][a-z]+)"
# What may stand between the possessive, the relation and the name: a word or two before
# it ("my old roommate", "my little brother") and where the person is from after it ("my
# mentor at work, Gina", "my friend from yoga, Jess").
_ADJECTIVES = r"(?:[a-z]+\s+){0,2}?"
_WHERE = r"(?:\s+(?:at|from|in)\s+(?:the\s+)?[a-z]+)?"
NOT_NAMES = frozenset(
    "I My His Her Their Your Our The A An And But So Oh Yes No Hey Hi Well Thanks".split()
)


# Chinese: kinship and roles, longest first; a doubled kin word ("哥哥") is also said
# once ("我哥马超"). A name is read after "我"/"的" + the word: a common surname and the
# character after it ("我哥马超上个月" → 马超; a name's first two characters find it all).
RELATIONS_ZH = tuple(
    sorted(
        """
        师父 师傅 导师 老师 教练 老板 上司 领导 同事 室友 舍友 邻居 朋友 闺蜜 男朋友
        女朋友 未婚夫 未婚妻 丈夫 老公 妻子 老婆 哥哥 姐姐 弟弟 妹妹 表哥 表姐 表弟 表妹
        堂哥 堂姐 堂弟 堂妹 妈妈 爸爸 儿子 女儿 奶奶 爷爷 外婆 外公 叔叔 阿姨 舅舅 姑姑
        """.split(),
        key=len,
        reverse=True,
    )
)
SURNAMES_ZH = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶"
    "程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾"
    "毛郝龚邵万钱严覃武戴莫孔向汤"
)


def relations(question: str) -> list[str]:
    """The relation nouns the question refers to people by, in order, each once."""
    found = [word for word in RELATIONS_ZH if word in question]
    found = [w for w in found if not any(w != other and w in other for other in found)]
    for match in _RELATION_RE.finditer(question):
        for word in (match.group(1), match.group(2)):
            word = (word or "").lower()
            if word in RELATIONS and word not in found:
                found.append(word)
                break
    return found


def aliases(text: str, relation: str) -> list[str]:
    """The names ``text`` gives the person it calls ``relation``, in order, each once."""
    if relation in RELATIONS_ZH:
        return _aliases_zh(text, relation)
    names: list[str] = []
    for word in said_as(relation):
        names.extend(name for name in _aliases(text, word) if name not in names)
    return names


def _aliases(text: str, relation: str) -> list[str]:
    rel = f"(?i:{re.escape(relation)})"
    patterns = (
        # my mentor Gina / my mentor, Gina / my old roommate Gina / my mentor at work, Gina
        rf"\b{POSSESSIVES}\s+{_ADJECTIVES}{rel}{_WHERE},?\s+{_NAME}",
        rf"{_NAME},?\s+{POSSESSIVES}\s+{_ADJECTIVES}{rel}\b",  # Gina, my mentor
        rf"{_NAME}\s+(?:is|was|has been)\s+{POSSESSIVES}\s+(?:\w+\s+)?{rel}\b",  # Gina is my mentor
        rf"\b{rel}\s+(?:named|called)\s+{_NAME}",  # a mentor named Gina
        rf"\b{rel}\b[^.!?]{{0,40}}[.!?]?\s+(?i:her|his|its|their)\s+name\s+is\s+{_NAME}",
    )
    names: list[str] = []
    for pattern in patterns:
        for match in re.finditer(pattern, text):
            name = match.group(1)
            if name.split()[0] not in NOT_NAMES and name not in names:
                names.append(name)
    return names


def said_as(relation: str) -> tuple[str, ...]:
    """``relation`` and the other words the person may have been called by
    (:data:`SAME_AS`)."""
    return (relation, *SAME_AS.get(relation, ()))


def searched_as(relation: str) -> str:
    """The words that find the turns stating ``relation``: those it may have been said as,
    and a doubled Chinese kin word also said once after "我" ("哥哥" → "哥哥 我哥")."""
    if len(relation) == 2 and relation[0] == relation[1] and relation in RELATIONS_ZH:
        return f"{relation} 我{relation[0]}"
    return " ".join(said_as(relation))


def _aliases_zh(text: str, relation: str) -> list[str]:
    said = re.escape(relation)
    if len(relation) == 2 and relation[0] == relation[1]:
        said = f"{said}|{re.escape(relation[0])}"
    names: list[str] = []
    for match in re.finditer(rf"(?:我|的)(?:{said})([{SURNAMES_ZH}][\u4e00-\u9fff])", text):
        if match.group(1) not in names:
            names.append(match.group(1))
    return names
