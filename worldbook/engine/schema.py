"""The native worldbook data contract: books, entries, selection requests and their limits.

Every model forbids unknown fields, because a stray ``tenant_id`` or ``book_id`` mixed into a
book is a mistake the author should hear about, not data we silently store. Defaults and limits
follow the seed's field table; fields marked "beyond the seed" add SillyTavern's dynamic
features (sticky, cooldown, delay, inclusion groups), which this engine executes.

Validation here is per-object. Rules that need the whole revision (unique ids, dependency
graph, regex compilation) run in :func:`validate_book_for_publish`, because an importer may
build a draft book that is not yet publishable.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from worldbook.engine.errors import EngineError
from worldbook.engine.keys import RegexKeyError, compile_regex_key, parse_regex_key
from worldbook.errors import Invalid

POSITIONS: tuple[str, ...] = (
    "before_character",
    "after_character",
    "at_depth",
    "before_examples",
    "after_examples",
    "author_note_top",
    "author_note_bottom",
    "outlet",
)
DEFAULT_CAPABILITIES: tuple[str, ...] = ("before_character", "after_character", "at_depth")
KINDS: tuple[str, ...] = ("lore", "character", "rule", "template", "state_update", "presentation")
SELECTABLE_KINDS: frozenset[str] = frozenset({"lore", "character", "rule"})
LOGICS: tuple[str, ...] = ("and_any", "and_all", "not_any", "not_all")
CONDITION_OPS: tuple[str, ...] = ("eq", "ne", "in", "exists")

MAX_ENTRIES = 5_000
MAX_KEYS = 200
MAX_KEY_CHARS = 500
MAX_CONTENT_CHARS = 200_000
MAX_ENTRY_ID_CHARS = 150
ORDER_LIMIT = 1_000_000

Position = Literal[
    "before_character",
    "after_character",
    "at_depth",
    "before_examples",
    "after_examples",
    "author_note_top",
    "author_note_bottom",
    "outlet",
]
Kind = Literal["lore", "character", "rule", "template", "state_update", "presentation"]
Logic = Literal["and_any", "and_all", "not_any", "not_all"]
Role = Literal["system", "user", "assistant"]

Key = Annotated[str, StringConstraints(max_length=MAX_KEY_CHARS)]
EntryId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ENTRY_ID_CHARS)]
ShortName = Annotated[str, StringConstraints(min_length=1, max_length=100)]
OrderInt = Annotated[int, Field(ge=-ORDER_LIMIT, le=ORDER_LIMIT)]
Duration = Annotated[int, Field(ge=0, le=1_000_000)]

_FORBID = ConfigDict(extra="forbid")


class Condition(BaseModel):
    """A check on the caller's ``state``: ``path`` is dotted (``quest.started``, ``party.0``)."""

    model_config = _FORBID

    path: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    op: Literal["eq", "ne", "in", "exists"]
    value: Any = None

    @field_validator("path")
    @classmethod
    def _segments(cls, path: str) -> str:
        parts = path.split(".")
        if any(not part for part in parts):
            raise ValueError("path segments must be non-empty (no leading, trailing or '..')")
        if len(parts) > 20:
            raise ValueError("path is nested deeper than 20 segments")
        return path

    @model_validator(mode="after")
    def _value_shape(self) -> Condition:
        if self.op == "in" and not isinstance(self.value, list):
            raise ValueError("op 'in' needs a list value")
        if self.op == "exists" and self.value not in (None, True, False):
            raise ValueError("op 'exists' takes no value, or true/false")
        return self


class EntryIn(BaseModel):
    """One worldbook entry. ``id`` may be omitted; :class:`BookIn` fills it by position."""

    model_config = _FORBID

    id: EntryId | None = None
    title: Annotated[str, StringConstraints(max_length=500)] = ""
    content: Annotated[str, StringConstraints(max_length=MAX_CONTENT_CHARS)]
    enabled: bool = True
    constant: bool = False
    required: bool = False
    keys: Annotated[list[Key], Field(max_length=MAX_KEYS)] = Field(default_factory=list)
    secondary_keys: Annotated[list[Key], Field(max_length=MAX_KEYS)] = Field(default_factory=list)
    selective: bool = False
    logic: Logic = "and_any"
    case_sensitive: bool = False
    match_whole_words: bool = False
    probability: Annotated[int, Field(ge=0, le=100)] = 100
    scan_depth: Annotated[int, Field(ge=0, le=100)] | None = None
    conditions: Annotated[list[Condition], Field(max_length=20)] = Field(default_factory=list)
    requires: Annotated[list[EntryId], Field(max_length=20)] = Field(default_factory=list)
    priority: OrderInt = 0
    order: OrderInt = 0
    conflict_key: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    audience: Annotated[list[ShortName], Field(max_length=20)] = Field(
        default_factory=lambda: ["actor"]
    )
    kind: Kind = "lore"
    position: Position = "before_character"
    depth: Annotated[int, Field(ge=0, le=10_000)] = 0
    role: Role = "system"
    outlet_name: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    exclude_recursion: bool = True
    prevent_recursion: bool = True
    runtime_requirements: Annotated[list[ShortName], Field(max_length=50)] = Field(
        default_factory=list
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: dict[str, Any] | None = None
    # Beyond the seed: SillyTavern's timed effects and inclusion groups, executed by the engine.
    sticky: Duration | None = None
    cooldown: Duration | None = None
    delay: Duration | None = None
    delay_until_recursion: bool | Annotated[int, Field(ge=1, le=100)] = False
    group: Annotated[str, StringConstraints(max_length=500)] = ""
    group_override: bool = False
    group_weight: Annotated[int, Field(ge=1, le=1_000_000)] = 100
    use_group_scoring: bool | None = None
    vectorized: bool = False

    @property
    def group_names(self) -> tuple[str, ...]:
        """Inclusion group names: ``group`` is comma separated, like SillyTavern's."""
        return group_names(self.group)

    @property
    def recursion_level(self) -> int:
        """The first recursion round this entry may be keyword-activated in (0 = any round)."""
        return recursion_level(self.delay_until_recursion)


def group_names(group: str) -> tuple[str, ...]:
    """The inclusion group names of an entry's ``group`` (comma separated, like SillyTavern's)."""
    return tuple(sorted({g.strip() for g in group.split(",") if g.strip()}))


def recursion_level(delay_until_recursion: bool | int) -> int:
    """The first recursion round an entry may be keyword-activated in (0 = any round)."""
    if delay_until_recursion is True:
        return 1
    if delay_until_recursion is False:
        return 0
    return int(delay_until_recursion)


class BookIn(BaseModel):
    """A whole book revision as authored: ``POST /books`` and revision bodies use this shape."""

    model_config = _FORBID

    name: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    description: Annotated[str, StringConstraints(max_length=10_000)] = ""
    entries: Annotated[list[EntryIn], Field(max_length=MAX_ENTRIES)] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fill_ids(self) -> BookIn:
        for index, entry in enumerate(self.entries):
            if entry.id is None:
                entry.id = f"entry-{index}"
        return self


# --- selection request ---------------------------------------------------------------------


class BookRef(BaseModel):
    """A book the caller allows this turn; ``revision`` should be resolved before selecting."""

    model_config = _FORBID

    book_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    revision: Annotated[int, Field(ge=1)] | None = None
    # Beyond the seed: the book's scope tier (``engine.scopes``). Within the engine's own
    # classes and priority, entries of a lower tier are considered first for the budgets,
    # and at equal ``order`` they are placed later (nearer the end of the prompt).
    tier: Annotated[int, Field(ge=0, le=9)] = 0


def each_book_once(items: list[Any], verb: str) -> list[Any]:
    """``items`` (each with a ``book_id``) unchanged, or a ValueError naming a repeated book."""
    seen: set[str] = set()
    for item in items:
        if item.book_id in seen:
            raise ValueError(f"book {item.book_id!r} is {verb} twice")
        seen.add(item.book_id)
    return items


class HistoryMessage(BaseModel):
    model_config = _FORBID

    role: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    content: Annotated[str, StringConstraints(max_length=16_000)]


class SelectRequest(BaseModel):
    """Inputs of one per-turn selection (``POST /context/select``); defaults from the seed."""

    model_config = _FORBID

    books: Annotated[list[BookRef], Field(min_length=1, max_length=20)]
    query: Annotated[str, StringConstraints(min_length=1, max_length=8_000)]
    history: Annotated[list[HistoryMessage], Field(max_length=100)] = Field(default_factory=list)
    state: dict[str, Any] = Field(default_factory=dict)
    audience: Annotated[str, StringConstraints(min_length=1, max_length=100)] = "actor"
    strategy: Literal["rules", "hybrid"] = "rules"
    scan_depth: Annotated[int, Field(ge=0, le=100)] = 4
    token_budget: Annotated[int, Field(ge=0, le=32_000)] = 1500
    constant_budget_ratio: Annotated[float, Field(ge=0.0, le=1.0)] = 0.35
    max_entries: Annotated[int, Field(ge=1, le=200)] = 50
    max_recursion_rounds: Annotated[int, Field(ge=0, le=5)] = 2
    seed: Annotated[str, StringConstraints(max_length=200)] = "0"
    template_vars: dict[Annotated[str, StringConstraints(max_length=100)], str] = Field(
        default_factory=dict
    )
    placement_capabilities: Annotated[list[str], Field(max_length=100)] | None = None
    conversation_id: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    message_index: Annotated[int, Field(ge=0)] | None = None
    use_group_scoring: bool = False
    hybrid_threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.3
    # Beyond the seed: how many decision records the answer carries. ``all`` (the seed's
    # contract: one per entry of every book), ``matched`` (entries selected, activated, held
    # back, or whose primary key occurred in the scanned text), ``selected`` or ``none``.
    # The selection itself is the same whatever is asked for.
    decisions: Literal["all", "matched", "selected", "none"] = "all"

    @field_validator("books")
    @classmethod
    def _unique_books(cls, books: list[BookRef]) -> list[BookRef]:
        return each_book_once(books, "listed")

    @field_validator("placement_capabilities")
    @classmethod
    def _capabilities(cls, caps: list[str] | None) -> list[str] | None:
        if caps is None:
            return None
        for cap in caps:
            if cap.startswith("outlet:"):
                if not cap[len("outlet:") :].strip():
                    raise ValueError("an outlet capability needs a name: 'outlet:NAME'")
            elif cap == "outlet":
                raise ValueError("write outlet capabilities as 'outlet:NAME'")
            elif cap not in POSITIONS:
                raise ValueError(f"unknown placement capability {cap!r}")
        return caps

    @property
    def capabilities(self) -> frozenset[str]:
        caps = self.placement_capabilities
        return frozenset(DEFAULT_CAPABILITIES if caps is None else caps)


# --- errors --------------------------------------------------------------------------------


def validation_error_details(exc: ValidationError) -> dict[str, Any]:
    """Turn a pydantic error into the API's ``{"code", "message", "details"}`` error body."""
    errors = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(part) for part in err.get("loc", ()))
        msg = str(err.get("msg", "invalid value"))
        if err.get("type") == "extra_forbidden":
            msg = f"unknown field {str(err['loc'][-1])!r} is not allowed"
        errors.append({"loc": loc, "msg": msg, "type": str(err.get("type", ""))})
    if errors:
        first = errors[0]
        message = f"{first['loc']}: {first['msg']}" if first["loc"] else first["msg"]
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more)"
    else:
        message = "invalid input"
    return {"code": "validation_error", "message": message, "details": {"errors": errors}}


class PublishError(Invalid, EngineError):
    """A book revision that is valid field by field but cannot be published as a whole (422)."""


def validate_book_for_publish(book: BookIn) -> None:
    """Reject revisions the selector could not honour; raises :class:`PublishError`.

    Checks run in a fixed order (ids, outlets, regex keys, dependencies) and each error names
    every offending entry of its kind, so the author can fix them in one pass.
    """
    ids = [entry.id or f"entry-{i}" for i, entry in enumerate(book.entries)]
    counts: dict[str, int] = {}
    for eid in ids:
        counts[eid] = counts.get(eid, 0) + 1
    duplicates = sorted(eid for eid, n in counts.items() if n > 1)
    if duplicates:
        raise PublishError(
            "duplicate_entry_id",
            f"entry ids must be unique within a revision: {', '.join(duplicates)}",
            {"entry_ids": duplicates},
        )
    no_outlet = [
        eid
        for eid, e in zip(ids, book.entries, strict=True)
        if e.position == "outlet" and not e.outlet_name
    ]
    if no_outlet:
        raise PublishError(
            "outlet_name_required",
            f"entries placed at an outlet need outlet_name: {', '.join(no_outlet)}",
            {"entry_ids": no_outlet},
        )
    _check_regex_keys(ids, book.entries)
    _check_dependencies(ids, book.entries)


def check_entry(entry: EntryIn) -> None:
    """The publish checks that concern one entry alone (outlet name, regex keys), so an editor
    can report them when the entry is saved instead of at the publish."""
    entry_id = entry.id or "entry"
    if entry.position == "outlet" and not entry.outlet_name:
        raise PublishError(
            "outlet_name_required",
            f"entries placed at an outlet need outlet_name: {entry_id}",
            {"entry_ids": [entry_id]},
        )
    _check_regex_keys([entry_id], [entry])


def _check_regex_keys(ids: list[str], entries: list[EntryIn]) -> None:
    for eid, entry in zip(ids, entries, strict=True):
        for field in ("keys", "secondary_keys"):
            for key in getattr(entry, field):
                parsed = parse_regex_key(key)
                if parsed is None:
                    continue
                try:
                    compile_regex_key(parsed)
                except RegexKeyError as exc:
                    raise PublishError(
                        "invalid_regex",
                        f"entry {eid!r} has a regex key that cannot run: {key} ({exc})",
                        {"entry_id": eid, "field": field, "key": key, "reason": str(exc)},
                    ) from exc


def _check_dependencies(ids: list[str], entries: list[EntryIn]) -> None:
    graph = {eid: list(dict.fromkeys(e.requires)) for eid, e in zip(ids, entries, strict=True)}
    missing = [
        {"entry_id": eid, "requires": dep}
        for eid, deps in graph.items()
        for dep in deps
        if dep not in graph
    ]
    if missing:
        names = ", ".join(f"{m['entry_id']} -> {m['requires']}" for m in missing)
        raise PublishError(
            "dependency_missing",
            f"entries require ids that do not exist: {names}",
            {"missing": missing},
        )
    selfish = [eid for eid, deps in graph.items() if eid in deps]
    if selfish:
        raise PublishError(
            "dependency_self",
            f"entries cannot require themselves: {', '.join(selfish)}",
            {"entry_ids": selfish},
        )
    cycle = find_cycle(graph)
    if cycle:
        raise PublishError(
            "dependency_cycle",
            f"requires forms a cycle: {' -> '.join(cycle)}",
            {"cycle": cycle, "entry_ids": sorted(set(cycle))},
        )


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One dependency cycle as ``[a, b, ..., a]`` or ``None``; iterative for deep graphs."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    for root in graph:
        if colour[root] != white:
            continue
        path: list[str] = [root]
        iters = [iter(graph[root])]
        colour[root] = grey
        while iters:
            node = next(iters[-1], None)
            if node is None:
                colour[path.pop()] = black
                iters.pop()
                continue
            if node not in colour:
                continue
            if colour[node] == grey:
                return path[path.index(node) :] + [node]
            if colour[node] == white:
                colour[node] = grey
                path.append(node)
                iters.append(iter(graph[node]))
    return None


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON: the byte form hashes are computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(book: BookIn, dumped: dict[str, Any] | None = None) -> str:
    """sha256 of the normalised book: explicit defaults and omitted fields hash the same.
    ``dumped`` is ``book.model_dump(mode="json")`` when the caller has it (never changed)."""
    entries = dumped["entries"] if dumped is not None else None
    if entries is None or any(entry.get("id") is None for entry in entries):
        dumped = book.model_dump(mode="json")
        for index, entry in enumerate(dumped["entries"]):
            if entry.get("id") is None:
                entry["id"] = f"entry-{index}"
    return hashlib.sha256(canonical_json(dumped).encode("utf-8")).hexdigest()
