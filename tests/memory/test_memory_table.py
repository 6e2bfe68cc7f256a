"""The memory table (seed 000): a reply's ``<tableEdit>`` calls parsed and applied, the
table replaced only when something changed, a version conflict read again and retried
once, and the whole path from a real turn through a real worker to the next turn's
prompt."""

from __future__ import annotations

import time

import pytest

from memory.configs.services import put_settings
from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.engine import table
from roleplay.llm.scripted_server import Reply
from roleplay.memory_plugin.services import table as memory_table

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = """The keeper lights the lamp.
<tableEdit>
<!--
insertRow(0, {"0": "evening", "1": "the lighthouse", "2": "Mira, Ann"})
insertRow(1, {0: "Mira", 1: "quiet", 2: "wary"})
updateRow(1, 0, {"2": "trusts Ann"})
deleteRow(9, 0)
not an edit
-->
</tableEdit>"""


def test_edits_are_parsed_from_the_block_only():
    edits, bad = table.parse_edits(REPLY + '\ninsertRow(0, {"0": "outside"})')
    assert [e.action for e in edits] == ["insertRow", "insertRow", "updateRow", "deleteRow"]
    assert edits[1].cells == {0: "Mira", 1: "quiet", 2: "wary"}
    assert bad == 1
    assert table.parse_edits("no table here") == ([], 0)
    assert table.parse_edits("<tableEdit>insertRow(0, [1])</tableEdit>") == ([], 1)


def test_edits_apply_in_order_with_deletes_last():
    doc, applied, ignored = table.apply(None, table.parse_edits(REPLY)[0])
    scene, people = doc["tables"][0], doc["tables"][1]
    assert scene["rows"] == [["evening", "the lighthouse", "Mira, Ann"]]
    assert people["rows"] == [["Mira", "quiet", "trusts Ann"]]
    assert (applied, ignored) == (3, 1)  # the delete names no table 9
    more = table.parse_edits(
        '<tableEdit>insertRow(0, {"0": "night"})\ndeleteRow(0, 0)\n'
        'updateRow(0, 5, {"0": "x"})\ninsertRow(0, {"7": "no column"})</tableEdit>'
    )[0]
    doc, applied, ignored = table.apply(doc, more)
    assert [row[0] for row in doc["tables"][0]["rows"]] == ["night", ""]
    assert ignored == 2  # the row 5 update and the unknown column


def test_the_render_numbers_tables_rows_and_columns():
    doc, _a, _i = table.apply(None, table.parse_edits(REPLY)[0])
    text = table.render(doc)
    assert "<tableEdit>" in text and "Table 1: People (columns 0:name" in text
    assert "row 0: Mira | quiet | trusts Ann" in text
    assert "(no rows)" in table.render(None)


def test_a_reply_replaces_the_table_only_when_it_changes(tenant, conversation):
    session = conversation.session_id
    assert memory_table.apply_reply(tenant, session, "no edits") == "none"
    assert memory_table.apply_reply(tenant, session, REPLY) == "replaced"
    assert read_document(tenant, session, table.SLOT)["revision"] == 1
    same = '<tableEdit>updateRow(1, 0, {"2": "trusts Ann"})</tableEdit>'
    assert memory_table.apply_reply(tenant, session, same) == "unchanged"
    assert read_document(tenant, session, table.SLOT)["revision"] == 1


def test_a_conflict_is_read_again_and_retried_once(tenant, conversation, monkeypatch):
    session = conversation.session_id
    memory_table.apply_reply(tenant, session, REPLY)
    real_read, writes = memory_table.read_document, []

    def read_then_someone_writes(*args):
        current = real_read(*args)
        if len(writes) < 1:  # another writer moves the table between our read and write
            doc = {"tables": table.tables_of(current["memory"])}
            doc["tables"][2]["rows"].append(["Ann", "return the key", "open"])
            writes.append(put_document(tenant, session, table.SLOT, current["revision"], doc,
                                       origin="api"))  # fmt: skip
        return current

    monkeypatch.setattr(memory_table, "read_document", read_then_someone_writes)
    edit = '<tableEdit>updateRow(0, 0, {"0": "midnight"})</tableEdit>'
    assert memory_table.apply_reply(tenant, session, edit) == "replaced"
    tables = read_document(tenant, session, table.SLOT)["memory"]["tables"]
    assert tables[0]["rows"][0][0] == "midnight"
    assert tables[2]["rows"] == [["Ann", "return the key", "open"]]  # the other write kept


def test_a_turn_edits_the_table_and_the_next_turn_reads_it(
    celery_worker, api, tenant, conversation, llm
):
    put_settings(tenant, {"memory_table": True})
    llm.default = Reply(content=REPLY, chunks=3)
    path = f"/api/v1/conversations/{conversation.pk}/turns/run"
    first = api.post(path, {"client_message_id": "t1", "content": "Light."}, format="json")
    assert first.status_code == 201, first.content
    assert "Memory table of this conversation" in str(llm.requests[-1]["messages"])
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline
        and not read_document(tenant, conversation.session_id, table.SLOT)["revision"]
    ):
        time.sleep(0.2)
    assert read_document(tenant, conversation.session_id, table.SLOT)["revision"] == 1
    llm.default = Reply(content="Goodnight.", chunks=2)
    api.post(path, {"client_message_id": "t2", "content": "Goodnight."}, format="json")
    assert "row 0: Mira | quiet | trusts Ann" in str(llm.requests[-1]["messages"])
