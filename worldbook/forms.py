"""Console forms of worldbooks: the entry editor's fields, new books, uploads, bindings, playground.

The forms only turn HTML inputs into the native book's Python values (lists, JSON, optional
numbers, tri-states) and back, so that an untouched entry survives a round trip through the
editor byte for byte. Whether a book is *valid* is decided in one place,
``worldbook.services.validate_book``; its errors are attached to these forms by the views.
"""

from __future__ import annotations

import json
import re

from django import forms
from django.core.exceptions import ValidationError
from django.forms import formset_factory

from console.storable import loads as loads_json
from worldbook.engine.keys import parse_regex_key
from worldbook.engine.schema import (
    DEFAULT_CAPABILITIES,
    KINDS,
    LOGICS,
    MAX_ENTRY_ID_CHARS,
    ORDER_LIMIT,
    POSITIONS,
    EntryIn,
    SelectRequest,
)

ROLES = ("system", "user", "assistant")
MAX_JSON_CHARS = 200_000
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def _choices(values) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


def split_list(text: str, *, regex_aware: bool = False) -> list[str]:
    """One item per line; inside a line commas also separate items (``\\,`` is a literal
    comma). With ``regex_aware``, a line written ``/pattern/flags`` is one key even if the
    pattern has commas, because regex keys (``/a{1,3}/``) need them."""
    items: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.strip()
        if not line:
            continue
        if regex_aware and parse_regex_key(line) is not None:
            items.append(line)
            continue
        for part in _UNESCAPED_COMMA.split(line):
            part = part.strip().replace("\\,", ",")
            if part:
                items.append(part)
    return items


def join_list(items, *, regex_aware: bool = False) -> str:
    """The inverse of :func:`split_list`: one item a line, literal commas escaped."""
    lines = []
    for item in items:
        item = str(item)
        if regex_aware and parse_regex_key(item) is not None:
            lines.append(item)
        else:
            lines.append(item.replace(",", "\\,"))
    return "\n".join(lines)


class TextField(forms.CharField):
    """Text kept as typed (no stripping) except browser CRLF line ends, which become LF."""

    def __init__(self, **kwargs):
        kwargs.setdefault("strip", False)
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        value = super().to_python(value)
        return value.replace("\r\n", "\n") if isinstance(value, str) else value


class ListField(forms.CharField):
    """A list of strings edited as lines (or comma separated)."""

    def __init__(self, *, regex_aware: bool = False, max_items: int = 200, **kwargs):
        self.regex_aware = regex_aware
        self.max_items = max_items
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 2}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return join_list(value, regex_aware=self.regex_aware)
        return value

    def to_python(self, value):
        items = split_list(value or "", regex_aware=self.regex_aware)
        if len(items) > self.max_items:
            raise ValidationError(f"at most {self.max_items} items (got {len(items)})")
        return items


class JsonTextField(forms.CharField):
    """JSON in a textarea, checked to be an object or a list; blank is the empty value."""

    def __init__(self, *, kind: type, nullable: bool = False, **kwargs):
        self.kind = kind
        self.nullable = nullable
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", MAX_JSON_CHARS)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if value is None:
            return ""
        if isinstance(value, dict | list):
            # Blank means "empty" for a required JSON field but "null" for a nullable one.
            if not value and not self.nullable:
                return ""
            return json.dumps(value, ensure_ascii=False)
        return value

    def to_python(self, value):
        text = (value or "").strip()
        if not text:
            return None if self.nullable else self.kind()
        try:
            parsed = loads_json(text, self.label or "JSON")
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from exc
        except ValueError as exc:  # too deep, a number or a text the book cannot keep
            raise ValidationError(f"invalid JSON: {exc}") from exc
        if parsed is None and self.nullable:
            return None
        if not isinstance(parsed, self.kind):
            name = "an object ({...})" if self.kind is dict else "a list ([...])"
            raise ValidationError(f"must be {name}")
        return parsed


class OptionalIntegerField(forms.IntegerField):
    """Blank means ``null`` (inherit / off), which the native book distinguishes from 0."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)


class OptionalTextField(forms.CharField):
    """Blank means ``null``: ``conflict_key`` and ``outlet_name`` may not be empty strings."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        value = super().to_python(value)
        return value or None


class TriStateField(forms.ChoiceField):
    """``None`` (inherit the request's setting), ``True`` or ``False``."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        choices = [("", "inherit"), ("true", "yes"), ("false", "no")]
        super().__init__(choices=choices, **kwargs)

    def prepare_value(self, value):
        if value is True:
            return "true"
        if value is False:
            return "false"
        return value or ""

    def to_python(self, value):
        return {"true": True, "false": False}.get(value or "", None)

    def validate(self, value):
        return None


class RecursionDelayField(forms.CharField):
    """SillyTavern's ``delayUntilRecursion``: off, on (``true``) or a recursion level 1–100."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "help_text", "blank = off, true = from the first recursion, N = from level N"
        )
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if value is True:
            return "true"
        if value is False or value is None:
            return ""
        return str(value)

    def to_python(self, value):
        text = (value or "").strip().lower()
        if text in ("", "false", "no", "off"):
            return False
        if text in ("true", "yes", "on"):
            return True
        if text.isdigit() and 1 <= int(text) <= 100:
            return int(text)
        raise ValidationError("use blank, true, or a recursion level from 1 to 100")


def _int(low: int, high: int, **kwargs) -> forms.IntegerField:
    return forms.IntegerField(min_value=low, max_value=high, **kwargs)


def _flag(help_text: str = "") -> forms.BooleanField:
    return forms.BooleanField(required=False, help_text=help_text)


class EntryForm(forms.Form):
    """Every field of one native entry (``EntryIn``), plus the editor's ``remove`` mark."""

    remove = _flag()
    id = forms.CharField(required=False, max_length=MAX_ENTRY_ID_CHARS)
    title = TextField(max_length=500)
    content = TextField(widget=forms.Textarea(attrs={"rows": 3}))
    keys = ListField(regex_aware=True, help_text="one key a line (or comma separated); /re/i")
    secondary_keys = ListField(regex_aware=True)
    enabled = _flag()
    constant = _flag()
    required = _flag()
    selective = _flag("use secondary keys with the logic below")
    logic = forms.ChoiceField(choices=_choices(LOGICS))
    case_sensitive = _flag()
    match_whole_words = _flag()
    probability = _int(0, 100)
    scan_depth = OptionalIntegerField(min_value=0, max_value=100, help_text="blank = request's")
    conditions = JsonTextField(
        kind=list, help_text='[{"path": "quest.started", "op": "eq", "value": true}]'
    )
    requires = ListField(max_items=20, help_text="entry ids")
    priority = _int(-ORDER_LIMIT, ORDER_LIMIT)
    order = _int(-ORDER_LIMIT, ORDER_LIMIT)
    conflict_key = OptionalTextField(max_length=200)
    audience = ListField(max_items=20)
    kind = forms.ChoiceField(choices=_choices(KINDS))
    position = forms.ChoiceField(choices=_choices(POSITIONS))
    depth = _int(0, 10_000)
    role = forms.ChoiceField(choices=_choices(ROLES))
    outlet_name = OptionalTextField(max_length=100)
    exclude_recursion = _flag()
    prevent_recursion = _flag()
    runtime_requirements = ListField(max_items=50)
    metadata = JsonTextField(kind=dict)
    source = JsonTextField(kind=dict, nullable=True)
    sticky = OptionalIntegerField(min_value=0, max_value=1_000_000)
    cooldown = OptionalIntegerField(min_value=0, max_value=1_000_000)
    delay = OptionalIntegerField(min_value=0, max_value=1_000_000)
    delay_until_recursion = RecursionDelayField()
    group = TextField(max_length=500, help_text="inclusion groups, comma separated")
    group_override = _flag()
    group_weight = _int(1, 1_000_000)
    use_group_scoring = TriStateField()
    vectorized = _flag()

    # The table row shows these; the rest sit in the entry's expandable panel.
    SUMMARY = ("id", "title", "keys", "content", "position", "order", "enabled", "constant")

    def summary_fields(self):
        return [self[name] for name in self.SUMMARY]

    def detail_fields(self):
        return [self[name] for name in self.fields if name not in self.SUMMARY + ("remove",)]

    def entry(self) -> dict:
        """The cleaned native entry (call after ``is_valid()``)."""
        data = {name: self.cleaned_data[name] for name in EntryIn.model_fields}
        data["id"] = data["id"] or None
        return data


class _SharedFields(dict):
    """Forms deep-copy their fields on creation; a 500-entry editor would copy 20,000 fields.
    Entry fields are never changed per form (read-only rendering is a renderer flag, see
    ``worldbook/views/fastfields.py``), so every ``EntryForm`` shares them."""

    def __deepcopy__(self, memo):
        return dict(self)


EntryForm.base_fields = _SharedFields(EntryForm.base_fields)


def entry_initial(entry: dict) -> dict:
    """Initial form values of a stored entry (defaults filled by ``EntryIn``)."""
    return EntryIn.model_validate(entry).model_dump(mode="json")


def blank_entry(entry_id: str) -> dict:
    return {**EntryIn(content="").model_dump(mode="json"), "id": entry_id}


class BookForm(forms.Form):
    """The book-level fields of the editor."""

    name = forms.CharField(max_length=300)
    description = TextField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))
    metadata = JsonTextField(kind=dict, help_text="a JSON object; blank = {}")


class NewBookForm(forms.Form):
    name = forms.CharField(max_length=300)
    description = TextField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 3}))


class ImportUploadForm(forms.Form):
    file = forms.FileField(
        help_text="SillyTavern world-info JSON, a CCv2/CCv3 card (JSON) or a PNG card, or a "
        "NovelAI, Agnai or RisuAI lorebook; at most 16 MiB."
    )


class BindingForm(forms.Form):
    """One bound book: blank revision follows the head, a number pins that revision."""

    book = forms.ChoiceField(choices=[])
    revision = forms.IntegerField(
        min_value=1, required=False, help_text="blank = follow the head revision"
    )
    enabled = forms.BooleanField(required=False, initial=True)
    position = forms.IntegerField(min_value=-1_000_000, max_value=1_000_000, initial=0)

    def __init__(self, *args, book_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["book"].choices = [("", "— choose a book —"), *book_choices]


class BaseBindingFormSet(forms.BaseFormSet):
    """Existing bindings are kept unless marked for removal; an untouched blank row is not
    a binding."""

    def kept_forms(self) -> list[BindingForm]:
        kept = []
        for index, form in enumerate(self.forms):
            if self._should_delete_form(form):
                continue
            if index >= self.initial_form_count() and not form.has_changed():
                continue
            kept.append(form)
        return kept

    def clean(self):
        if any(self.errors):
            return
        seen = set()
        for form in self.kept_forms():
            book = form.cleaned_data.get("book")
            if book in seen:
                form.add_error("book", "this book is already bound")
            seen.add(book)

    def bindings(self) -> list[dict]:
        """The ``put_bindings`` body (call after ``is_valid()``)."""
        return [
            {
                "book_id": form.cleaned_data["book"],
                "revision": form.cleaned_data["revision"],
                "enabled": form.cleaned_data["enabled"],
                "position": form.cleaned_data["position"],
            }
            for form in self.kept_forms()
        ]


BindingFormSet = formset_factory(
    BindingForm, formset=BaseBindingFormSet, extra=1, can_delete=True, max_num=20
)


# --- selection playground ------------------------------------------------------------------

_SELECT = SelectRequest.model_fields
_HISTORY_LINE = re.compile(r"^([A-Za-z_][\w-]{0,63}):[ \t]?(.*)$")


def parse_history(text: str) -> list[dict]:
    """``role: text`` lines as history messages; a line without a ``role:`` prefix continues
    the previous message, so multi-line messages can be pasted as they are."""
    messages: list[dict] = []
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        match = _HISTORY_LINE.match(line)
        if match:
            messages.append({"role": match.group(1), "content": match.group(2)})
        elif messages:
            messages[-1]["content"] += "\n" + line
        elif line.strip():
            raise ValidationError(f"the first line must start with 'role:' (got {line[:40]!r})")
    for message in messages:
        message["content"] = message["content"].rstrip("\n")
    return messages


def _default(name: str):
    return _SELECT[name].default


class PlaygroundForm(forms.Form):
    """A ``POST /v1/context/select`` request as a form; limits are checked by the engine's
    ``SelectRequest`` and its errors are shown next to these fields."""

    books = forms.MultipleChoiceField(choices=[], widget=forms.CheckboxSelectMultiple)
    query = TextField(required=True, widget=forms.Textarea(attrs={"rows": 2}))
    history = TextField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="one message a line as 'role: text' (oldest first)",
    )
    state = JsonTextField(kind=dict, help_text='e.g. {"quest": {"started": true}}')
    template_vars = JsonTextField(kind=dict, help_text='e.g. {"char": "Mira", "user": "Ann"}')
    audience = forms.CharField(initial=_default("audience"))
    strategy = forms.ChoiceField(
        choices=_choices(("rules", "hybrid")), initial=_default("strategy")
    )
    scan_depth = forms.IntegerField(initial=_default("scan_depth"))
    token_budget = forms.IntegerField(initial=_default("token_budget"))
    constant_budget_ratio = forms.FloatField(initial=_default("constant_budget_ratio"))
    max_entries = forms.IntegerField(initial=_default("max_entries"))
    max_recursion_rounds = forms.IntegerField(initial=_default("max_recursion_rounds"))
    seed = TextField(initial=_default("seed"))
    placement_capabilities = forms.MultipleChoiceField(
        choices=_choices(p for p in POSITIONS if p != "outlet"),
        initial=list(DEFAULT_CAPABILITIES),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    outlets = ListField(max_items=50, help_text="outlet names the caller can place")
    use_group_scoring = forms.BooleanField(required=False)
    hybrid_threshold = forms.FloatField(initial=_default("hybrid_threshold"))
    conversation_id = OptionalTextField(
        help_text="with a message index, timed effects use (and update) this conversation"
    )
    message_index = OptionalIntegerField(min_value=0)

    def __init__(self, *args, book_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["books"].choices = list(book_choices)

    MAIN = ("books", "query", "history", "state", "template_vars")

    def main_fields(self):
        return [self[name] for name in self.MAIN]

    def option_fields(self):
        return [self[name] for name in self.fields if name not in self.MAIN]

    def options_have_errors(self) -> bool:
        return self.is_bound and any(name not in self.MAIN for name in self.errors)

    def clean_history(self):
        return parse_history(self.cleaned_data.get("history") or "")

    def select_payload(self) -> dict:
        """The request body for ``SelectRequest`` (call after ``is_valid()``)."""
        data = self.cleaned_data
        capabilities = list(data["placement_capabilities"])
        capabilities += [f"outlet:{name}" for name in data["outlets"]]
        payload = {
            "books": [{"book_id": book_id} for book_id in data["books"]],
            "placement_capabilities": capabilities,
        }
        for name in (
            "query",
            "history",
            "state",
            "template_vars",
            "audience",
            "strategy",
            "scan_depth",
            "token_budget",
            "constant_budget_ratio",
            "max_entries",
            "max_recursion_rounds",
            "seed",
            "use_group_scoring",
            "hybrid_threshold",
            "conversation_id",
            "message_index",
        ):
            if data.get(name) is not None:
                payload[name] = data[name]
        return payload
