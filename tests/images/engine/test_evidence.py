"""The moderation evidence rule: only complete, matching, allowed, unblocked evidence shows."""

from __future__ import annotations

import pytest

from images.engine import evidence as ev

URL = "https://assets.example/copper-key.png"


def item(**overrides) -> dict:
    return {"asset_url": URL, "status": "COMPLETED", "classification": "SFW",
            "blocked": False, **overrides}  # fmt: skip


def seed_shaped(*items, status="COMPLETED") -> dict:
    job = {"task_id": "t1", "image_urls": [URL], "moderation": list(items)}
    return {"moderation_status": status, "jobs": [job]}


def one(evidence, allowed=ev.DEFAULT_ALLOWED, url=URL) -> ev.Verdict:
    return ev.judge(evidence, [url], allowed).verdicts[0]


def test_the_seeds_example_is_adopted():
    verdict = one(seed_shaped(item()))
    assert verdict.outcome == "adopted" and verdict.shown and verdict.classification == "SFW"
    assert ev.judge(seed_shaped(item()), [URL], ["SFW"]).complete


@pytest.mark.parametrize("status", ["ERROR", "PENDING", "completed", "", None, 1, ["COMPLETED"]])
def test_a_top_level_status_other_than_completed_shows_nothing(status):
    verdict = one(seed_shaped(item(), status=status))
    assert verdict.outcome == "unverified" and verdict.reason == ev.STATUS_NOT_COMPLETED
    assert not ev.judge(seed_shaped(item(), status=status), [URL], ["SFW"]).complete


@pytest.mark.parametrize("status", ["ERROR", "PENDING", None, True])
def test_an_image_status_other_than_completed_shows_nothing(status):
    assert one(seed_shaped(item(status=status))).outcome == "unverified"


def test_blocked_true_is_blocked():
    verdict = one(seed_shaped(item(blocked=True)))
    assert (verdict.outcome, verdict.reason) == ("blocked", ev.BLOCKED)


@pytest.mark.parametrize("blocked", [0, None, "false", [], {}])
def test_blocked_must_be_the_json_false(blocked):
    verdict = one(seed_shaped(item(blocked=blocked)))
    assert (verdict.outcome, verdict.reason) == ("unverified", ev.MALFORMED)


def test_missing_fields_are_malformed_never_adopted():
    for key in ("classification", "blocked"):
        entry = item()
        del entry[key]
        assert one(seed_shaped(entry)).outcome == "unverified"


def test_a_class_outside_the_allowed_ones_is_blocked():
    verdict = one(seed_shaped(item(classification="NSFW")))
    assert (verdict.outcome, verdict.reason) == ("blocked", ev.CLASS_NOT_ALLOWED)
    assert one(seed_shaped(item(classification="NSFW")), allowed=("SFW", "NSFW")).shown
    assert one(seed_shaped(item(classification="sfw"))).outcome == "blocked"  # exact


def test_evidence_for_another_image_proves_nothing():
    verdict = one(seed_shaped(item(asset_url="https://assets.example/other.png")))
    assert (verdict.outcome, verdict.reason) == ("unverified", ev.URL_MISMATCH)
    assert not verdict.shown


def test_each_image_is_matched_by_its_own_url_and_a_duplicate_item_does_not_override():
    other = "https://assets.example/2.png"
    evidence = seed_shaped(item(asset_url=other, blocked=True), item(),
                           item(asset_url=other, blocked=False))  # fmt: skip
    verdicts = ev.judge(evidence, [URL, other], ["SFW"]).verdicts
    assert [v.outcome for v in verdicts] == ["adopted", "blocked"]


def test_an_image_without_an_item_is_unverified():
    verdicts = ev.judge(seed_shaped(item()), [URL, "https://x.example/3.png"], ["SFW"]).verdicts
    assert [v.outcome for v in verdicts] == ["adopted", "unverified"]


HOSTILE = [None, 1, "x", [], {}, True, "\ud800", "\x00", "x" * 300_000, [None], [[]]]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v)[:20])
@pytest.mark.parametrize(
    "where", ["evidence", "moderation_status", "jobs", "job", "moderation", "item",
              "asset_url", "status", "classification", "blocked"],
)  # fmt: skip
def test_any_json_in_any_position_is_never_adopted_and_never_raises(where, value):
    entry = item()
    job = {"task_id": "t1", "image_urls": [URL], "moderation": [entry]}
    evidence = {"moderation_status": "COMPLETED", "jobs": [job]}
    if where == "evidence":
        evidence = value
    elif where in ("moderation_status", "jobs"):
        evidence[where] = value
    elif where == "job":
        evidence["jobs"] = [value]
    elif where == "moderation":
        job["moderation"] = value
    elif where == "item":
        job["moderation"] = [value]
    else:
        entry[where] = value
    verdict = one(evidence)
    adoptable = where == "classification" and value == "SFW"
    assert verdict.shown == adoptable


def test_allowed_classes_of_a_config_fall_back_to_sfw():
    assert ev.allowed_classes(None) == ("SFW",)
    assert ev.allowed_classes([]) == ("SFW",)
    assert ev.allowed_classes([1, None]) == ("SFW",)
    assert ev.allowed_classes(["SFW", "SUGGESTIVE", 3]) == ("SFW", "SUGGESTIVE")


def test_no_moderation_marks_every_image_unmoderated_and_shown():
    judgement = ev.unmoderated([URL, "b64_json:1"])
    assert [v.outcome for v in judgement.verdicts] == ["unmoderated", "unmoderated"]
    assert all(v.shown for v in judgement.verdicts) and judgement.status == "unmoderated"


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        ({"flagged": False, "categories": {"sexual": False}}, "adopted"),
        ({"flagged": True, "categories": {"violence": True, "sexual": False}}, "blocked"),
        ({"flagged": "no"}, "unverified"),
        (None, "unverified"),
        ([], "unverified"),
    ],
)
def test_a_moderation_call_result_becomes_seed_shaped_evidence(result, outcome):
    entry = ev.moderation_call_item(result, URL)
    verdict = one({"moderation_status": "COMPLETED", "moderation": [entry]})
    assert verdict.outcome == outcome
    if outcome == "blocked":
        assert entry["categories"] == ["violence"]
