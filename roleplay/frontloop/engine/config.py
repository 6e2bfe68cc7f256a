"""The whole ``preActorDirector {modelConfigId, skills, imagePromptProducerPrompt}`` as one
typed, frozen value (seed 002 lines 484–489).

Why a parser of its own rather than the scenario validator's pydantic model: the loop needs
skills as objects with the legacy strings still readable, and every rejection as a stable
code with a field path (``errors.DirectorInvalid``) that the API and the console can show
as-is. ``modelConfigId`` names the controller's model config, never the Actor's; whether it
exists and whether its preset holds the ``front_controller`` role prompt is the service's
check (it needs the database).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import errors
from .errors import DirectorInvalid
from .fields import read_object, read_optional_text, read_text
from .skills import GENERATE_IMAGE, Skill, parse_skills

MAX_CONFIG_ID = 200  # as every config reference of a scenario
MAX_PRODUCER_PROMPT = 20_000  # as the stored configs' limit
_FIELDS = ("modelConfigId", "skills", "imagePromptProducerPrompt")


@dataclass(frozen=True)
class DirectorConfig:
    """A valid ``preActorDirector``."""

    model_config_id: str
    skills: tuple[Skill, ...] = ()
    image_prompt_producer_prompt: str | None = None

    @property
    def image_skills(self) -> tuple[Skill, ...]:
        """The skills that list ``generate_image`` in ``afterActorTools``."""
        return tuple(s for s in self.skills if GENERATE_IMAGE in s.after_actor_tools)

    @property
    def wants_images(self) -> bool:
        """Whether a skill asks for ``generate_image`` (the menu also needs an image config)."""
        return bool(self.image_skills)

    def to_json(self) -> dict[str, Any]:
        """The stored form: skills always as objects."""
        data: dict[str, Any] = {
            "modelConfigId": self.model_config_id,
            "skills": [skill.to_json() for skill in self.skills],
        }
        if self.image_prompt_producer_prompt is not None:
            data["imagePromptProducerPrompt"] = self.image_prompt_producer_prompt
        return data


def parse_director(data: object, where: str = "preActorDirector") -> DirectorConfig:
    """``data`` as a :class:`DirectorConfig`, or :class:`DirectorInvalid` naming the first
    bad field (``preActorDirector.skills.1.afterActorTools.0``)."""
    body = read_object(data, where, _FIELDS)
    if "modelConfigId" not in body:
        raise DirectorInvalid(errors.REQUIRED, f"{where}.modelConfigId", "is required")
    model = read_text(body["modelConfigId"], f"{where}.modelConfigId", MAX_CONFIG_ID, line=True)
    skills = parse_skills(body.get("skills"), f"{where}.skills")
    producer = read_optional_text(
        body.get("imagePromptProducerPrompt"),
        f"{where}.imagePromptProducerPrompt",
        MAX_PRODUCER_PROMPT,
    )
    return DirectorConfig(
        model_config_id=model, skills=skills, image_prompt_producer_prompt=producer
    )
