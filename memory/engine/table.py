"""The memory table (seed 000), pure: a conversation's tables, what the Actor reads of them,
and the edits a reply makes to them.

The table is the conversation's JSON memory document in slot :data:`SLOT`:
``{"tables": [{"name", "columns": [..], "rows": [[..], ..]}, ..]}``. Until one is stored
the conversation has :data:`DEFAULT_TABLES`; an operator may replace it (another set of
tables, other columns) through the documents API or console.

A reply edits it the way memory-table extensions of other roleplay front ends do: a
``<tableEdit>`` block (its lines may sit in an HTML comment) holding calls, one per line,
tables and rows counted from 0 and cells keyed by column index::

    <tableEdit>
    <!--
    insertRow(0, {"0": "evening", "1": "the lighthouse", "2": "Mira, Ann"})
    updateRow(1, 0, {"2": "trusts Ann"})
    deleteRow(2, 3)
    -->
    </tableEdit>

Inserts and updates apply in order; deletes last, highest row first, so the row numbers a
reply wrote all refer to the table it read. An edit naming a table, row or column that does
not exist is ignored (and counted). Limits: :data:`MAX_ROWS` rows a table, cells of
:data:`MAX_CELL_CHARS` characters.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

SLOT = "table"
MAX_TABLES = 20
MAX_ROWS = 100
MAX_CELL_CHARS = 500
MAX_RENDER_CHARS = 6000
DEFAULT_TABLES: dict[str, Any] = {
    "tables": [
        {"name": "Scene", "columns": ["time", "place", "who is present"], "rows": []},
        {
            "name": "People",
            "columns": ["name", "traits", "relationship with the user"],
            "rows": [],
        },  # fmt: skip
        {"name": "Promises and plans", "columns": ["who", "what", "status"], "rows": []},
    ]
}
INSTRUCTION = (
    "Memory table of this conversation (tables and rows numbered from 0). When the reply "
    "changes what it records, end the reply with the changes, one call per line:\n"
    "<tableEdit>\n<!--\n"
    'insertRow(table, {"0": "cell", "1": "cell"})\n'
    'updateRow(table, row, {"column": "new cell"})\n'
    "deleteRow(table, row)\n"
    "-->\n</tableEdit>"
)

_BLOCK = re.compile(r"<tableEdit>(.*?)</tableEdit>", re.S | re.I)
_CALL = re.compile(r"^\s*(insertRow|updateRow|deleteRow)\s*\((.*)\)\s*;?\s*$")
_ARGS = {
    "insertRow": re.compile(r"^\s*(\d+)\s*,\s*(\{.*\})\s*$", re.S),
    "updateRow": re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*,\s*(\{.*\})\s*$", re.S),
    "deleteRow": re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*$"),
}
_BARE_KEY = re.compile(r"([{,]\s*)(\d+)\s*:")


@dataclass(frozen=True)
class Edit:
    action: str  # insertRow, updateRow, deleteRow
    table: int
    row: int | None
    cells: dict[int, str]


def parse_edits(reply: str) -> tuple[list[Edit], int]:
    """The edits of every ``<tableEdit>`` block of ``reply``, and how many lines in them
    were not an edit."""
    edits, bad = [], 0
    for block in _BLOCK.findall(reply or ""):
        for line in block.replace("<!--", "\n").replace("-->", "\n").splitlines():
            if not line.strip():
                continue
            edit = _edit(line)
            if edit is None:
                bad += 1
            else:
                edits.append(edit)
    return edits, bad


def _edit(line: str) -> Edit | None:
    call = _CALL.match(line)
    if call is None:
        return None
    action, args = call.groups()
    found = _ARGS[action].match(args)
    if found is None:
        return None
    parts = found.groups()
    cells = _cells(parts[-1]) if action != "deleteRow" else {}
    if cells is None:
        return None
    row = int(parts[1]) if action != "insertRow" else None
    return Edit(action, int(parts[0]), row, cells)


def _cells(text: str) -> dict[int, str] | None:
    for candidate in (text, _BARE_KEY.sub(r'\1"\2":', text)):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            out = {}
            for key, value in data.items():
                if not str(key).strip().isdigit() or isinstance(value, dict | list):
                    return None
                out[int(str(key).strip())] = str(value)[:MAX_CELL_CHARS]
            return out
    return None


def tables_of(document: Any) -> list[dict[str, Any]]:
    """The well-formed tables of a stored document (the defaults when it holds none)."""
    if not isinstance(document, dict) or not isinstance(document.get("tables"), list):
        return copy.deepcopy(DEFAULT_TABLES["tables"])
    out = []
    for table in document["tables"][:MAX_TABLES]:
        if not isinstance(table, dict) or not isinstance(table.get("columns"), list):
            continue
        columns = [str(c) for c in table["columns"]]
        rows = [
            [str(cell) for cell in row][: len(columns)] + [""] * (len(columns) - len(row))
            for row in table.get("rows") or []
            if isinstance(row, list)
        ]
        out.append({"name": str(table.get("name", "")), "columns": columns, "rows": rows})
    return out


def apply(document: Any, edits: list[Edit]) -> tuple[dict[str, Any], int, int]:
    """(the new document, edits applied, edits ignored)."""
    tables = tables_of(document)
    applied = ignored = 0
    deletes = []
    for edit in edits:
        table = tables[edit.table] if edit.table < len(tables) else None
        if table is None:
            ignored += 1
        elif edit.action == "deleteRow":
            deletes.append(edit)
        elif edit.action == "insertRow" and len(table["rows"]) < MAX_ROWS and edit.cells:
            row = [""] * len(table["columns"])
            ignored += _set(row, edit.cells)
            table["rows"].append(row)
            applied += 1
        elif edit.action == "updateRow" and edit.row is not None and edit.row < len(table["rows"]):
            ignored += _set(table["rows"][edit.row], edit.cells)
            applied += 1
        else:
            ignored += 1
    for edit in sorted(deletes, key=lambda e: (e.table, -(e.row or 0))):
        rows = tables[edit.table]["rows"]
        if edit.row is not None and edit.row < len(rows):
            del rows[edit.row]
            applied += 1
        else:
            ignored += 1
    return {"tables": tables}, applied, ignored


def _set(row: list[str], cells: dict[int, str]) -> int:
    """Write ``cells`` into ``row``; how many named a column it does not have."""
    missing = 0
    for column, value in cells.items():
        if column < len(row):
            row[column] = value
        else:
            missing += 1
    return missing


def render(document: Any) -> str:
    """The tables as the Actor reads them: each table's number, name and columns, then its
    rows numbered; cut at :data:`MAX_RENDER_CHARS` characters."""
    lines = [INSTRUCTION]
    for t_index, table in enumerate(tables_of(document)):
        columns = " | ".join(f"{i}:{name}" for i, name in enumerate(table["columns"]))
        lines.append(f"\nTable {t_index}: {table['name']} (columns {columns})")
        if not table["rows"]:
            lines.append("  (no rows)")
        for r_index, row in enumerate(table["rows"]):
            lines.append(f"  row {r_index}: " + " | ".join(row))
    text = "\n".join(lines)
    return text if len(text) <= MAX_RENDER_CHARS else text[: MAX_RENDER_CHARS - 1] + "…"
