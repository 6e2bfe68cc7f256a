"""What the entry editor calls each field of an entry, and the one line that says what it
does. The fields keep the seed's names everywhere else (the API, exports, the form's
``name`` attributes); only the labels a person reads are here. :data:`COMMON` are shown
first, the rest under "Advanced". A test checks that every field of ``EntryForm`` has a
label here and that none is stale.
"""

from __future__ import annotations

COMMON = ("title", "keys", "content", "position", "depth", "order", "enabled", "constant")

LABELS: dict[str, tuple[str, str]] = {
    "id": ("Entry id", "Unique in the book; other entries' “Needs entries” name it."),
    "title": ("Title", "A name for the entry, shown in this list and given with its text."),
    "content": ("Text", "What the model reads when the entry is picked; empty text is never sent."),
    "keys": (
        "Keywords",
        "One a line (or comma separated); the entry is picked when one appears in the chat. "
        "/regex/i works too.",
    ),
    "secondary_keys": (
        "Second keywords",
        "Checked after a keyword matched, by the rule below (with “Use second keywords”).",
    ),
    "enabled": ("Enabled", "Off: kept in the book, never picked."),
    "constant": ("Always on", "Picked every turn without a keyword, budget permitting."),
    "required": ("Must be included", "The selection fails rather than leave it out."),
    "selective": ("Use second keywords", "Also check the second keywords after a match."),
    "logic": (
        "Second keywords rule",
        "and_any: one must appear; and_all: all; not_any: none may; not_all: not all.",
    ),
    "case_sensitive": ("Match case", "“Lia” does not match “lia”."),
    "match_whole_words": ("Whole words only", "“cat” does not match “category”."),
    "probability": ("Chance (%)", "How often it is kept when picked; 100: always."),
    "scan_depth": (
        "Messages searched",
        "How many recent messages are searched for its keywords; blank: the chat's setting.",
    ),
    "conditions": (
        "Conditions (JSON)",
        'Only when the chat\'s state matches, e.g. [{"path": "quest.started", "op": "eq", '
        '"value": true}].',
    ),
    "requires": ("Needs entries", "Entry ids that must be picked too, one a line."),
    "priority": ("Priority", "Higher is kept first when the budget is short."),
    "order": (
        "Order",
        "Among entries at the same place, a higher order goes later (closer to the chat).",
    ),
    "conflict_key": (
        "Conflict group",
        "Of the entries sharing this name, only one is picked; blank: none.",
    ),
    "audience": (
        "Who may read it",
        "Which models may be given it, one a line; actor is the character's reply model.",
    ),
    "kind": (
        "Kind",
        "lore, character and rule are picked as lore; template, state_update and presentation "
        "are left to their own tools.",
    ),
    "position": (
        "Position",
        "Where the text goes in the prompt: around the character, in the examples or the "
        "author's note, at a depth in the chat, or an outlet.",
    ),
    "depth": ("Depth", "With “at_depth”: how many messages from the end it is placed."),
    "role": ("Speaks as", "With “at_depth”: the role of the message it is sent as."),
    "outlet_name": ("Outlet name", "With “outlet”: the named place that takes it."),
    "exclude_recursion": (
        "Not triggered by other entries",
        "Only the chat triggers it, not the text of other picked entries.",
    ),
    "prevent_recursion": (
        "Does not trigger others",
        "Its text is not searched for other entries' keywords.",
    ),
    "runtime_requirements": (
        "Needs features",
        "Features this host does not run (an imported script, a template); such an entry is "
        "not sent.",
    ),
    "metadata": ("Notes (JSON)", "Extra data for you or your tools; never sent to the model."),
    "source": ("Source (JSON)", "Where the entry came from, as an import wrote it."),
    "sticky": ("Stays for", "Once picked, stays on for this many messages; blank: off."),
    "cooldown": ("Cooldown", "After that, cannot be picked for this many messages; blank: off."),
    "delay": ("Delay", "Cannot be picked before message number N of the chat; blank: off."),
    "delay_until_recursion": (
        "Only in later rounds",
        "blank: off; true: only when other entries' text triggers it; N: from round N on.",
    ),
    "group": (
        "Inclusion groups",
        "Of the picked entries of a group only one is kept; comma separated.",
    ),
    "group_override": (
        "Wins its group",
        "Kept over the rest of its group (the highest order among such entries wins).",
    ),
    "group_weight": ("Group weight", "Its chance against the rest of its group's weights."),
    "use_group_scoring": (
        "Group scoring",
        "Keep the group's entries with the most keyword matches; inherit: the chat's setting.",
    ),
    "vectorized": (
        "Found by meaning",
        "Also picked when the chat is close in meaning, not only by its keywords.",
    ),
}
