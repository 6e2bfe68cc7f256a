"""The book editor's state: one entry form per table row, bound to a revision or to a POST.

Rows are identified by a short prefix listed in hidden ``rows`` inputs, in table order, so
rows can be appended (htmx) or marked for removal without renumbering anything. A large
book has tens of thousands of inputs, more than Django's ``DATA_UPLOAD_MAX_NUMBER_FIELDS``
allows in one form post, so ``static/js/worldbook.js`` packs the editor's fields into one
JSON field (``packed``) on submit; :func:`editor_data` unpacks it. Without JavaScript the
fields are posted as usual.

A publish error from ``validate_book`` names a location (``entries.3.keys.0``) or entry ids
(duplicates, dependency cycles); :meth:`BookEditor.apply_error` puts it next to that field of
that row, so the author fixes it where it is.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field

from django.http import QueryDict
from django.utils.safestring import SafeString, mark_safe

from worldbook.engine.schema import MAX_ENTRIES
from worldbook.errors import WorldbookError
from worldbook.forms import BookForm, EntryForm, blank_entry, entry_initial
from worldbook.views.fastfields import render_block, render_cell, render_widget

_PREFIX = re.compile(r"^[a-z0-9]{1,24}$")
MAX_PACKED_PAIRS = MAX_ENTRIES * 60


class PackedDataError(ValueError):
    """The ``packed`` field is not the JSON list of ``[name, value]`` pairs we expect."""


def editor_data(post: QueryDict) -> QueryDict:
    """The editor's form data, unpacking the ``packed`` JSON field when it is present."""
    packed = post.get("packed")
    if packed is None:
        return post
    try:
        pairs = json.loads(packed)
    except json.JSONDecodeError as exc:
        raise PackedDataError("the editor's packed form data is not JSON") from exc
    if not isinstance(pairs, list) or len(pairs) > MAX_PACKED_PAIRS:
        raise PackedDataError("the editor's packed form data has the wrong shape")
    data = QueryDict(mutable=True)
    for pair in pairs:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
        ):
            raise PackedDataError("the editor's packed form data has the wrong shape")
        data.appendlist(pair[0], pair[1])
    return data


def new_prefix() -> str:
    return "n" + secrets.token_hex(4)


@dataclass
class EntryRow:
    prefix: str
    form: EntryForm
    messages: list[str] = field(default_factory=list)
    read_only: bool = False

    @property
    def has_errors(self) -> bool:
        return bool(self.messages) or (self.form.is_bound and bool(self.form.errors))

    @property
    def remove_html(self) -> SafeString:
        return render_widget(self.form["remove"], disabled=self.read_only)

    @property
    def summary_cells(self) -> list[SafeString]:
        return [render_cell(b, disabled=self.read_only) for b in self.form.summary_fields()]

    @property
    def detail_html(self) -> SafeString:
        blocks = (render_block(b, disabled=self.read_only) for b in self.form.detail_fields())
        return mark_safe("".join(blocks))

    @property
    def detail_errors(self) -> bool:
        """Whether the row's expandable panel must open to show an error."""
        if not self.form.is_bound:
            return False
        return any(name not in EntryForm.SUMMARY for name in self.form.errors)


def blank_row(existing_ids=()) -> EntryRow:
    """A new row with a fresh, unused entry id."""
    taken = set(existing_ids)
    while True:
        entry_id = "entry-" + secrets.token_hex(3)
        if entry_id not in taken:
            break
    prefix = new_prefix()
    return EntryRow(prefix, EntryForm(prefix=prefix, initial=blank_entry(entry_id)))


class BookEditor:
    """The book form and its entry rows (see the module docstring)."""

    def __init__(self, book_form: BookForm, rows: list[EntryRow]):
        self.book_form = book_form
        self.rows = rows
        self.general_errors: list[str] = []
        self._kept: list[EntryRow] = []

    @classmethod
    def from_content(cls, content: dict) -> BookEditor:
        book_form = BookForm(
            initial={
                "name": content.get("name", ""),
                "description": content.get("description", ""),
                "metadata": content.get("metadata") or {},
            }
        )
        rows = []
        for index, entry in enumerate(content.get("entries") or []):
            prefix = f"e{index}"
            rows.append(EntryRow(prefix, EntryForm(prefix=prefix, initial=entry_initial(entry))))
        return cls(book_form, rows)

    @classmethod
    def from_post(cls, data: QueryDict) -> BookEditor:
        prefixes = list(dict.fromkeys(p for p in data.getlist("rows") if _PREFIX.match(p)))
        rows = [EntryRow(p, EntryForm(data, prefix=p)) for p in prefixes[: MAX_ENTRIES * 2]]
        editor = cls(BookForm(data), rows)
        if len(prefixes) > MAX_ENTRIES * 2:
            editor.general_errors.append(f"a book has at most {MAX_ENTRIES} entries")
        return editor

    @property
    def has_errors(self) -> bool:
        book_errors = self.book_form.is_bound and bool(self.book_form.errors)
        return book_errors or any(row.has_errors for row in self.rows)

    def disable(self) -> None:
        """Read-only rendering for viewers (entry fields are shared, so never mutated)."""
        for form_field in self.book_form.fields.values():
            form_field.disabled = True
        for row in self.rows:
            row.read_only = True

    def add_blank_row(self) -> EntryRow:
        ids = []
        for row in self.rows:
            value = row.form["id"].value()
            if value:
                ids.append(value)
        row = blank_row(ids)
        self.rows.append(row)
        return row

    def _removed(self, row: EntryRow) -> bool:
        """Marked for removal: such a row is dropped unvalidated (a half-typed new entry
        the author gave up on must not block the publish)."""
        return row.form.is_bound and row.form["remove"].value() is True

    def is_valid(self) -> bool:
        valid = self.book_form.is_valid()
        for row in self.rows:
            if not self._removed(row):
                valid = row.form.is_valid() and valid
        return valid and not self.general_errors

    def payload(self) -> dict:
        """The native book of the valid forms, without rows marked for removal."""
        self._kept = [row for row in self.rows if not self._removed(row)]
        return {
            "name": self.book_form.cleaned_data["name"],
            "description": self.book_form.cleaned_data["description"],
            "metadata": self.book_form.cleaned_data["metadata"],
            "entries": [row.form.entry() for row in self._kept],
        }

    # --- publish errors -----------------------------------------------------------------

    def apply_error(self, exc: WorldbookError) -> None:
        """Attach a ``validate_book`` error to the book form or to the rows it names."""
        if exc.code == "validation_error":
            for error in exc.details.get("errors") or []:
                self._place_loc(str(error.get("loc", "")), str(error.get("msg")))
        else:
            self._place_publish_error(exc)
        self.general_errors.append(f"{exc.code}: {exc.message}")

    def _rows_by_id(self) -> dict[str, list[EntryRow]]:
        out: dict[str, list[EntryRow]] = {}
        for index, row in enumerate(self._kept):
            entry_id = row.form.cleaned_data.get("id") or f"entry-{index}"
            out.setdefault(entry_id, []).append(row)
        return out

    def _add(self, row: EntryRow, name: str, message: str) -> None:
        if name in row.form.fields and name != "remove":
            row.form.add_error(name, message)
        else:
            row.messages.append(message)

    def _place_loc(self, loc: str, msg: str) -> bool:
        parts = loc.split(".")
        if parts[0] in ("name", "description", "metadata"):
            self.book_form.add_error(parts[0], f"{loc}: {msg}" if len(parts) > 1 else msg)
            return True
        if parts[0] != "entries" or len(parts) < 2 or not parts[1].isdigit():
            return False
        index = int(parts[1])
        if index >= len(self._kept):
            return False
        row = self._kept[index]
        name = parts[2] if len(parts) > 2 else ""
        rest = ".".join(parts[2:])
        message = f"{rest}: {msg}" if len(parts) > 3 else msg
        if name:
            self._add(row, name, message)
        else:
            row.messages.append(msg)
        return True

    def _place_publish_error(self, exc: WorldbookError) -> bool:
        details = exc.details or {}
        by_id = self._rows_by_id()
        targets: list[tuple[str, str, str]] = []  # (entry id, field, message)
        if exc.code == "duplicate_entry_id":
            for eid in details.get("entry_ids", []):
                targets.append((eid, "id", f"the id {eid!r} is used by more than one entry"))
        elif exc.code == "outlet_name_required":
            for eid in details.get("entry_ids", []):
                targets.append((eid, "outlet_name", "an entry placed at an outlet needs a name"))
        elif exc.code == "invalid_regex":
            eid = details.get("entry_id", "")
            targets.append((eid, details.get("field", "keys"), exc.message))
        elif exc.code == "dependency_missing":
            for item in details.get("missing", []):
                message = f"requires {item.get('requires')!r}, which is not an entry of this book"
                targets.append((item.get("entry_id", ""), "requires", message))
        elif exc.code == "dependency_self":
            for eid in details.get("entry_ids", []):
                targets.append((eid, "requires", "an entry cannot require itself"))
        elif exc.code == "dependency_cycle":
            cycle = " → ".join(details.get("cycle", []))
            for eid in details.get("entry_ids", []):
                targets.append((eid, "requires", f"dependency cycle: {cycle}"))
        placed = False
        for eid, name, message in targets:
            for row in by_id.get(eid, []):
                self._add(row, name, message)
                placed = True
        return placed
