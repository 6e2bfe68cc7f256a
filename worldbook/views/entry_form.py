"""The editor's entry form: built from a stored entry or a POST, rendered field by field with
the fast renderer (``fastfields``), and given the errors the draft services raise, each next
to the field it names."""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe

from worldbook.errors import WorldbookError
from worldbook.forms import EntryForm, entry_initial
from worldbook.views.entry_labels import COMMON, LABELS
from worldbook.views.fastfields import render_block

PREFIX = "e"


def entry_form(entry: dict | None = None, data=None) -> EntryForm:
    if data is not None:
        return EntryForm(data, prefix=PREFIX)
    return EntryForm(prefix=PREFIX, initial=entry_initial(entry or {"content": ""}))


def form_html(form: EntryForm, *, read_only: bool) -> SafeString:
    """The common fields (``entry_labels.COMMON``), then the rest folded under "Advanced"
    (open when one of them has an error), each with its label and one-line hint."""
    common = [form[name] for name in COMMON]
    advanced = [form[name] for name in form.fields if name not in COMMON and name != "remove"]

    def block(bound) -> str:
        label, hint = LABELS[bound.name]
        return render_block(bound, disabled=read_only, label=label, hint=hint)

    opened = " open" if any(bound.errors for bound in advanced) else ""
    return mark_safe(
        '<div class="wb-grid">'
        + "".join(block(bound) for bound in common)
        + f'</div><details class="wb-advanced"{opened}><summary>Advanced</summary>'
        + '<div class="wb-grid">'
        + "".join(block(bound) for bound in advanced)
        + "</div></details>"
    )


def attach_error(form: EntryForm, exc: WorldbookError) -> list[str]:
    """Put a service error next to the field it names; returns the messages left over."""
    details = exc.details or {}
    placed: list[tuple[str, str]] = []
    if exc.code == "validation_error":
        for error in details.get("errors") or []:
            name, _, rest = str(error.get("loc", "")).partition(".")
            message = str(error.get("msg"))
            placed.append((name, f"{rest}: {message}" if rest else message))
    elif exc.code == "duplicate_entry_id":
        placed.append(("id", exc.message))
    elif exc.code == "invalid_regex":
        placed.append((details.get("field", "keys"), exc.message))
    elif exc.code == "outlet_name_required":
        placed.append(("outlet_name", "an entry placed at an outlet needs a name"))
    left = []
    for name, message in placed:
        if name in form.fields:
            form.add_error(name, message)
        else:
            left.append(message)
    if not placed:
        left.append(exc.message)
    return left
