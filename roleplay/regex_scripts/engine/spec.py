"""A SillyTavern regex script's shape, checked: the fields SillyTavern writes
(``id, scriptName, findRegex, replaceString, trimStrings, placement, disabled, markdownOnly,
promptOnly, runOnEdit, substituteRegex, minDepth, maxDepth``) into a frozen
:class:`ScriptSpec`, or a :class:`RegexScriptError` naming the field. Cards in the wild are
loose (numbers as strings, ``null`` for absent), so the reading is as forgiving as
SillyTavern's own and strict only where a wrong value would change what runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console import failures
from console.storable import unstorable

# SillyTavern's ``regex_placement``: 0 (markdown display) is deprecated and never selected.
USER_INPUT = 1
AI_OUTPUT = 2
SLASH_COMMAND = 3
WORLD_INFO = 5
REASONING = 6
PLACEMENTS = (USER_INPUT, AI_OUTPUT, SLASH_COMMAND, WORLD_INFO, REASONING)

# ``substituteRegex``: macros in the find pattern (none, raw values, regex-escaped values).
SUBSTITUTE_NONE, SUBSTITUTE_RAW, SUBSTITUTE_ESCAPED = 0, 1, 2

MAX_NAME_CHARS = 200
MAX_FIND_CHARS = 2_000
MAX_REPLACE_CHARS = 20_000
MAX_TRIM_STRINGS = 50
MAX_TRIM_CHARS = 500


class RegexScriptError(failures.Invalid):
    """A script that cannot run (422): ``code`` (stable), a message and details naming the
    field. Pure: derives from ``console.failures``, so every door maps it the same way."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(code, message, details)


@dataclass(frozen=True, slots=True)
class ScriptSpec:
    """One script, SillyTavern's fields under Python names."""

    script_id: str
    script_name: str
    find_regex: str
    replace_string: str = ""
    trim_strings: tuple[str, ...] = ()
    placement: tuple[int, ...] = ()
    disabled: bool = False
    markdown_only: bool = False
    prompt_only: bool = False
    run_on_edit: bool = False
    substitute_regex: int = SUBSTITUTE_NONE
    min_depth: int | None = None
    max_depth: int | None = None

    def to_sillytavern(self) -> dict[str, Any]:
        """The script as SillyTavern writes it (what a card export carries)."""
        return {
            "id": self.script_id,
            "scriptName": self.script_name,
            "findRegex": self.find_regex,
            "replaceString": self.replace_string,
            "trimStrings": list(self.trim_strings),
            "placement": list(self.placement),
            "disabled": self.disabled,
            "markdownOnly": self.markdown_only,
            "promptOnly": self.prompt_only,
            "runOnEdit": self.run_on_edit,
            "substituteRegex": self.substitute_regex,
            "minDepth": self.min_depth,
            "maxDepth": self.max_depth,
        }


def parse_script(raw: Any) -> ScriptSpec:
    """``raw`` (one entry of ``regex_scripts``) as a :class:`ScriptSpec`; raises only
    :class:`RegexScriptError` (code ``regex_script_invalid``)."""
    if not isinstance(raw, dict):
        raise _invalid("script", "a script is an object")
    name = _text(raw, "scriptName", MAX_NAME_CHARS)
    find = _text(raw, "findRegex", MAX_FIND_CHARS)
    if not find.strip():
        raise _invalid("findRegex", "findRegex is empty")
    return ScriptSpec(
        script_id=_text(raw, "id", MAX_NAME_CHARS),
        script_name=name,
        find_regex=find,
        replace_string=_text(raw, "replaceString", MAX_REPLACE_CHARS),
        trim_strings=_trims(raw.get("trimStrings")),
        placement=_placement(raw.get("placement")),
        disabled=_flag(raw, "disabled"),
        markdown_only=_flag(raw, "markdownOnly"),
        prompt_only=_flag(raw, "promptOnly"),
        run_on_edit=_flag(raw, "runOnEdit"),
        substitute_regex=_substitute(raw.get("substituteRegex")),
        min_depth=_depth(raw, "minDepth"),
        max_depth=_depth(raw, "maxDepth"),
    )


def _invalid(field: str, message: str) -> RegexScriptError:
    return RegexScriptError("regex_script_invalid", message, field=field)


def _text(raw: dict, key: str, limit: int) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _invalid(key, f"{key} is not text")
    text = str(value)
    if len(text) > limit:
        raise _invalid(key, f"{key} is longer than {limit} characters")
    return _storable(text, key)


def _storable(text: str, key: str) -> str:
    why = unstorable(text)
    if why is not None:
        raise _invalid(key, f"{key} {why}")
    return text


def _flag(raw: dict, key: str) -> bool:
    value = raw.get(key)
    if value is None:
        return False
    if isinstance(value, bool | int):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", ""):
        return value.lower() in ("true", "1")
    raise _invalid(key, f"{key} is not true or false")


def _integer(value: Any, key: str) -> int:
    if isinstance(value, bool):
        raise _invalid(key, f"{key} is not a number")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or abs(value) > 1_000_000:
        raise _invalid(key, f"{key} is not a whole number")
    return value


def _trims(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_TRIM_STRINGS:
        raise _invalid("trimStrings", f"trimStrings is a list of at most {MAX_TRIM_STRINGS}")
    if not all(isinstance(item, str) and len(item) <= MAX_TRIM_CHARS for item in value):
        raise _invalid("trimStrings", f"each trim string is text of at most {MAX_TRIM_CHARS}")
    return tuple(_storable(item, "trimStrings") for item in value if item)


def _placement(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > 20:
        raise _invalid("placement", "placement is a list of numbers")
    found = {_integer(item, "placement") for item in value}
    # 0 (markdown display) is deprecated in SillyTavern and selects nothing; other unknown
    # numbers are refused so a typo is not silently a script that never runs.
    unknown = sorted(found - set(PLACEMENTS) - {0})
    if unknown:
        raise _invalid("placement", f"unknown placement {unknown}; known: {list(PLACEMENTS)}")
    return tuple(sorted(found - {0}))


def _substitute(value: Any) -> int:
    if value is None or value is False:
        return SUBSTITUTE_NONE
    if value is True:
        return SUBSTITUTE_RAW
    number = _integer(value, "substituteRegex")
    if number not in (SUBSTITUTE_NONE, SUBSTITUTE_RAW, SUBSTITUTE_ESCAPED):
        raise _invalid("substituteRegex", "substituteRegex is 0, 1 or 2")
    return number


def _depth(raw: dict, key: str) -> int | None:
    """``None`` for unbounded: absent, null, empty, or -1 (SillyTavern's 'no limit')."""
    value = raw.get(key)
    if value is None or value == "":
        return None
    number = _integer(value, key)
    if number < -1:
        raise _invalid(key, f"{key} is -1 (no limit) or more")
    return None if number == -1 else number
