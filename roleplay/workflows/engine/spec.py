"""A scenario's ``workflow`` JSON read into a typed :class:`WorkflowSpec` (seed 002 lines
1430–1445: ``visibleCapabilities``, ``executionGraph.nodes``, ``failurePolicy``).

The JSON arrives from the API, the console's editor and imports, so any position may hold
any JSON type, a lone surrogate, a 300,000-character string or ``1e300``: each is a coded
:class:`~.errors.FieldError` with its dotted path (and the node's id when it is known), never
an exception of another kind. Every bad field is reported (up to :data:`MAX_ERRORS`), so
the editor can show each message in place; a node stops at its first bad field.

The shape (``null`` for an optional field means its default)::

    {"visibleCapabilities": [name, …],                       # required, ≤ 64, no repeats
     "executionGraph": {"nodes": [                           # required, ≤ 32 nodes
        {"id": id, "capability": name,                        # required
         "input": {…},                                        # object, ≤ 16 KiB JSON, depth ≤ 16
         "dependsOn": [id, …],                                # no repeats
         "required": true, "parallel": false,                 # booleans (not 0/1)
         "projectTo": "turn_context"}]},                      # | foundation_context | none
     "failurePolicy": {"memoryRecall": "fail_turn",           # | continue_without_memory
                       "memoryIngest": "best_effort"}}        # | fail_turn

Ids and capability names: 1–64 characters of ``A–Z a–z 0–9 _ - .``, starting with a letter
or a digit (they are shown in traces, URLs and the editor's graph). Whether the ids are
unique, the dependencies exist and the graph has no cycle is the planner's check
(:mod:`.planner`), which also runs before each run; this module reads fields only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from console.storable import unstorable_at
from roleplay.frontloop.engine import errors as field_codes
from roleplay.frontloop.engine.errors import DirectorInvalid
from roleplay.frontloop.engine.fields import read_list, read_object, read_text
from roleplay.frontloop.engine.text import clip

from .contracts import PROJECT_TO, Node, ProjectTo
from .errors import FieldError, WorkflowInvalid

MAX_NODES = 32
MAX_VISIBLE = 64
MAX_NAME = 64  # a node id or a capability name
MAX_INPUT_BYTES = 16_384  # a node's ``input`` as compact UTF-8 JSON
MAX_INPUT_DEPTH = 16
MAX_INPUT_ITEMS = 2_000  # values in one node's input, all levels
MAX_ERRORS = 20

MEMORY_RECALL = ("fail_turn", "continue_without_memory")
MEMORY_INGEST = ("fail_turn", "best_effort")

# Codes beyond the shared field codes (wrong_type, required, unknown_field, empty, too_long,
# too_many, invalid_text, duplicate: ``roleplay.frontloop.engine.errors``).
INVALID_NAME = "invalid_name"  # an id or a capability name outside the pattern
INVALID_CHOICE = "invalid_choice"  # a value outside an enumeration
INPUT_TOO_LARGE = "input_too_large"  # a node's input past its size, depth or item count
INVALID_JSON = "invalid_json"  # a value JSON cannot carry (NaN, ∞, a non-string key)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_TOP_FIELDS = ("visibleCapabilities", "executionGraph", "failurePolicy")
_NODE_FIELDS = ("id", "capability", "input", "dependsOn", "required", "parallel", "projectTo")
_T = TypeVar("_T")


@dataclass(frozen=True)
class FailurePolicy:
    """The memory steps' policy (the seed's fields; tool nodes use ``required``)."""

    memory_recall: str = "fail_turn"
    memory_ingest: str = "best_effort"


@dataclass(frozen=True)
class WorkflowSpec:
    """A valid ``workflow``: field rules hold; the graph rules are the planner's."""

    visible_capabilities: tuple[str, ...]
    nodes: tuple[Node, ...]
    failure_policy: FailurePolicy = field(default_factory=FailurePolicy)

    def to_json(self) -> dict[str, Any]:
        """The stored form, every default written out."""
        return {
            "visibleCapabilities": list(self.visible_capabilities),
            "executionGraph": {"nodes": [_node_json(node) for node in self.nodes]},
            "failurePolicy": {
                "memoryRecall": self.failure_policy.memory_recall,
                "memoryIngest": self.failure_policy.memory_ingest,
            },
        }


class _Bad(Exception):
    def __init__(self, error: FieldError) -> None:
        super().__init__(error.message)
        self.error = error


def parse_workflow(raw: object, where: str = "workflow") -> WorkflowSpec:
    """``raw`` as a :class:`WorkflowSpec`, or :class:`WorkflowInvalid` listing the bad
    fields in document order."""
    found: list[FieldError] = []
    body = _collect(found, lambda: _read_object(raw, where, _TOP_FIELDS, None))
    if body is None:
        raise WorkflowInvalid(found)
    visible = _collect(found, lambda: _visible(body, f"{where}.visibleCapabilities"))
    nodes = _nodes(body, f"{where}.executionGraph", found)
    policy = _collect(found, lambda: _policy(body.get("failurePolicy"), f"{where}.failurePolicy"))
    if found:
        raise WorkflowInvalid(found[:MAX_ERRORS])
    assert visible is not None and nodes is not None and policy is not None
    return WorkflowSpec(visible_capabilities=visible, nodes=nodes, failure_policy=policy)


def _collect(found: list[FieldError], read: Callable[[], _T]) -> _T | None:
    try:
        return read()
    except _Bad as bad:
        found.append(bad.error)
        return None


def _visible(body: dict[str, Any], where: str) -> tuple[str, ...]:
    if "visibleCapabilities" not in body:
        raise _Bad(FieldError(field_codes.REQUIRED, "is required", where))
    items = _shared(lambda: read_list(body["visibleCapabilities"], where, MAX_VISIBLE), None)
    names: list[str] = []
    for index, item in enumerate(items):
        name = _name(item, f"{where}.{index}", None)
        if name in names:
            raise _Bad(FieldError(field_codes.DUPLICATE, f"repeats {name!r}", f"{where}.{index}"))
        names.append(name)
    return tuple(names)


def _nodes(body: dict[str, Any], where: str, found: list[FieldError]) -> tuple[Node, ...] | None:
    if "executionGraph" not in body:
        found.append(FieldError(field_codes.REQUIRED, "is required", where))
        return None
    graph = _collect(found, lambda: _read_object(body["executionGraph"], where, ("nodes",), None))
    if graph is None:
        return None
    if "nodes" not in graph:
        found.append(FieldError(field_codes.REQUIRED, "is required", f"{where}.nodes"))
        return None
    items = _collect(
        found, lambda: _shared(lambda: read_list(graph["nodes"], f"{where}.nodes", MAX_NODES), None)
    )
    if items is None:
        return None
    nodes: list[Node] = []
    for index, item in enumerate(items):
        try:
            nodes.append(_node(item, f"{where}.nodes.{index}"))
        except _Bad as bad:
            found.append(bad.error)
    return tuple(nodes) if len(nodes) == len(items) else None


def _node(item: object, where: str) -> Node:
    body = _read_object(item, where, _NODE_FIELDS, None)
    node_id: str | None = None
    if "id" not in body:
        raise _Bad(FieldError(field_codes.REQUIRED, "is required", f"{where}.id"))
    node_id = _name(body["id"], f"{where}.id", None)
    if "capability" not in body:
        raise _Bad(FieldError(field_codes.REQUIRED, "is required", f"{where}.capability", node_id))
    capability = _name(body["capability"], f"{where}.capability", node_id)
    return Node(
        id=node_id,
        capability=capability,
        input=_input(body.get("input"), f"{where}.input", node_id),
        depends_on=_depends_on(body.get("dependsOn"), f"{where}.dependsOn", node_id),
        required=_flag(body.get("required"), True, f"{where}.required", node_id),
        parallel=_flag(body.get("parallel"), False, f"{where}.parallel", node_id),
        project_to=_project_to(body.get("projectTo"), f"{where}.projectTo", node_id),
    )


def _depends_on(value: object, where: str, node: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = _shared(lambda: read_list(value, where, MAX_NODES), node)
    ids: list[str] = []
    for index, item in enumerate(items):
        dep = _name(item, f"{where}.{index}", node)
        if dep in ids:
            raise _Bad(
                FieldError(field_codes.DUPLICATE, f"repeats {dep!r}", f"{where}.{index}", node)
            )
        ids.append(dep)
    return tuple(ids)


def _flag(value: object, default: bool, where: str, node: str) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _Bad(FieldError(field_codes.WRONG_TYPE, "must be true or false", where, node))
    return value


def _project_to(value: object, where: str, node: str) -> ProjectTo:
    if value is None:
        return "turn_context"
    return _choice(value, PROJECT_TO, where, node)  # type: ignore[return-value]


def _policy(value: object, where: str) -> FailurePolicy:
    if value is None:
        return FailurePolicy()
    body = _read_object(value, where, ("memoryRecall", "memoryIngest"), None)
    recall, ingest = body.get("memoryRecall"), body.get("memoryIngest")
    return FailurePolicy(
        memory_recall=FailurePolicy.memory_recall
        if recall is None
        else _choice(recall, MEMORY_RECALL, f"{where}.memoryRecall", None),
        memory_ingest=FailurePolicy.memory_ingest
        if ingest is None
        else _choice(ingest, MEMORY_INGEST, f"{where}.memoryIngest", None),
    )


def _choice(value: object, allowed: tuple[str, ...], where: str, node: str | None) -> str:
    if not isinstance(value, str):
        raise _Bad(FieldError(field_codes.WRONG_TYPE, "must be a string", where, node))
    if value not in allowed:
        shown = clip(value, 40)
        raise _Bad(
            FieldError(
                INVALID_CHOICE, f"{shown!r} is not one of: " + ", ".join(allowed), where, node
            )
        )
    return value


def _name(value: object, where: str, node: str | None) -> str:
    """An id or a capability name: a string in the pattern, exactly (no blanks around)."""
    text = _shared(lambda: read_text(value, where, MAX_NAME, line=True), node)
    if text != value or not _NAME.fullmatch(text):
        raise _Bad(
            FieldError(
                INVALID_NAME,
                f"{clip(value, 40)!r}: use letters, digits, '_', '-' or '.', starting with a "
                "letter or a digit",
                where,
                node,
            )
        )
    return text


def _input(value: object, where: str, node: str) -> dict[str, Any]:
    """A node's ``input``: a JSON object within the size, depth and item bounds, storable."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(FieldError(field_codes.WRONG_TYPE, "must be an object", where, node))
    _walk_input(value, where, node)
    problem = unstorable_at(value, where)
    if problem:
        message = problem[1].removeprefix(f"{problem[0]} ")
        raise _Bad(FieldError(field_codes.INVALID_TEXT, message, problem[0], node))
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):  # the walk leaves none; a last guard
        raise _Bad(FieldError(INVALID_JSON, "is not valid JSON", where, node)) from None
    if size > MAX_INPUT_BYTES:
        raise _Bad(
            FieldError(
                INPUT_TOO_LARGE, f"is {size} bytes of JSON; at most {MAX_INPUT_BYTES}", where, node
            )
        )
    return value


def _walk_input(value: dict[str, Any], where: str, node: str) -> None:
    """Types, depth, item count and a size bound before any JSON is written (a 10 MB string
    is refused by its length, not encoded)."""
    stack: list[tuple[str, object, int]] = [(where, value, 1)]
    items = chars = 0
    while stack:
        path, item, depth = stack.pop()
        items += 1
        if depth > MAX_INPUT_DEPTH or items > MAX_INPUT_ITEMS:
            limit = (
                f"depth {MAX_INPUT_DEPTH}"
                if depth > MAX_INPUT_DEPTH
                else f"{MAX_INPUT_ITEMS} values"
            )
            raise _Bad(FieldError(INPUT_TOO_LARGE, f"goes past {limit}", where, node))
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _Bad(FieldError(INVALID_JSON, "holds a number JSON cannot carry", path, node))
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise _Bad(
                        FieldError(INVALID_JSON, "has a key that is not a string", path, node)
                    )
                chars += len(key)
                stack.append((f"{path}.{clip(key, 40)}", child, depth + 1))
        elif isinstance(item, list):
            stack.extend((f"{path}.{i}", child, depth + 1) for i, child in enumerate(item))
        elif item is not None and not isinstance(item, bool | int | float):
            raise _Bad(FieldError(INVALID_JSON, f"holds a {type(item).__name__}", path, node))
        if chars > MAX_INPUT_BYTES:
            raise _Bad(
                FieldError(
                    INPUT_TOO_LARGE, f"holds more than {MAX_INPUT_BYTES} characters", where, node
                )
            )


def _read_object(
    value: object, where: str, allowed: tuple[str, ...], node: str | None
) -> dict[str, Any]:
    return _shared(lambda: read_object(value, where, allowed), node)


def _shared(read: Callable[[], _T], node: str | None) -> _T:
    """A shared field reader's answer, its ``DirectorInvalid`` turned into a FieldError."""
    try:
        return read()
    except DirectorInvalid as exc:
        message = exc.message.removeprefix(f"{exc.field}: ")
        raise _Bad(FieldError(exc.code, message, exc.field, node)) from None


def _node_json(node: Node) -> dict[str, Any]:
    return {
        "id": node.id,
        "capability": node.capability,
        "input": dict(node.input),
        "dependsOn": list(node.depends_on),
        "required": node.required,
        "parallel": node.parallel,
        "projectTo": node.project_to,
    }
