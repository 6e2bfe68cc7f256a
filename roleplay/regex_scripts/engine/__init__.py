"""The pure regex-script engine: parse SillyTavern's script shape, compile its ``/pattern/flags``
with RE2 (linear time), and run scripts with JavaScript replacement semantics, filtered by
placement, mode (stored, prompt-only, display-only) and depth. No Django."""

from .pattern import parse_find_regex
from .scripts import (
    MAX_OUTPUT_CHARS,
    CompiledScript,
    Mode,
    Outcome,
    apply_scripts,
    compile_all,
    compile_script,
    run_script,
    selected,
)
from .spec import (
    AI_OUTPUT,
    PLACEMENTS,
    REASONING,
    SLASH_COMMAND,
    USER_INPUT,
    WORLD_INFO,
    RegexScriptError,
    ScriptSpec,
    parse_script,
)

__all__ = [
    "AI_OUTPUT",
    "MAX_OUTPUT_CHARS",
    "PLACEMENTS",
    "REASONING",
    "SLASH_COMMAND",
    "USER_INPUT",
    "WORLD_INFO",
    "CompiledScript",
    "Mode",
    "RegexScriptError",
    "ScriptSpec",
    "Outcome",
    "apply_scripts",
    "compile_all",
    "compile_script",
    "parse_find_regex",
    "parse_script",
    "run_script",
    "selected",
]
