"""The pure text-completion engine: SillyTavern-shaped instruct and context templates (parsed,
validated, the built-ins), the chat prompt rendered through them, stop strings cut locally, and
typed samplers mapped to each server's own field names. No Django."""

from .render import StopCutter, render_prompt, stop_strings
from .samplers import SAMPLERS, WIRES, SamplerError, check_samplers, wire_samplers
from .templates import (
    BUILTIN_TEMPLATES,
    NAMES_BEHAVIORS,
    ContextTemplate,
    InstructTemplate,
    TemplateError,
    builtin,
    parse_context,
    parse_instruct,
    parse_template_file,
)

__all__ = [
    "BUILTIN_TEMPLATES",
    "NAMES_BEHAVIORS",
    "SAMPLERS",
    "WIRES",
    "ContextTemplate",
    "InstructTemplate",
    "SamplerError",
    "StopCutter",
    "TemplateError",
    "builtin",
    "check_samplers",
    "parse_context",
    "parse_instruct",
    "parse_template_file",
    "render_prompt",
    "stop_strings",
    "wire_samplers",
]
