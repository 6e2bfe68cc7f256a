"""When an image may be shown: the moderation evidence rule, in one place.

The seed's evidence is ``{"moderation_status", "jobs": [{"task_id", "image_urls",
"moderation": [{"asset_url", "status", "classification", "blocked"}]}]}``, one moderation
item per image. A tool that merely checks the structure is not enough (the seed says so):
an image is *adopted* only when

- the top-level ``moderation_status`` is ``"COMPLETED"``,
- its own item's ``status`` is ``"COMPLETED"``,
- its ``classification`` is one of the allowed classes (default ``["SFW"]``),
- ``blocked`` is the JSON ``false`` (not missing, not ``0``), and
- the item's ``asset_url`` is the image's own (an item for another image proves nothing).

Anything else is one of two outcomes: *blocked* (the evidence is complete and says no: a
``blocked: true`` or a class that is not allowed) or *unverified* (the evidence is missing,
malformed, still running, or an ``ERROR``: nothing is known, so nothing is shown). A config
with moderation ``none`` marks every image *unmoderated*: shown, and labelled so.

Every function takes any JSON value in any position and never raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

COMPLETED = "COMPLETED"
DEFAULT_ALLOWED = ("SFW",)
MAX_CLASS_CHARS = 100

Outcome = Literal["adopted", "blocked", "unverified", "unmoderated"]
SHOWN: frozenset[str] = frozenset({"adopted", "unmoderated"})

# Why an image was not adopted (stable codes; a slot's failure code is one of these).
STATUS_NOT_COMPLETED = "moderation_incomplete"
NO_EVIDENCE = "moderation_missing"
URL_MISMATCH = "moderation_asset_mismatch"
BLOCKED = "moderation_blocked"
CLASS_NOT_ALLOWED = "moderation_class_not_allowed"
MALFORMED = "moderation_malformed"


@dataclass(frozen=True)
class Verdict:
    """One image's outcome; ``reason`` is a code above (empty when adopted)."""

    asset_url: str
    outcome: Outcome
    reason: str = ""
    classification: str | None = None

    @property
    def shown(self) -> bool:
        return self.outcome in SHOWN


@dataclass(frozen=True)
class Judgement:
    """The outcome of each image, in order, and the evidence's top-level status as read."""

    status: str
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every image has an answer (adopted or blocked): nothing is unknown."""
        return self.status == COMPLETED and all(v.outcome != "unverified" for v in self.verdicts)


def allowed_classes(value: object) -> tuple[str, ...]:
    """A config's allowed classes as a tuple of texts; anything malformed is the default."""
    if not isinstance(value, list | tuple) or not value:
        return DEFAULT_ALLOWED
    classes = tuple(v for v in value if isinstance(v, str) and v)
    return classes or DEFAULT_ALLOWED


def _status(value: object) -> str:
    return value if isinstance(value, str) and len(value) <= MAX_CLASS_CHARS else "unknown"


def judge_item(item: object, asset_url: str, allowed: Sequence[str]) -> Verdict:
    """The outcome of the one image at ``asset_url`` by its moderation ``item``."""
    if not isinstance(item, Mapping):
        return Verdict(asset_url, "unverified", NO_EVIDENCE if item is None else MALFORMED)
    if item.get("asset_url") != asset_url:
        return Verdict(asset_url, "unverified", URL_MISMATCH)
    if item.get("status") != COMPLETED:
        return Verdict(asset_url, "unverified", STATUS_NOT_COMPLETED)
    classification = item.get("classification")
    blocked = item.get("blocked")
    if not isinstance(classification, str) or not isinstance(blocked, bool):
        return Verdict(asset_url, "unverified", MALFORMED)
    shown_class = classification[:MAX_CLASS_CHARS]
    if blocked:
        return Verdict(asset_url, "blocked", BLOCKED, shown_class)
    if classification not in allowed:
        return Verdict(asset_url, "blocked", CLASS_NOT_ALLOWED, shown_class)
    return Verdict(asset_url, "adopted", "", shown_class)


def judge(evidence: object, asset_urls: Sequence[str], allowed: Sequence[str]) -> Judgement:
    """Each of ``asset_urls`` judged by ``evidence`` (the seed's shape; the items of every
    job are read in order). An item is matched to its image by ``asset_url``: the first item
    naming the image decides, and an image no item names is unverified."""
    if not isinstance(evidence, Mapping):
        return Judgement("unknown", [Verdict(u, "unverified", NO_EVIDENCE) for u in asset_urls])
    status = _status(evidence.get("moderation_status"))
    items = evidence_items(evidence)
    by_url: dict[str, Any] = {}
    for item in items:
        url = item.get("asset_url") if isinstance(item, Mapping) else None
        if isinstance(url, str) and url not in by_url:
            by_url[url] = item
    strangers = bool(set(by_url) - set(asset_urls))  # items naming no image of ours
    verdicts = []
    for url in asset_urls:
        if status != COMPLETED:
            verdicts.append(Verdict(url, "unverified", STATUS_NOT_COMPLETED))
        elif url not in by_url and strangers:
            verdicts.append(Verdict(url, "unverified", URL_MISMATCH))
        else:
            verdicts.append(judge_item(by_url.get(url), url, allowed))
    return Judgement(status, verdicts)


def evidence_items(evidence: Mapping[str, Any]) -> list[Any]:
    """Every moderation item of the evidence: its jobs' lists, or a top-level list."""
    found: list[Any] = []
    jobs = evidence.get("jobs")
    if isinstance(jobs, list):
        for job in jobs:
            moderation = job.get("moderation") if isinstance(job, Mapping) else None
            if isinstance(moderation, list):
                found.extend(moderation)
    moderation = evidence.get("moderation")
    if isinstance(moderation, list):
        found.extend(moderation)
    return found


def unmoderated(asset_urls: Sequence[str]) -> Judgement:
    """The outcome under a config with moderation ``none``: every image shown, so marked."""
    return Judgement("unmoderated", [Verdict(u, "unmoderated") for u in asset_urls])


def moderation_call_item(result: object, asset_url: str) -> dict[str, Any]:
    """One OpenAI-compatible ``/moderations`` result (``{"flagged", "categories"}``) recorded
    as a seed-shaped evidence item for ``asset_url``. A result without a boolean
    ``flagged`` is recorded as not completed (so the image stays unverified)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("flagged"), bool):
        return {"asset_url": asset_url, "status": "ERROR", "classification": None, "blocked": None}
    flagged = result["flagged"]
    categories = result.get("categories")
    hits = (
        sorted(k for k, v in categories.items() if v is True and isinstance(k, str))[:20]
        if isinstance(categories, Mapping)
        else []
    )
    return {
        "asset_url": asset_url,
        "status": COMPLETED,
        "classification": "NSFW" if flagged else "SFW",
        "blocked": flagged,
        "categories": hits,
    }
