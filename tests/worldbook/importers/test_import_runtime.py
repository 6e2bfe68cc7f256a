"""Dynamic content that needs a runtime we do not run is flagged, counted and kept."""

from __future__ import annotations

import pytest
from wb_import_builders import entry_by_id, st_entry, st_file, valid

from worldbook.engine.importers import parse_import, runtime_requirements


@pytest.mark.parametrize(
    ("text", "needs"),
    [
        ("<% if (stat.hp < 10) { %>You are weak.<% } %>", ["ejs"]),
        ("<UpdateVariable>_.set('hp', 10);</UpdateVariable>", ["mvu"]),
        ("Then _.set('mood', 'angry') happens", ["mvu"]),
        ("{{setvar::mood::angry}}", ["mvu"]),
        ("Mood: {{getvar::mood}}", ["mvu"]),
        ("{{ addvar::gold::5}}", ["mvu"]),
        ("<script>alert(1)</script>", ["script"]),
        ("<style>.a{}</style><button onclick='go()'>Go</button>", ["script"]),
        ("{{// a STscript comment }}", ["script"]),
        ("First line\n/run QuickReply.stat", ["script"]),
        ("<CharInfo>name: ?</CharInfo>", ["charinfo"]),
        ("<% x %> and {{setvar::a::1}} and <script>", ["ejs", "mvu", "script"]),
    ],
)
def test_detectors(text, needs):
    assert runtime_requirements([text]) == needs


@pytest.mark.parametrize(
    "text",
    [
        "{{char}} greets {{user}} at the gate.",
        "Percent signs: 50% of <b>guards</b> sleep; the rest 50%.",
        "<style>.plain { color: red }</style> Just styled text.",
        "A path like /runway/ or and/or, not a slash command.",
        "铜钥匙只能开启灰港城门的侧门。",
    ],
)
def test_plain_lore_is_not_blocked(text):
    assert runtime_requirements([text]) == []


def test_blocked_entries_are_kept_flagged_and_counted():
    entries = [
        st_entry(0, comment="Status panel", content="<script>render()</script>"),
        st_entry(1, comment="Keys var", key=["{{getvar::door}}"], content="plain"),
        st_entry(2, comment="Timed", content="plain", sticky=3, cooldown=2, delay=1, group="g"),
    ]
    result = parse_import("lore.json", st_file(*entries))
    valid(result.book)
    assert entry_by_id(result.book, "0")["runtime_requirements"] == ["script"]
    assert entry_by_id(result.book, "1")["runtime_requirements"] == ["mvu"]
    # Sticky, cooldown, delay and groups are executed by our selector: not blocked.
    assert entry_by_id(result.book, "2")["runtime_requirements"] == []
    assert result.report["runtime_blocked_count"] == 2
    assert result.report["runtime_blocked"] == [
        {"entry_id": "0", "title": "Status panel", "reasons": ["script"]},
        {"entry_id": "1", "title": "Keys var", "reasons": ["mvu"]},
    ]
    assert entry_by_id(result.book, "0")["content"] == "<script>render()</script>"
