"""Console forms of presets: a new preset, an import, and the editor's rows.

The editor is one HTML form in which every prompt is a fieldset whose inputs are named
``p-<key>-<field>``; the order of the prompts is the order their fields arrive in (the order
of the page), so moving a fieldset (drag and drop, or the up/down buttons) is all a reorder
needs. :class:`EditorRows` reads such a post back into prompt JSON for the preset service,
keeps what was typed when the service refuses it, and puts each problem the service reports
(``prompts.<index>.<field>``) next to the prompt it concerns.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from django import forms

from console.scoping import scoped
from roleplay.models import Preset
from roleplay.presets.services import MAX_DESCRIPTION_CHARS
from roleplay.prompting.presets import (
    DEFAULT_ORDER,
    MARKERS,
    MAX_NAME_CHARS,
    NAMED_PROMPTS,
    POSITIONS,
    ROLE_TEMPLATES,
    ROLEPLAY,
    ROLES,
    Problem,
)

DEFAULT_SOURCE = "default"
_FIELD = re.compile(r"^p-([A-Za-z0-9_]{1,24})-identifier$")


class NewPresetForm(forms.Form):
    name = forms.CharField(max_length=MAX_NAME_CHARS)
    description = forms.CharField(
        max_length=MAX_DESCRIPTION_CHARS, required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    start_from = forms.ChoiceField(
        label="Start from",
        help_text="A copy of these prompts; edit them after.",
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(DEFAULT_SOURCE, "The shipped default preset")]
        choices += [
            (str(p.pk), f"A copy of “{p.name}”") for p in scoped(Preset, tenant).order_by("name")
        ]
        self.fields["start_from"].choices = choices


class ImportPresetForm(forms.Form):
    file = forms.FileField(
        help_text="A SillyTavern chat-completion preset (.json) or a preset exported here.",
        widget=forms.ClearableFileInput(attrs={"accept": "application/json,.json"}),
    )
    name = forms.CharField(
        max_length=MAX_NAME_CHARS,
        required=False,
        help_text="Leave empty to name it after the file.",
    )


@dataclass
class Row:
    """One prompt of the editor: its values as typed, and what is wrong with them."""

    key: str
    identifier: str = ""
    name: str = ""
    role: str = "system"
    content: str = ""
    enabled: bool = True
    position: str = "relative"
    depth: str = ""
    order: str = str(DEFAULT_ORDER)
    forbid_overrides: bool = False
    errors: list[str] = field(default_factory=list)
    error_fields: set[str] = field(default_factory=set)

    @property
    def is_marker(self) -> bool:
        return self.identifier in MARKERS

    @property
    def named(self) -> str:
        """``roleplay``, ``template`` or empty: what the prompt is to lookups by name."""
        if self.name == ROLEPLAY:
            return "roleplay"
        return "template" if self.name in ROLE_TEMPLATES else ""

    def prompt(self) -> dict:
        """The prompt JSON the service validates (numbers left as typed when they are not
        numbers, so the service names the field)."""
        injection: dict = {"position": self.position}
        if self.position == "at_depth":
            if self.depth.strip():
                injection["depth"] = _number(self.depth)
            injection["order"] = _number(self.order) if self.order.strip() else DEFAULT_ORDER
        return {
            "identifier": self.identifier,
            "name": self.name,
            "role": self.role,
            "content": self.content,
            "enabled": self.enabled,
            "injection": injection,
            "forbid_overrides": self.forbid_overrides,
        }


def _number(text: str) -> int | str:
    text = text.strip()
    return int(text) if re.fullmatch(r"-?[0-9]{1,9}", text) else text


def _from_prompt(key: str, prompt: dict) -> Row:
    injection = prompt.get("injection") or {}
    return Row(
        key=key,
        identifier=prompt["identifier"],
        name=prompt["name"],
        role=prompt["role"],
        content=prompt["content"],
        enabled=prompt["enabled"],
        position=injection.get("position", "relative"),
        depth=str(injection.get("depth", "")),
        order=str(injection.get("order", DEFAULT_ORDER)),
        forbid_overrides=prompt.get("forbid_overrides", False),
    )


class EditorRows:
    """The prompts of the editor, in order."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.problems: list[str] = []

    @classmethod
    def from_prompts(cls, prompts: Iterable[dict]) -> EditorRows:
        return cls([_from_prompt(f"r{i}", p) for i, p in enumerate(prompts)])

    @classmethod
    def from_post(cls, data) -> EditorRows:
        rows = []
        for name in data:
            match = _FIELD.match(name)
            if not match:
                continue
            key = match.group(1)

            def get(field: str, default: str = "", key=key) -> str:
                return str(data.get(f"p-{key}-{field}", default))

            role, position = get("role", "system"), get("position", "relative")
            rows.append(
                Row(
                    key=key,
                    identifier=get("identifier").strip(),
                    name=get("name").strip(),
                    role=role if role in ROLES else "system",
                    content=get("content").replace("\r\n", "\n"),
                    enabled=f"p-{key}-enabled" in data,
                    position=position if position in POSITIONS else "relative",
                    depth=get("depth"),
                    order=get("order", str(DEFAULT_ORDER)),
                    forbid_overrides=f"p-{key}-forbid_overrides" in data,
                )
            )
        return cls(rows)

    def prompts(self) -> list[dict]:
        return [row.prompt() for row in self.rows]

    def apply(self, action: str) -> None:
        """``add``, ``remove:<key>``, ``up:<key>`` or ``down:<key>`` (the buttons' values)."""
        verb, _, key = action.partition(":")
        if verb == "add":
            suffix = uuid.uuid4().hex[:8]
            self.rows.append(
                Row(key=f"n{suffix}", identifier=f"prompt-{suffix}", name="New prompt")
            )
            return
        index = next((i for i, row in enumerate(self.rows) if row.key == key), None)
        if index is None:
            return
        if verb == "remove":
            del self.rows[index]
        elif verb in ("up", "down"):
            other = index - 1 if verb == "up" else index + 1
            if 0 <= other < len(self.rows):
                self.rows[index], self.rows[other] = self.rows[other], self.rows[index]

    def attach(self, problems: Iterable[Problem]) -> None:
        """Each problem next to its prompt (``prompts.<index>...``), the rest above them."""
        for problem in problems:
            parts = problem.loc.split(".")
            if len(parts) > 1 and parts[1].isdigit() and int(parts[1]) < len(self.rows):
                row = self.rows[int(parts[1])]
                row.errors.append(problem.msg)
                row.error_fields.add(parts[2] if len(parts) > 2 else "")
            else:
                self.problems.append(problem.msg)

    def named_status(self) -> list[tuple[str, str]]:
        """(name, ``ok`` | ``disabled`` | ``missing``) of every named prompt."""
        found = {row.name: row for row in self.rows if row.name in NAMED_PROMPTS}
        return [
            (name, "missing" if name not in found else "ok" if found[name].enabled else "disabled")
            for name in NAMED_PROMPTS
        ]
