"""The run-mode form's guide: every setting of the Agent V2, Story and Compact config objects
as a form shows it, and the templates an operator starts from. Pure: no Django.

What a setting *is* (its type, default, limits and choices) is read from the pydantic models
of ``roleplay.scenarios.config``, the validator itself, so the form cannot offer a default or a
range the validator would refuse. What a setting *means* (a label and one sentence) is in
``roleplay.scenarios.help.HELP``, keyed by the seed's dotted path; a test checks that every
field of those models has its sentence and that no sentence names a field that is gone.

A few fields stay JSON-only (:data:`JSON_ONLY`): free-form objects (``storyV1.policy``) and
seed fields that change nothing here (``agenticV2.jevOrchestration``). The form keeps them
as they are, since it writes its fields over the stored object rather than replacing it.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel

from roleplay.scenarios.config import AgenticV2, Compact, ConfigId, StoryV1
from roleplay.scenarios.help import HELP

CAPABILITIES: dict[str, type[BaseModel]] = {
    "agenticV2": AgenticV2,
    "storyV1": StoryV1,
    "compact": Compact,
}
TITLES = {
    "agenticV2": "Agent V2: continuity",
    "storyV1": "Story",
    "compact": "Compact: summaries of long chats",
}
INTROS = {
    "agenticV2": "After each reply, specialists look at the story in the background and a "
    "Director writes short notes the character reads next turn, so it remembers who knows "
    "what, what was promised and where the scene is going.",
    "storyV1": "A story engine plans events and world changes around the chat and settles "
    "them after each reply; it runs instead of Agent V2 when both are on.",
    "compact": "When a chat outgrows the model's window, older messages are folded into a "
    "summary and the recent ones stay word for word.",
}
JSON_ONLY = frozenset({"agenticV2.jevOrchestration", "storyV1.policy"})
# The Actor is the run mode's own model config, chosen at the top of the form.
ACTOR = "agenticV2.modelConfigs.actor"
# Shown first; the rest sit under "More settings".
COMMON = frozenset(
    {
        "agenticV2.modelConfigs.orchestrator",
        "agenticV2.modelConfigs.director",
        "agenticV2.enabledTools",
        "agenticV2.maxToolCalls",
        "agenticV2.commitPolicy",
        "storyV1.modelConfigId",
        "storyV1.seed",
        "compact.compactorModelConfigId",
        "compact.triggerRatio",
        "compact.keepLastCanonicalGroups",
        "compact.maxSummaryTokens",
    }
)

Kind = Literal["bool", "int", "float", "choice", "choices", "model_config", "group"]


@dataclass(frozen=True)
class Setting:
    path: str  # the seed's dotted path: "agenticV2.maxToolCalls"
    kind: Kind
    label: str
    help: str
    default: Any = None
    required: bool = False  # the validator needs a value (when its part is on)
    optional: bool = False  # None (blank) is a value
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    open_low: bool = False  # the limit itself is refused (gt rather than ge)
    open_high: bool = False
    group: str = ""  # the optional object this setting belongs to ("" for none)

    @property
    def common(self) -> bool:
        return self.path in COMMON or self.group in COMMON

    @property
    def limits(self) -> str:
        """The range as the help line says it, e.g. "1–20" or "more than 0, less than 1"."""
        if self.low is None or self.high is None:
            return ""
        if self.open_low or self.open_high:
            return f"more than {self.low:g}, less than {self.high:g}"
        return f"{self.low:,.0f}–{self.high:,.0f}"


def settings_of(capability: str) -> list[Setting]:
    """The guided settings of one capability, in the model's field order (``enabled`` is
    the capability's own on/off switch, not a setting)."""
    return [s for s in _walk(CAPABILITIES[capability], capability, "") if s.path != ACTOR]


def all_paths(model: type[BaseModel], prefix: str) -> list[str]:
    """Every field's dotted path, nested objects and JSON-only ones included."""
    paths = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}"
        paths.append(path)
        nested = _model_of(field.annotation)
        if nested is not None and path not in JSON_ONLY:
            paths.extend(all_paths(nested, path))
    return paths


def _walk(model: type[BaseModel], prefix: str, group: str) -> list[Setting]:
    found: list[Setting] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}"
        if path in JSON_ONLY or (name == "enabled" and prefix in CAPABILITIES):
            continue
        annotation, optional = _unwrap_optional(field.annotation)
        nested = _model_of(annotation)
        if nested is not None:
            if optional:  # an object that may be absent: a switch, then its fields
                found.append(_setting(path, "group", group=group))
                found.extend(_walk(nested, path, path))
            else:
                found.extend(_walk(nested, path, group))
            continue
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        found.append(
            _setting(
                path,
                _kind(annotation, field.metadata),
                default=default,
                required=field.is_required(),
                optional=optional,
                choices=_choices(annotation),
                group=group,
                **_bounds(field.metadata),
            )
        )
    return found


def _setting(path: str, kind: Kind, **fields: Any) -> Setting:
    label, help_text = HELP[path]
    return Setting(path=path, kind=kind, label=label, help=help_text, **fields)


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _model_of(annotation: Any) -> type[BaseModel] | None:
    annotation, _ = _unwrap_optional(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


_CONFIG_ID_RULES = typing.get_args(ConfigId)[1:]


def _kind(annotation: Any, metadata: list) -> Kind:
    if typing.get_origin(annotation) is typing.Annotated:
        metadata = [*metadata, *typing.get_args(annotation)[1:]]
        annotation = typing.get_args(annotation)[0]
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is float:
        return "float"
    if typing.get_origin(annotation) is Literal:
        return "choice"
    if typing.get_origin(annotation) is list:
        return "choices"
    if annotation is str and any(rule in metadata for rule in _CONFIG_ID_RULES):
        return "model_config"
    raise TypeError(f"no form field for {annotation!r}: add it to JSON_ONLY or here")


def _choices(annotation: Any) -> tuple[str, ...]:
    if typing.get_origin(annotation) is list:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is Literal:
        return tuple(typing.get_args(annotation))
    return ()


def _bounds(metadata: list) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for rule in metadata:
        if isinstance(rule, Ge):
            bounds["low"] = rule.ge
        elif isinstance(rule, Gt):
            bounds.update(low=rule.gt, open_low=True)
        elif isinstance(rule, Le):
            bounds["high"] = rule.le
        elif isinstance(rule, Lt):
            bounds.update(high=rule.lt, open_high=True)
    return bounds


# How a choice reads in the form (its seed name follows in brackets); a choice not listed
# reads as its seed name.
CHOICE_LABELS = {
    "analyze_plot": "Plot analyst",
    "judge_npc": "Other characters",
    "audit_knowledge": "Knowledge auditor",
    "simulate_world": "World off-screen",
    "manage_callbacks": "Callbacks",
    "direct_scene": "Scene director",
    "update_director_state": "Director's notes",
}


def choice_label(value: str) -> str:
    label = CHOICE_LABELS.get(value)
    return f"{label} ({value})" if label else value


# --- templates -------------------------------------------------------------------------------

TEMPLATES = {
    "plain": ("Plain chat", "Only the character's replies: no background work."),
    "continuity": (
        "Continuity on",
        "Agent V2 with every specialist and the Director on the reply model: the character "
        "keeps track of the story between turns.",
    ),
    "story": (
        "Story mode",
        "The story engine plans and settles events around the chat, on the reply model.",
    ),
    "long_chats": (
        "Long chats",
        "Compact summarises older messages when the chat outgrows the model's window.",
    ),
}


def template_configs(name: str, actor: str) -> dict[str, dict[str, Any] | None]:
    """The config objects a template starts from, every model config it names being
    ``actor`` (the reply model's reference); an unknown name is the plain template."""
    configs: dict[str, dict[str, Any] | None] = {key: None for key in CAPABILITIES}
    if name == "continuity":
        agentic: dict[str, Any] = {"enabled": True}
        put(agentic, "modelConfigs.actor", actor)
        for setting in settings_of("agenticV2"):
            role = setting.path.removeprefix("agenticV2.")
            if role.startswith("modelConfigs.") and role != "modelConfigs.autoReply":
                put(agentic, role, actor)
        configs["agenticV2"] = agentic
    elif name == "story":
        configs["storyV1"] = {"enabled": True, "modelConfigId": actor}
    elif name == "long_chats":
        configs["compact"] = {"enabled": True, "compactorModelConfigId": actor}
    return configs


def put(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set ``obj``'s value at a dotted ``path``, making the objects on the way."""
    *parents, last = path.split(".")
    for name in parents:
        child = obj.get(name)
        if not isinstance(child, dict):
            child = obj[name] = {}
        obj = child
    obj[last] = value


def get(obj: dict[str, Any] | None, path: str, default: Any = None) -> Any:
    """``obj``'s value at a dotted ``path``, or ``default`` when a part is missing."""
    for name in path.split("."):
        if not isinstance(obj, dict) or name not in obj:
            return default
        obj = obj[name]
    return obj
