"""A preset's prompts as data: the limits, the markers and named prompts, the pydantic model
of one prompt, and the problems a check finds (``PresetInvalid``). The rules between prompts
and a loaded preset's lookups are :mod:`roleplay.prompting.presets`, which names all of this
too. Pure: no Django."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter

from console import failures
from roleplay.errors import RoleplayError

MAX_PROMPTS = 200
MAX_CONTENT_CHARS = 100_000
MAX_TOTAL_CHARS = 1_000_000
MAX_NAME_CHARS = 100
MAX_IDENTIFIER_CHARS = 100
MAX_DEPTH = 10_000
ORDER_LIMIT = 1_000_000
DEFAULT_ORDER = 100
IDENTIFIER_PATTERN = r"^[A-Za-z0-9_.:-]+$"

ROLES = ("system", "user", "assistant")
POSITIONS = ("relative", "at_depth", "none")

# --- markers and well-known prompts -------------------------------------------------------

CHAT_HISTORY = "chatHistory"
USER_INPUT = "userInput"
REQUIRED_MARKERS = (CHAT_HISTORY, USER_INPUT)
# Content markers that may carry a wrapper: marker -> the macro that names its field.
MARKER_FIELDS = {
    "charDescription": "description",
    "charPersonality": "personality",
    "scenario": "scenario",
    "personaDescription": "persona",
    "dialogueExamples": "mesExamples",
}
WORLD_INFO_MARKERS = ("worldInfoBefore", "worldInfoAfter")
# Where the blocks that change from turn to turn go (the cache-aware layout, docs/prompt.md).
TURN_CONTEXT = "turnContext"
MARKERS = (*REQUIRED_MARKERS, *MARKER_FIELDS, *WORLD_INFO_MARKERS, TURN_CONTEXT)

MAIN = "main"
POST_HISTORY = "postHistoryInstructions"
AUXILIARY = "auxiliary"
ENHANCE_DEFINITIONS = "enhanceDefinitions"

# --- named prompts ------------------------------------------------------------------------

ROLEPLAY = "roleplay"
AUTO_REPLY = "auto_reply"
ORCHESTRATOR = "orchestrator"
SPECIALIST_TOOLS = (
    "analyze_plot",
    "judge_npc",
    "audit_knowledge",
    "simulate_world",
    "manage_callbacks",
    "direct_scene",
)
SPECIALISTS = tuple(f"specialist_{tool}" for tool in SPECIALIST_TOOLS)
DIRECTOR = "director"
COMPACTOR = "compactor"
STORY_WRITER = "story_writer"
FRONT_CONTROLLER = "front_controller"
DIO_COMPILER = "dio_compiler"
ROLE_TEMPLATES = (
    AUTO_REPLY, ORCHESTRATOR, *SPECIALISTS, DIRECTOR, COMPACTOR, STORY_WRITER, FRONT_CONTROLLER,
    DIO_COMPILER,
)  # fmt: skip
NAMED_PROMPTS = (ROLEPLAY, *ROLE_TEMPLATES)

LANGUAGE_VARIABLE = "language"
SYSTEM_PROMPT_VARIABLE = "systemPrompt"

# --- the spec -----------------------------------------------------------------------------


def _storable(text: str) -> str:
    # PostgreSQL's jsonb holds neither U+0000 nor lone surrogates.
    if "\x00" in text:
        raise ValueError("text may not contain the NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text is not valid Unicode (a lone surrogate)") from exc
    return text


Name = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_storable)
]
Content = Annotated[str, StringConstraints(max_length=MAX_CONTENT_CHARS), AfterValidator(_storable)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Relative(_Strict):
    """At the prompt's place in the list."""

    position: Literal["relative"]


class AtDepth(_Strict):
    """Inside the history, ``depth`` messages from its end; ascending ``order`` at one depth."""

    position: Literal["at_depth"]
    depth: int = Field(ge=0, le=MAX_DEPTH)
    order: int = Field(default=DEFAULT_ORDER, ge=-ORDER_LIMIT, le=ORDER_LIMIT)


class NotPlaced(_Strict):
    """Not an Actor message: a role template or a stored, unused prompt."""

    position: Literal["none"]


Injection = Annotated[Relative | AtDepth | NotPlaced, Field(discriminator="position")]


class Prompt(_Strict):
    """One prompt of a preset (see the module docstring for each field)."""

    identifier: Annotated[
        str,
        StringConstraints(
            min_length=1, max_length=MAX_IDENTIFIER_CHARS, pattern=IDENTIFIER_PATTERN
        ),
    ]
    name: Name
    role: Literal["system", "user", "assistant"] = "system"
    content: Content = ""
    enabled: bool = True
    injection: Injection = Relative(position="relative")
    forbid_overrides: bool = False

    @property
    def is_marker(self) -> bool:
        return self.identifier in MARKERS

    @property
    def placed(self) -> bool:
        """Whether the prompt is one of the Actor's messages (relative or at a depth)."""
        return self.injection.position != "none"


PROMPTS = TypeAdapter(list[Prompt])


# --- errors -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One broken rule: a stable ``code``, where (``prompts.3.content``), and which prompt."""

    code: str
    loc: str
    msg: str
    identifier: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"loc": self.loc, "msg": self.msg, "code": self.code}
        if self.identifier is not None:
            out["identifier"] = self.identifier
        return out


class PresetInvalid(RoleplayError, failures.Invalid):
    """A preset breaks rules (422 ``preset_invalid``); ``details.errors`` lists every
    problem as ``{"loc", "msg", "code", "identifier"}`` so an editor shows each one next to
    the prompt it concerns."""

    default_code = "preset_invalid"

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        shown = "; ".join(f"{p.loc}: {p.msg}" for p in self.problems[:3])
        more = len(self.problems) - 3
        message = shown + (f" (and {more} more)" if more > 0 else "")
        super().__init__(
            message=message or "invalid preset",
            details={"errors": [p.as_dict() for p in self.problems]},
        )
