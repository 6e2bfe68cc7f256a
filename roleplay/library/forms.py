"""Forms of the player app: starting a chat, a player's own character, renaming a chat."""

from __future__ import annotations

from django import forms

from roleplay.characters.cards.limits import tags_problems
from roleplay.models import Character, ContentRating


class StartChatForm(forms.Form):
    """Who the player is in the chat (one of their personas, or their default) and which of
    the character's openings starts it."""

    persona = forms.ChoiceField(required=False, label="You play as")
    opening = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)

    def __init__(self, *args, personas, openings, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["persona"].choices = [("", "My default persona")] + [
            (str(p.pk), p.name) for p in personas
        ]
        self.fields["opening"].choices = [("", "The first one")] + [
            (index, text[:120]) for index, text in openings
        ]
        self.personas = {str(p.pk): p for p in personas}

    def clean_persona(self):
        return self.personas.get(self.cleaned_data.get("persona") or "")


class OwnCharacterForm(forms.ModelForm):
    """A character of the player's own: the card's fields a player writes."""

    tags_text = forms.CharField(
        required=False, label="Tags", help_text="Separated by commas.", max_length=2000
    )

    class Meta:
        model = Character
        fields = [
            "name",
            "description",
            "personality",
            "scenario",
            "first_message",
            "creator_notes",
            "content_rating",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 6}),
            "personality": forms.Textarea(attrs={"rows": 3}),
            "scenario": forms.Textarea(attrs={"rows": 3}),
            "first_message": forms.Textarea(attrs={"rows": 4}),
            "creator_notes": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["content_rating"].initial = ContentRating.SFW
        if self.instance.pk:
            self.fields["tags_text"].initial = ", ".join(self.instance.tags or [])

    def clean_tags_text(self):
        tags = [t.strip() for t in self.cleaned_data.get("tags_text", "").split(",")]
        tags = list(dict.fromkeys(t for t in tags if t))
        problems = tags_problems(tags)
        if problems:
            raise forms.ValidationError(problems)
        return tags

    def character_fields(self) -> dict:
        fields = {name: self.cleaned_data[name] for name in self._meta.fields}
        return {**fields, "tags": self.cleaned_data["tags_text"]}


class CardUploadForm(forms.Form):
    file = forms.FileField(
        label="Character card",
        widget=forms.ClearableFileInput(attrs={"accept": ".png,.json,.charx,.yaml,.yml"}),
        help_text="A CCv2 or CCv3 card (PNG, JSON or .charx), at most 16 MiB.",
    )


class RenameForm(forms.Form):
    title = forms.CharField(max_length=200, required=False)
