"""The sandbox a model's own Jinja chat template runs in, with its work bounded.

Chat templates are Hugging Face's: Jinja in ``ImmutableSandboxedEnvironment`` with
``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols`` extension, ``{% generation %}``
passed through, a ``tojson`` that keeps non-ASCII text, and the globals ``raise_exception``
and ``strftime_now`` (as ``transformers`` and llama.cpp give them).

The sandbox stops a template from touching anything but its data; it does not stop one from
working forever (``{% for a in range(99999) %}{% for b in range(99999) %}``) or from
building a gigantic string (``'x' * 10**10``, or one doubled in a loop). So each render has
a budget (:class:`Budget`): every loop step and every call spends one step (at most
``MAX_STEPS``); ``*``, ``**``, ``%`` and a call's numbers and format widths are checked
before they run; what ``+``, ``~``, a call or a filter makes is at most ``MAX_VALUE_CHARS``
long; and the output is cut off past ``MAX_OUTPUT_CHARS``. Going over raises
:class:`RenderLimit`; a template's own ``raise_exception`` raises :class:`TemplateRaised`.
No Django here.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

MAX_STEPS = 200_000
MAX_OUTPUT_CHARS = 2_000_000
MAX_REPEAT_CHARS = 100_000
MAX_VALUE_CHARS = 1_000_000
MAX_POWER_DIGITS = 100
_COUNTED = "__counted_loop__"
_CONCAT = "__checked_concat__"
# A %-format or str.format width or precision of a million or more.
_NESTED = re.compile(r"\{[^{}]*\{")
_WIDE = re.compile(r"(%(\([^)]*\))?|\{[^{}]*:)[^\d{}%]{0,6}\d{6,}")


class RenderLimit(Exception):
    """A render that went over its budget (steps, output or a product's size)."""


class TemplateRaised(Exception):
    """The template called ``raise_exception(message)``."""


class Budget:
    """The steps left to one render."""

    def __init__(self, steps: int = MAX_STEPS) -> None:
        self.left = steps

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise RenderLimit(f"the template took more than {MAX_STEPS} steps")


_BUDGET: contextvars.ContextVar[Budget] = contextvars.ContextVar("chat_template_budget")


def _spend() -> None:
    budget = _BUDGET.get(None)
    if budget is not None:
        budget.spend()


class _Counted:
    """A loop's iterable whose every step spends from the render's budget (its length stays
    known, so ``loop.last`` and ``loop.length`` work as before)."""

    def __init__(self, iterable: Iterable[Any]) -> None:
        self.iterable = iterable

    def __len__(self) -> int:
        return len(self.iterable)  # type: ignore[arg-type]  # TypeError: LoopContext counts

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable:
            _spend()
            yield item


class _IgnoreGeneration(Extension):
    """Hugging Face's ``{% generation %}...{% endgeneration %}`` marks, rendered as their
    body."""

    tags = {"generation"}

    def parse(self, parser: Any) -> Any:
        parser.stream.skip(1)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _raise_exception(message: Any = "") -> None:
    raise TemplateRaised(str(message))


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(str(fmt))


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None,
            separators: Any = None, sort_keys: bool = False) -> str:  # fmt: skip
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)  # fmt: skip


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | list | tuple | bytes | dict) else 1


def _made(value: Any) -> Any:
    """``value`` when it is not too long to keep working with."""
    if _size(value) > MAX_VALUE_CHARS:
        raise RenderLimit(f"a value longer than {MAX_VALUE_CHARS}")
    return value


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse the numbers that would make a huge value in one call (``'x'.center(10**9)``)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and abs(value) > MAX_REPEAT_CHARS:
            raise RenderLimit(f"a number above {MAX_REPEAT_CHARS} given to a call")


def _format_string(text: Any) -> None:
    """Refuse a format string with a huge width (``'{:>999999999}'``, ``'%999999999s'``)."""
    if isinstance(text, str) and _WIDE.search(text):
        raise RenderLimit("a format width too large")


def _replacing(args: tuple[Any, ...]) -> None:
    """``str.replace`` (method or filter) whose result would be too long."""
    if len(args) >= 3 and isinstance(args[0], str) and isinstance(args[1], str):
        text, old, new = args[0], args[1], str(args[2])
        count = len(text) + 1 if not old else text.count(old)
        if len(text) + count * max(len(new) - len(old), 0) > MAX_VALUE_CHARS:
            raise RenderLimit(f"a replace longer than {MAX_VALUE_CHARS}")


def _concat(*parts: Any) -> str:
    if sum(_size(p) for p in parts) > MAX_VALUE_CHARS:
        raise RenderLimit(f"a joined text longer than {MAX_VALUE_CHARS}")
    return "".join(str(p) for p in parts)


def _checked_filter(name: str, function: Any) -> Any:
    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if name == "format" and args:
            _format_string(args[0])  # its numbers are shown, not widths, unless it says *
            if isinstance(args[0], str) and "*" in args[0]:
                _arguments(args[1:], kwargs)
        else:
            _arguments(args[1:], kwargs)
        if name == "replace":
            _replacing(args[-3:] if len(args) > 3 else args)
        return _made(function(*args, **kwargs))

    return checked


class ChatTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with its loops and calls counted and its operators checked (module doc)."""

    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def __init__(self) -> None:
        super().__init__(
            loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
            extensions=[loopcontrols, _IgnoreGeneration], autoescape=False,
        )  # fmt: skip
        self.filters["tojson"] = _tojson
        self.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now)
        self.globals[_COUNTED] = _Counted
        self.globals[_CONCAT] = _concat
        self.filters = {n: _checked_filter(n, f) for n, f in self.filters.items()}

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(
                nodes.Name(_COUNTED, "load"), [loop.iter], [], None, None, lineno=loop.lineno
            )
        return _ConcatChecker().visit(tree)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _spend()
        fmt = getattr(getattr(__obj, "__wrapped__", None), "__self__", None)
        if isinstance(fmt, str) and getattr(__obj, "__name__", "") in ("format", "format_map"):
            if _NESTED.search(fmt):  # a width taken from the arguments: '{:>{}}'
                _arguments(args, kwargs)
        elif __obj is not _Counted and __obj is not _concat:
            _arguments(args, kwargs)
        if getattr(__obj, "__name__", "") == "replace":
            _replacing((getattr(__obj, "__self__", None), *args))
        return _made(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _format_string(value.__self__)
        return wrapped

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "+":
            if _size(left) + _size(right) > MAX_VALUE_CHARS:
                raise RenderLimit(f"a sum longer than {MAX_VALUE_CHARS}")
        elif operator == "%":
            _format_string(left)
            if isinstance(left, str) and "*" in left:  # widths taken from the values
                _arguments(right if isinstance(right, tuple) else (right,), {})
        elif operator == "*":
            for one, other in ((left, right), (right, left)):
                if isinstance(one, str | list | tuple) and isinstance(other, int):
                    if len(one) * other > MAX_REPEAT_CHARS:
                        raise RenderLimit(f"a repeated value longer than {MAX_REPEAT_CHARS}")
        elif isinstance(left, int | float) and isinstance(right, int | float):
            if abs(left) > 1 and abs(right) * math.log10(abs(left)) > MAX_POWER_DIGITS:
                raise RenderLimit("a power too large")
        return super().call_binop(context, operator, left, right)


class _ConcatChecker(NodeTransformer):
    """``a ~ b`` becomes a call that checks the joined length first."""

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:  # noqa: N802 - Jinja's name
        parts = [self.visit(part) for part in node.nodes]
        return nodes.Call(nodes.Name(_CONCAT, "load"), parts, [], None, None, lineno=node.lineno)


ENVIRONMENT = ChatTemplateEnvironment()


@functools.lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """The compiled template (``jinja2.TemplateSyntaxError`` when it does not parse); the
    last few are kept, so a turn does not compile its config's template again."""
    return ENVIRONMENT.from_string(source)


def render_bounded(template: jinja2.Template, variables: dict[str, Any]) -> str:
    """``template`` rendered with ``variables`` within one fresh budget and the output cap."""
    token = _BUDGET.set(Budget())
    try:
        out: list[str] = []
        size = 0
        for piece in template.generate(**variables):
            size += len(piece)
            if size > MAX_OUTPUT_CHARS:
                raise RenderLimit(f"the template wrote more than {MAX_OUTPUT_CHARS} characters")
            out.append(piece)
        return "".join(out)
    finally:
        _BUDGET.reset(token)
