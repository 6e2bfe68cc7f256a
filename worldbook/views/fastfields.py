"""A direct HTML renderer for the editor's entry fields.

The book editor shows every field of every entry: about 40 inputs an entry, 20,000 for a
500-entry book. Django renders each widget through its template engine, which costs around
a millisecond a widget, so such a book took tens of seconds to open. The entry fields use only
five widget kinds (text, number, textarea, checkbox, select), which this module writes
directly with the same attributes, escaped with the standard library's ``html.escape`` (what
Django's ``escape`` calls, without its lazy-string wrapper); anything else falls back to
Django's own rendering. The round-trip tests read the rendered page back, so a
divergence from what Django would post shows up there.
"""

from __future__ import annotations

from html import escape as _escape

from django.forms import widgets
from django.utils.safestring import SafeString, mark_safe


def escape(value) -> str:
    return _escape(str(value), quote=True)


def flatatt(attrs: dict) -> str:
    """`` name="value"`` pairs; ``True`` is a bare attribute, ``False``/``None`` are left out."""
    parts = []
    for key, value in attrs.items():
        if value is True:
            parts.append(f" {key}")
        elif value is not False and value is not None:
            parts.append(f' {key}="{escape(value)}"')
    return "".join(parts)


def render_widget(bound, *, disabled: bool = False) -> SafeString:
    """The input element(s) of a bound field (``disabled`` for read-only pages)."""
    widget = bound.field.widget
    attrs = {**widget.attrs, "name": bound.html_name, "id": bound.auto_id}
    if disabled or bound.field.disabled:
        attrs["disabled"] = True
    if bound.form.is_bound and bound.errors:
        attrs["aria-invalid"] = "true"
    value = bound.value()
    if isinstance(widget, widgets.CheckboxInput):
        if widget.check_test(value):
            attrs["checked"] = True
        return mark_safe(f'<input type="checkbox"{flatatt(attrs)}>')
    if isinstance(widget, widgets.Textarea):
        text = widget.format_value(value) or ""
        # The newline after <textarea> is dropped by browsers, keeping leading newlines.
        return mark_safe(f"<textarea{flatatt(attrs)}>\n{escape(text)}</textarea>")
    if isinstance(widget, widgets.Select) and not widget.allow_multiple_selected:
        current = "" if value is None else str(value)
        options = "".join(
            f'<option value="{escape(choice)}"{" selected" if str(choice) == current else ""}>'
            f"{escape(label)}</option>"
            for choice, label in bound.field.choices
        )
        return mark_safe(f"<select{flatatt(attrs)}>{options}</select>")
    if isinstance(widget, widgets.Input) and widget.input_type in ("text", "number"):
        formatted = widget.format_value(value)
        if formatted is not None:
            attrs["value"] = formatted
        return mark_safe(f'<input type="{widget.input_type}"{flatatt(attrs)}>')
    return bound.as_widget()


def render_errors(bound) -> str:
    if not (bound.form.is_bound and bound.errors):
        return ""
    items = "".join(f"<li>{escape(error)}</li>" for error in bound.errors)
    return f'<ul class="errorlist error" data-field="{escape(bound.name)}">{items}</ul>'


def render_cell(bound, *, disabled: bool = False) -> SafeString:
    """A summary-table cell's content: the input and its errors."""
    return mark_safe(render_widget(bound, disabled=disabled) + render_errors(bound))


_WIDE = frozenset({"content", "conditions", "metadata", "source"})


def render_block(
    bound, *, disabled: bool = False, label: str | None = None, hint: str | None = None
) -> SafeString:
    """A labelled field of the entry's detail panel (label, input, errors, help); ``label``
    and ``hint`` replace the field's name and help text."""
    classes = ["field"]
    if bound.form.is_bound and bound.errors:
        classes.append("has-error")
    checkbox = isinstance(bound.field.widget, widgets.CheckboxInput)
    if checkbox:
        classes.append("flag")
    if bound.name in _WIDE:
        classes.append("wide")
    label_for = escape(bound.auto_id)
    name = escape(label or bound.name)
    widget = render_widget(bound, disabled=disabled)
    if checkbox:
        body = f'<label for="{label_for}">{widget} {name}</label>'
    else:
        body = f'<label for="{label_for}">{name}</label>{widget}'
    help_text = hint or bound.help_text
    help_html = f'<small class="help">{escape(help_text)}</small>' if help_text else ""
    return mark_safe(
        f'<div class="{" ".join(classes)}">{body}{render_errors(bound)}{help_html}</div>'
    )
