"""Choice fields for the console's pickers of characters, players and model configs.

A tenant can hold hundreds of each, often with the same name (24 imports of "Lia"): every
option says what tells it apart (a character's creator, creation date and short id, a
player's external id, a config's provider and model), and the ``<select>`` is marked
``data-search`` so ``static/js/console.js`` puts a search box in front of it.
"""

from __future__ import annotations

from django import forms

SEARCHABLE = {"data-search": "1"}


class SearchableChoiceField(forms.ModelChoiceField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", forms.Select(attrs=dict(SEARCHABLE)))
        super().__init__(*args, **kwargs)


class CharacterChoiceField(SearchableChoiceField):
    def label_from_instance(self, obj) -> str:
        return character_label(obj)


class PlayerChoiceField(SearchableChoiceField):
    def label_from_instance(self, obj) -> str:
        return player_label(obj)


class ModelConfigChoiceField(SearchableChoiceField):
    def label_from_instance(self, obj) -> str:
        return model_config_label(obj)


def character_label(character) -> str:
    """``Lia · by Ann · 2025-03-02 · 3f2a9c1b``: name, creator, created, short id."""
    parts = [character.name]
    if character.creator:
        parts.append(f"by {character.creator}")
    if character.created_at:
        parts.append(f"{character.created_at:%Y-%m-%d}")
    parts.append(str(character.pk)[:8])
    return " · ".join(parts)


def player_label(player) -> str:
    """``Ann (p-1)``: the display name and the external id, or the external id alone."""
    if player.display_name and player.display_name != player.external_id:
        return f"{player.display_name} ({player.external_id})"
    return player.external_id


def model_config_label(config) -> str:
    """``Fast · openai_compat gpt-4o-mini (default)``."""
    label = f"{config.name} · {config.provider} {config.model}"
    if config.is_default:
        label += " (default)"
    if config.is_demo:
        label += " (demo)"
    return label
