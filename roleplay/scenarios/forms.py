"""The run-mode (scenario) form: a guided section per capability (Agent V2, Story, Compact)
built from ``roleplay.scenarios.guide``, each with "Edit as JSON" for experts, and the other
config objects as JSON.

Which of a section's two editors is saved: its JSON box when its text was changed from what
the page showed (the page carries a digest of that text), else the guided fields. The
guided fields are written over the stored object, so what the form does not show
(JSON-only fields, unknown future ones) is kept. Nothing here validates a config: the
service does, and its errors are put next to the field they name.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from django import forms

from console.scoping import scoped
from console.storable import loads as loads_json
from images.models import ImageConfig
from roleplay.models import ModelConfig, Preset
from roleplay.scenarios import guide
from roleplay.scenarios import services as scenarios
from roleplay.scenarios.guide import CAPABILITIES, Setting
from roleplay.scenarios.services import CONFIG_FIELDS

# agenticV2, storyV1, compact, preActorDirector, externalMemory, worldbook, dio: JSON objects
CONFIG_BOXES = tuple(name for name in CONFIG_FIELDS if name != "memoryRuntime")
MAX_JSON_CHARS = 100_000
# The template whose object a capability starts from when it is switched on.
FRESH = {"agenticV2": "continuity", "storyV1": "story", "compact": "long_chats"}
JSON_HELP = {
    "preActorDirector": "Runs a director before each reply, e.g. "
    '{"modelConfigId": "<id or name>", "skills": []}; not together with Story.',
    "workflow": "Steps run before each reply: "
    '{"visibleCapabilities": ["worldbook_search"], "executionGraph": {"nodes": '
    '[{"id": "rules", "capability": "worldbook_search", "input": {"limit": 3}}]}}; '
    "empty: none.",
    "externalMemory": 'The memory service when Memory is "external", e.g. '
    '{"url": "https://…", "apiKeyEnv": "MEMORY_KEY", "timeoutMs": 10000, "failClosed": true}.',
    "dio": "Long-term instructions that rewrite the character prompt (needs the pre-reply "
    'director), e.g. {"mode": "internal", "modelConfigId": "<id or name>"} or '
    '{"mode": "external", "serviceUrl": "https://…", "apiKeyEnv": "DIO_KEY", '
    '"timeoutMs": 3000}; empty or "off": off.',
}


def field_name(path: str) -> str:
    """A setting's form field name: the dotted path with ``__`` (ids stay CSS-friendly)."""
    return path.replace(".", "__")


def json_text(value: dict | None) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)


def digest(text: str) -> str:
    """The fingerprint of a JSON box's text, line ends and outer spaces aside (browsers send
    CRLF)."""
    return hashlib.sha256(text.replace("\r\n", "\n").strip().encode()).hexdigest()


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(max_length=20_000, required=False, widget=forms.Textarea(
        attrs={"rows": 2}
    ))  # fmt: skip
    model_config = forms.ModelChoiceField(
        queryset=ModelConfig.objects.none(),
        required=False,
        empty_label="None",
        label="Reply model",
        help_text="The model config that writes the character's replies (the Actor).",
    )
    preset = forms.ModelChoiceField(
        queryset=Preset.objects.none(),
        required=False,
        empty_label="The model config's",
        help_text="The prompt preset for the replies; by default the model config's own.",
    )
    image_config = forms.ModelChoiceField(
        queryset=ImageConfig.objects.none(),
        required=False,
        empty_label="None",
        label="Pictures",
        help_text="The image config that draws chat pictures (with a pre-reply director whose "
        "skill lists generate_image).",
    )
    memoryRuntime = forms.ChoiceField(  # noqa: N815
        choices=[
            ("internal", "This platform's memory"),
            ("external", "An external memory service (set it below)"),
            ("off", "No memory"),
        ],
        initial="internal",
        required=False,
        label="Memory",
        help_text="Whose memory the replies read.",
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, tenant, stored: dict[str, Any] | None = None, **kwargs):
        """``stored``: the scenario's config objects as saved (or a template's), by the
        seed's names; the guided fields start from them and are written over them."""
        super().__init__(*args, **kwargs)
        self.stored = stored or {}
        configs = list(scoped(ModelConfig, tenant).order_by("name"))
        self.config_names = {str(c.pk): c.name for c in configs} | {c.name: c.name for c in configs}
        self.fields["model_config"].queryset = scoped(ModelConfig, tenant).order_by("name")
        self.fields["preset"].queryset = scoped(Preset, tenant).order_by("name")
        self.fields["image_config"].queryset = scoped(ImageConfig, tenant).order_by("name")
        self.guided: set[str] = set()
        for box in CONFIG_BOXES:
            self.fields[box] = forms.CharField(
                required=False,
                max_length=MAX_JSON_CHARS,
                strip=True,
                label=f"{guide.TITLES.get(box, box)} as JSON",
                widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
                help_text=JSON_HELP.get(box, "The seed's field names; empty: off."),
            )
        missing = self._stored_refs()
        for capability in CAPABILITIES:
            self._add_guided(capability, [c.name for c in configs], missing)

    # --- building ----------------------------------------------------------------------

    def _add_guided(self, capability: str, names: list[str], missing: list[str]) -> None:
        self.fields[f"{capability}__on"] = forms.BooleanField(
            required=False, label=f"Use {guide.TITLES[capability].split(':')[0]}"
        )
        self.fields[f"{capability}__json_digest"] = forms.CharField(
            required=False, widget=forms.HiddenInput
        )
        for setting in guide.settings_of(capability):
            self.fields[field_name(setting.path)] = _field(setting, names, missing)

    def _stored_refs(self) -> list[str]:
        """References in the stored objects that name no model config of the tenant: offered
        as they are, so opening and saving the form loses none."""
        refs = []
        for capability in CAPABILITIES:
            for setting in guide.settings_of(capability):
                value = guide.get(self.stored.get(capability), _relative(setting))
                if setting.kind == "model_config" and value and value not in self.config_names:
                    refs.append(value)
        return refs

    def initial_values(self, actor: str) -> dict[str, Any]:
        """Initial guided values, JSON texts and digests from ``stored`` (a capability that
        is off starts from its template's object, with ``actor`` for every model)."""
        initial: dict[str, Any] = {}
        for capability in CAPABILITIES:
            stored = self.stored.get(capability)
            initial[f"{capability}__on"] = bool(stored) and stored.get("enabled", True)
            source = stored or guide.template_configs(FRESH[capability], actor)[capability]
            for setting in guide.settings_of(capability):
                value = guide.get(source, _relative(setting), setting.default)
                if setting.kind == "group":
                    value = value is not None
                elif setting.kind == "model_config" and value:
                    value = self.config_names.get(value, value)
                initial[field_name(setting.path)] = value
        for box in CONFIG_BOXES:
            initial[box] = json_text(self.stored.get(box))
            if box in CAPABILITIES:
                initial[f"{box}__json_digest"] = digest(initial[box])
        return initial

    # --- cleaning ----------------------------------------------------------------------

    def clean(self):
        data = super().clean()
        data["memoryRuntime"] = data.get("memoryRuntime") or "internal"
        for box in CONFIG_BOXES:
            text = data.get(box) or ""
            edited = box not in CAPABILITIES or digest(text) != data.get(f"{box}__json_digest")
            if box in CAPABILITIES and not edited:
                self.guided.add(box)
                continue
            data[box] = self._parsed(box, text)
        actor = data.get("model_config")
        for capability in self.guided:
            data[capability] = self._guided_config(capability, data, actor)
        return data

    def _parsed(self, box: str, text: str) -> dict | None:
        if not text:
            return None
        try:
            value = loads_json(text, box)
        except ValueError as exc:
            self.add_error(box, f"not valid JSON ({exc})")
            return None
        if not isinstance(value, dict):
            self.add_error(box, "must be a JSON object")
            return None
        return value

    def _guided_config(self, capability: str, data: dict, actor) -> dict | None:
        base = self.stored.get(capability)
        config = copy.deepcopy(base) if isinstance(base, dict) else {}
        if not data.get(f"{capability}__on"):
            if not config:
                return None
            config["enabled"] = False  # switched off; its settings are kept for later
            return config
        config["enabled"] = True
        if capability == "agenticV2":
            guide.put(config, "modelConfigs.actor", actor.name if actor else "")
        off_groups: set[str] = set()
        for setting in guide.settings_of(capability):
            if setting.group in off_groups:
                continue
            where = _relative(setting)
            value = data.get(field_name(setting.path))
            if setting.kind == "group":
                if value:
                    guide.put(config, where, guide.get(config, where) or {})
                else:
                    guide.put(config, where, None)
                    off_groups.add(setting.path)
                continue
            if value in (None, "") and setting.kind not in ("bool", "choices"):
                if setting.required:
                    _drop(config, where)  # the validator names it
                    continue
                value = None if setting.optional else setting.default
            elif setting.kind == "model_config":
                value = self._same_ref(guide.get(base, where), value)
            guide.put(config, where, value)
        return config

    def _same_ref(self, before: str | None, chosen: str) -> str:
        """The stored reference when it names the chosen config already (by id or name)."""
        if before and self.config_names.get(before) == chosen:
            return before
        return chosen

    def place_error(self, path: str, message: str) -> None:
        """A service error next to the field its dotted ``path`` names."""
        capability = path.split(".")[0]
        if capability in self.guided:
            name = field_name(path)
            if path == guide.ACTOR:
                name = "model_config"
            while name not in self.fields and "__" in name:
                name = name.rsplit("__", 1)[0]  # the nearest field that holds it
            if name == capability:
                name = f"{capability}__on"
            self.add_error(name, f"{path}: {message}")
            return
        self.add_error(capability if capability in self.fields else None, f"{path}: {message}")

    # --- rendering ---------------------------------------------------------------------

    def sections(self) -> list[dict[str, Any]]:
        """What the template shows for each capability: title, intro, switch, common and
        further settings, and the JSON box (open when it holds an error)."""
        out = []
        for capability in CAPABILITIES:
            settings = guide.settings_of(capability)
            common = [self[field_name(s.path)] for s in settings if s.common]
            more = [self[field_name(s.path)] for s in settings if not s.common]
            out.append(
                {
                    "key": capability,
                    "title": guide.TITLES[capability],
                    "intro": guide.INTROS[capability],
                    "on": self[f"{capability}__on"],
                    "common": common,
                    "more": more,
                    "more_open": any(field.errors for field in more),
                    "json": self[capability],
                    "digest": self[f"{capability}__json_digest"],
                }
            )
        return out

    def other_boxes(self):
        """The JSON boxes without a section of their own (the workflow has its editor)."""
        return [self[box] for box in CONFIG_BOXES if box not in CAPABILITIES and box != "workflow"]

    def top_fields(self):
        return [self[name] for name in ("name", "description", "model_config", "preset",
                                        "image_config", "memoryRuntime")]  # fmt: skip


def _relative(setting: Setting) -> str:
    return setting.path.split(".", 1)[1]


def _drop(config: dict, where: str) -> None:
    *parents, last = where.split(".")
    parent = guide.get(config, ".".join(parents)) if parents else config
    if isinstance(parent, dict):
        parent.pop(last, None)


def _help(setting: Setting) -> str:
    parts = [setting.help]
    if setting.limits:
        parts.append(setting.limits)
    if setting.default not in (None, [], ()) and setting.kind not in ("choices",):
        default = setting.default
        if isinstance(default, bool):
            default = "on" if default else "off"
        elif isinstance(default, int | float):
            default = f"{default:,}" if isinstance(default, int) else f"{default:g}"
        parts.append(f"default {default}")
    return " · ".join(parts)


def _field(setting: Setting, names: list[str], extra_refs: list[str]) -> forms.Field:
    common = {"required": False, "label": setting.label, "help_text": _help(setting)}
    if setting.kind in ("bool", "group"):
        return forms.BooleanField(**common)
    if setting.kind in ("int", "float"):
        attrs: dict[str, Any] = {}
        if setting.low is not None:
            attrs["min"] = setting.low
        if setting.high is not None:
            attrs["max"] = setting.high
        if setting.kind == "float":
            attrs["step"] = "any"
            return forms.FloatField(widget=forms.NumberInput(attrs=attrs), **common)
        return forms.IntegerField(widget=forms.NumberInput(attrs=attrs), **common)
    if setting.kind == "choices":
        choices = [(c, guide.choice_label(c)) for c in setting.choices]
        return forms.MultipleChoiceField(
            choices=choices, widget=forms.CheckboxSelectMultiple, **common
        )
    if setting.kind == "choice":
        choices = [(c, c) for c in setting.choices]
        if setting.optional:
            choices.insert(0, ("", "— off —"))
        return forms.ChoiceField(choices=choices, **common)
    blank = "— choose a model config —" if setting.required else "— none —"
    options = [("", blank), *((n, n) for n in names)]
    options += [(ref, f"{ref} (no such model config)") for ref in extra_refs]
    return forms.ChoiceField(choices=options, **common)


def stored_configs(scenario) -> dict[str, Any]:
    """A scenario's config objects by the seed's names."""
    return {seed: getattr(scenario, field) for seed, field in scenarios.CONFIG_FIELDS.items()}
