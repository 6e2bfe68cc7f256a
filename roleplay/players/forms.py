"""Console forms of players' personas: who a player is in a conversation."""

from __future__ import annotations

from django import forms

from roleplay.characters.avatar_form import AvatarFields
from roleplay.models import Persona


class PersonaForm(AvatarFields, forms.ModelForm):
    """A persona's name, description, avatar, and whether it is its player's default."""

    is_default = forms.BooleanField(
        required=False,
        label="The player's default persona",
        help_text="Used by the player's conversations that do not choose one.",
    )

    class Meta:
        model = Persona
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 5})}
        help_texts = {
            "name": "{{user}} in prompts.",
            "description": "{{persona}} in prompts: who the player is in the story.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["is_default"].initial = self.instance.is_default
        self.offer_avatar_removal()
