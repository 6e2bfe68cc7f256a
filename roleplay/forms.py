"""Console forms of the runtime: characters, model configs, new conversations.

Each form takes the tenant, so every choice list (model configs, characters, players) is a
tenant-scoped queryset: a foreign id posted by hand is "not a valid choice", never accepted.
Field validators (ranges, lengths, no keys in ``api_key_env``) come with the ModelForms from
the model fields. The rules across fields and rows (a base URL for OpenAI-compatible
servers, names unique in the tenant) are the services' alone; the views show the services'
errors next to these fields.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from console.forms import StoredJSONField
from console.models import Player
from console.scoping import scoped
from roleplay.characters.avatar_form import AvatarFields
from roleplay.characters.form_lists import TagsField, TextListField, TextListWidget
from roleplay.characters.selectors import greeting_choices
from roleplay.characters.services.characters import CHARACTER_FIELDS
from roleplay.llm.configs.services import MODEL_CONFIG_FIELDS
from roleplay.llm.tokenizers.models import TOKENIZER_JSON_MAX_CHARS, TokenizerKind
from roleplay.models import (
    Character,
    ModelConfig,
    Persona,
    Preset,
    PromptCache,
    RoleOrder,
    Scenario,
)
from roleplay.note_forms import AuthorNoteFields
from roleplay.pickers import CharacterChoiceField, ModelConfigChoiceField, PlayerChoiceField
from roleplay.players.selectors import player_personas


def _tenant_configs(tenant):
    return scoped(ModelConfig, tenant).order_by("name")


NO_OPENING = "none"  # the opening choice of a conversation without one


def _opening_choice(value: str) -> int | None:
    return None if value == NO_OPENING else int(value)


class CharacterForm(AvatarFields, AuthorNoteFields, forms.ModelForm):
    """Every card field; greetings as a list of text areas, tags as one line, and the
    avatar, decoded here (a bad image is a field error before anything is saved)."""

    model_config = ModelConfigChoiceField(
        queryset=ModelConfig.objects.none(),
        required=False,
        empty_label="Tenant default",
        label="Default model config",
        help_text="Used by this character's conversations unless a conversation sets its own.",
    )
    default_scenario = forms.ModelChoiceField(
        queryset=Scenario.objects.none(),
        required=False,
        empty_label="None (plain chat)",
        label="Default run mode",
        help_text="How this character's conversations run (Agent V2, Story, Compact) unless a "
        "conversation chooses its own. Not the Scenario text above: that is part of the card.",
    )
    alternate_greetings = TextListField(
        required=False,
        widget=TextListWidget(add_label="Add a greeting"),
        help_text="Other openings a conversation may start with; empty boxes are left out.",
    )
    tags = TagsField(required=False, help_text="Separated by commas.")
    extensions = StoredJSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="A card's extensions (a JSON object), kept as they are for export.",
    )

    class Meta:
        model = Character
        fields = [name for name in CHARACTER_FIELDS if name != "author_note"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 8}),
            "personality": forms.Textarea(attrs={"rows": 3}),
            "scenario": forms.Textarea(attrs={"rows": 3}),
            "first_message": forms.Textarea(attrs={"rows": 4}),
            "example_dialogues": forms.Textarea(attrs={"rows": 6}),
            "system_prompt": forms.Textarea(attrs={"rows": 3}),
            "post_history_instructions": forms.Textarea(attrs={"rows": 3}),
            "creator_notes": forms.Textarea(attrs={"rows": 3}),
        }
        help_texts = {
            "system_prompt": "Replaces the preset's main prompt for this character.",
            "post_history_instructions": "Sent after the chat history.",
        }

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_config"].queryset = _tenant_configs(tenant)
        self.fields["default_scenario"].queryset = scoped(Scenario, tenant).order_by("name")
        self.offer_avatar_removal()
        for name in ("visibility", "content_rating"):  # a form without them keeps them
            self.fields[name].required = False
        if self.instance.pk:
            self.show_note(self.instance.author_note)

    def clean_extensions(self):
        return self.cleaned_data.get("extensions") or {}

    def clean_visibility(self):
        return self.cleaned_data.get("visibility") or self.instance.visibility

    def clean_content_rating(self):
        return self.cleaned_data.get("content_rating") or self.instance.content_rating

    def character_fields(self) -> dict:
        """The cleaned values the character services take."""
        fields = {name: self.cleaned_data[name] for name in self._meta.fields}
        return {**fields, "author_note": self.author_note()}


class ModelConfigForm(forms.ModelForm):
    base_url = forms.URLField(
        max_length=500,
        required=False,
        label="Base URL",
        assume_scheme="https",
        help_text="Required for OpenAI-compatible servers, e.g. http://127.0.0.1:8080/v1.",
    )
    extra = StoredJSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="A JSON object of provider parameters sent as-is (extra_body for HTTP, "
        "llama.cpp options locally). No credentials.",
    )
    tokenizer_json = forms.CharField(
        required=False,
        strip=False,
        label="tokenizer.json",
        max_length=TOKENIZER_JSON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text="For the Hugging Face tokenizer: paste the model's tokenizer.json. Left "
        "empty, the one stored with the config stays.",
    )
    preset = forms.ModelChoiceField(
        queryset=Preset.objects.none(),
        required=False,
        empty_label="Shipped default preset",
        help_text="The prompts replies with this model are built from, and the role templates "
        "(director, auto_reply...) its capabilities look up.",
    )

    class Meta:
        model = ModelConfig
        fields = list(MODEL_CONFIG_FIELDS)
        labels = {
            "api_key_env": "API key environment variable",
            "top_p": "top_p",
            "timeout_ms": "Timeout (ms)",
            "role_order": "Message order",
            "prompt_cache": "Prompt cache",
            "wire": "Text-completion wire",
            "instruct_template": "Instruct template",
        }
        help_texts = {
            "api_key_env": "The NAME of the environment variable that holds the key "
            "(e.g. OPENAI_API_KEY), never the key itself. Leave empty for local servers.",
            "role_order": "Many open models' chat templates (Mistral, Gemma...) take one system "
            "message and then user and assistant in turn. Auto sends the prompt as built and "
            "reshapes it the first time the server refuses its order.",
            "prompt_cache": "Servers skip the part of a prompt identical to an earlier one from "
            "the start. Auto sends nothing extra (vLLM and hosted APIs cache by themselves); On "
            "sends cache_prompt: true for llama.cpp's server. The bundled model's cache size is "
            "extra's prompt_cache_mb. Hosted hints such as prompt_cache_key go in extra.",
            "wire": "Text-completion servers only: the API the server speaks.",
            "tokenizer": "What budgets (window, worldbook, Compact) count with. GGUF: the local "
            "model's file (extra's model_path, else the bundled model).",
            "instruct_template": "Text-completion servers only: a built-in (chatml, alpaca, "
            "llama3, mistral_v7, gemma2), gguf (the bundled model's own chat template) or the "
            "name of a template imported under Model configs → Instruct templates (a "
            "SillyTavern file or a tokenizer_config.json). Empty: ChatML.",
        }

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["preset"].queryset = scoped(Preset, tenant).order_by("name")
        self.fields["role_order"].required = False  # left out: the model's default
        self.fields["prompt_cache"].required = False
        self.fields["tokenizer"].required = False

    def clean_role_order(self) -> str:
        return self.cleaned_data.get("role_order") or RoleOrder.AUTO

    def clean_prompt_cache(self) -> str:
        return self.cleaned_data.get("prompt_cache") or PromptCache.AUTO

    def clean_tokenizer(self) -> str:
        return self.cleaned_data.get("tokenizer") or TokenizerKind.CL100K


# A choice that changes what else the form offers asks the page again (htmx) and swaps the
# dependent fields in place; without JavaScript the server checks the choice on submit.
OPTIONS_REFRESH = {
    "hx-get": "/console/conversations/new/",
    "hx-trigger": "change",
    "hx-include": "closest form",
    "hx-select": "#conversation-fields",
    "hx-target": "#conversation-fields",
    "hx-swap": "outerHTML",
}


class NewConversationForm(forms.Form):
    character = CharacterChoiceField(queryset=Character.objects.none())
    player = PlayerChoiceField(
        queryset=Player.objects.none(),
        required=False,
        help_text="Leave on “Me” to chat as yourself.",
    )
    model_config = ModelConfigChoiceField(
        queryset=ModelConfig.objects.none(),
        required=False,
        empty_label="Character's default",
        label="Model config",
    )
    scenario = forms.ModelChoiceField(
        queryset=Scenario.objects.none(),
        required=False,
        empty_label="Character's default",
        label="Run mode",
        help_text="How the conversation runs (Agent V2, Story…); overrides the character's.",
    )
    persona = forms.ModelChoiceField(
        queryset=Persona.objects.none(),
        required=False,
        empty_label="The player's default",
        help_text="Who the player is in this conversation ({{user}}, {{persona}}).",
    )
    greeting_index = forms.TypedChoiceField(
        coerce=_opening_choice,
        empty_value=0,
        required=False,
        label="Opening",
        choices=[(0, "First message"), (NO_OPENING, "No opening")],
        help_text="The character's first message, one of its alternate greetings, or none "
        "(the conversation starts with the player's message).",
    )
    title = forms.CharField(max_length=200, required=False)

    def __init__(self, *args, tenant, me_label: str = "Me", me: Player | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        characters = scoped(Character, tenant).defer("avatar").order_by("name", "created_at")
        self.fields["character"].queryset = characters
        self.fields["player"].queryset = scoped(Player, tenant).order_by("external_id")
        self.fields["player"].empty_label = me_label
        self.fields["model_config"].queryset = _tenant_configs(tenant)
        self.fields["scenario"].queryset = scoped(Scenario, tenant).order_by("name")
        character = self._chosen(Character, "character", tenant)
        if character is not None:
            self.fields["greeting_index"].choices = greeting_options(character)
        player = self._chosen(Player, "player", tenant) or me
        if player is not None:
            self.fields["persona"].queryset = player_personas(tenant, player)
        self.fields["character"].widget.attrs.update(OPTIONS_REFRESH)
        self.fields["player"].widget.attrs.update(OPTIONS_REFRESH)

    def _chosen(self, model, name: str, tenant):
        """The object the form names in ``name`` (posted, else initial), if it is the
        tenant's: the openings (and personas) offered depend on it."""
        value = self.data.get(name) if self.is_bound else self.initial.get(name)
        if not value:
            return None
        rows = scoped(model, tenant)
        if any(field.name == "avatar" for field in model._meta.concrete_fields):
            rows = rows.defer("avatar")
        try:
            return rows.filter(pk=value).first()
        except (ValueError, TypeError, ValidationError):
            return None


NEW_CONVERSATION_FIELDS = tuple(NewConversationForm.base_fields)


def greeting_options(character: Character) -> list[tuple[int | str, str]]:
    """The opening choices of a conversation with ``character``, each shortened to a line,
    then "No opening"."""
    options: list[tuple[int | str, str]] = []
    for index, text in greeting_choices(character):
        label = "First message" if index == 0 else f"Alternate greeting {index}"
        line = " ".join(text.split())
        options.append((index, f"{label}: {line[:90]}{'…' if len(line) > 90 else ''}"))
    return [*options, (NO_OPENING, "No opening")]
