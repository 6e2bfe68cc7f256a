"""The author's note on console forms: five fields that make the ``author_note`` object the
character and conversation services store (``roleplay.prompting.notes``).

The character form mixes :class:`AuthorNoteFields` in; a conversation's page posts
:class:`AuthorNoteForm` on its own. Ranges are the form's (the same as the stored shape's);
the services check the object again, whichever door it comes from.
"""

from __future__ import annotations

from django import forms

from roleplay.prompting.notes import MAX_NOTE_CHARS, AuthorNoteSpec

POSITIONS = [
    ("in_chat", "In the chat, at a depth"),
    ("before_prompt", "Before the main prompt"),
    ("after_prompt", "After the main prompt"),
]
ROLES = [("system", "system"), ("user", "user"), ("assistant", "assistant")]
DEFAULTS = AuthorNoteSpec()


class AuthorNoteFields(forms.Form):
    note_content = forms.CharField(
        required=False,
        max_length=MAX_NOTE_CHARS,
        strip=False,
        label="Author's note",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Kept in front of the model as the chat goes on (macros work here). Empty: none.",
    )
    note_position = forms.ChoiceField(
        choices=POSITIONS, initial=DEFAULTS.position, required=False, label="Note position"
    )
    note_depth = forms.IntegerField(
        min_value=0,
        max_value=1000,
        initial=DEFAULTS.depth,
        required=False,
        label="Note depth",
        help_text="In the chat: this many messages from its end (0: after the last one).",
    )
    note_frequency = forms.IntegerField(
        min_value=0,
        max_value=1000,
        initial=DEFAULTS.frequency,
        required=False,
        label="Note frequency",
        help_text="On every n-th player message (1: always, 0: never).",
    )
    note_role = forms.ChoiceField(
        choices=ROLES, initial=DEFAULTS.role, required=False, label="Note role"
    )

    def show_note(self, note: dict | None) -> None:
        """Start the fields from a stored note."""
        for name, value in (note or {}).items():
            if f"note_{name}" in self.fields:
                self.initial[f"note_{name}"] = value

    def author_note(self) -> dict:
        """The note object of the cleaned fields ({} when it has no content)."""
        data = self.cleaned_data
        if not (data.get("note_content") or "").strip():
            return {}
        note = {"content": data["note_content"].replace("\r\n", "\n")}
        for name in ("position", "depth", "frequency", "role"):
            value = data.get(f"note_{name}")
            note[name] = getattr(DEFAULTS, name) if value in (None, "") else value
        return note


class AuthorNoteForm(AuthorNoteFields):
    """A conversation's own note, which replaces its character's."""
