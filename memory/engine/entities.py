"""People named by their relation, resolved to their names by what was said (pure).

A question says "her mentor"; the turns about that person say "Gina" once they have been
introduced ("my mentor Gina", "Gina, my mentor, …", "Gina is my mentor"). Recall finds the
turns that state the relation (its word is in them), reads the names those turns give it
(:func:`aliases`), and asks for each name as a sub-query, so the turns about the person
come up though they never repeat the relation.

- :func:`relations` are the nouns a possessive points at in the question ("her mentor",
  "his sister's dog" → "sister"), those of :data:`RELATIONS` only: a list of people's
  roles, so "her car" asks for no one.
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


def relations(question: str) -> list[str]:
    """The relation nouns the question refers to people by, in order, each once."""
    found = []
    for match in _RELATION_RE.finditer(question):
        for word in (match.group(1), match.group(2)):
            word = (word or "").lower()
            if word in RELATIONS and word not in found:
                found.append(word)
                break
    return found


def aliases(text: str, relation: str) -> list[str]:
    """The names ``text`` gives the person it calls ``relation``, in order, each once."""
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
