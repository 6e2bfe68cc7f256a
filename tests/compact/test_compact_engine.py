"""The pure Compact engine (seed 002, Compact): the budget and its trigger line, history
groups, checkpoints and their read-back checks, and the compactor's request and answer.
No database: small frozen dataclasses stand in for history messages and the real cl100k
counter (``console.tokens.count_tokens``) counts tokens."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from console.tokens import count_tokens
from roleplay.compact.engine import budget as budgets
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.engine import groups as grouping
from roleplay.compact.engine import protocol

SETTINGS = settings(deadline=None, max_examples=60)


@dataclass(frozen=True)
class Msg:
    id: object
    role: str
    content: str


def user(id_: object, content: str = "") -> Msg:
    return Msg(id_, "user", content or f"user says {id_}")


def bot(id_: object, content: str = "") -> Msg:
    return Msg(id_, "assistant", content or f"assistant says {id_}")


def ids(messages) -> list[str]:
    return [str(m.id) for m in messages]


roles = st.sampled_from(["user", "assistant"])
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
sentences = st.lists(words, min_size=0, max_size=12).map(" ".join)


@st.composite
def histories(draw, min_size: int = 0, max_size: int = 20) -> list[Msg]:
    pairs = draw(st.lists(st.tuples(roles, sentences), min_size=min_size, max_size=max_size))
    return [Msg(f"m{i}", role, text) for i, (role, text) in enumerate(pairs)]


# --- budget ---------------------------------------------------------------------------


class TestBudget:
    def test_the_seeds_numbers(self):
        assert budgets.budget(8192, 2048, 512) == 5632
        assert budgets.trigger_line(5632, 0.8) == 4505

    def test_budget_is_limit_minus_output_minus_margin(self):
        assert budgets.budget(4096, 1000, 0) == 3096
        assert budgets.budget(2048, 256, 256) == 1536

    @pytest.mark.parametrize("ratio", [0, 0.0, 1, 1.0, -0.1, 1.5, math.nan])
    def test_trigger_ratio_outside_the_open_interval_is_refused(self, ratio):
        with pytest.raises(ValueError, match="triggerRatio"):
            budgets.trigger_line(5632, ratio)

    def test_trigger_line_floors(self):
        assert budgets.trigger_line(10, 0.55) == 5
        assert budgets.trigger_line(1000, 0.5) == 500

    @given(
        budget_tokens=st.integers(min_value=0, max_value=1_000_000),
        ratio=st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
    )
    def test_trigger_line_is_an_integer_within_the_budget(self, budget_tokens, ratio):
        line = budgets.trigger_line(budget_tokens, ratio)
        assert isinstance(line, int)
        assert 0 <= line <= budget_tokens
        exact = Decimal(repr(ratio)) * budget_tokens  # the decimal the operator wrote
        assert line <= exact < line + 1

    def test_trigger_line_is_exact_where_floats_are_not(self):
        assert budgets.trigger_line(100, 0.29) == 29  # the float 100 * 0.29 is 28.999…

    def test_due_is_strictly_greater(self):
        assert budgets.due(4505, 4505) is False
        assert budgets.due(4506, 4505) is True
        assert budgets.due(4504, 4505) is False
        assert budgets.due(0, 0) is False

    @given(st.integers(min_value=-10, max_value=10_000), st.integers(-10, 10_000))
    def test_due_property(self, prompt_tokens, trigger):
        assert budgets.due(prompt_tokens, trigger) == (prompt_tokens > trigger)


# --- groups ---------------------------------------------------------------------------


class TestSelectedTurns:
    def test_a_user_message_and_the_replies_to_it(self):
        history = [user(1), bot(2), bot(3), user(4), bot(5)]
        found = grouping.group(history)
        assert [g.messages for g in found] == [tuple(history[:3]), tuple(history[3:])]
        assert (found[0].first_id, found[0].last_id) == ("1", "3")
        assert (found[1].first_id, found[1].last_id) == ("4", "5")

    def test_the_mode_is_selected_turns_by_default(self):
        history = [user(1), bot(2), user(3)]
        assert grouping.group(history) == grouping.group(history, "selected_turns")

    def test_leading_assistant_messages_are_a_group_of_their_own(self):
        history = [bot("a"), bot("b"), user("c"), bot("d")]
        found = grouping.group(history)
        assert [ids(g.messages) for g in found] == [["a", "b"], ["c", "d"]]

    def test_a_user_message_without_reply_is_its_own_group(self):
        history = [user(1), user(2), bot(3), user(4)]
        found = grouping.group(history)
        assert [ids(g.messages) for g in found] == [["1"], ["2", "3"], ["4"]]

    def test_no_messages_no_groups(self):
        assert grouping.group([]) == []

    def test_keys_are_ignored(self):
        history = [user(1), bot(2), user(3)]
        assert grouping.group(history, "selected_turns", keys=["x", "x", "x"]) == (
            grouping.group(history)
        )

    def test_unknown_mode_is_refused(self):
        with pytest.raises(ValueError, match="boundaryMode"):
            grouping.group([user(1)], "by_the_moon")

    @SETTINGS
    @given(histories())
    def test_concatenating_the_groups_gives_the_messages_back_in_order(self, history):
        found = grouping.group(history)
        assert [m for g in found for m in g.messages] == history
        assert all(g.messages for g in found)

    @SETTINGS
    @given(histories())
    def test_every_group_but_the_opening_starts_with_its_only_user_message(self, history):
        found = grouping.group(history)
        users = sum(m.role == "user" for m in history)
        opening = bool(history) and history[0].role != "user"
        assert len(found) == users + opening
        for index, g in enumerate(found):
            roles_in = [m.role for m in g.messages]
            if index == 0 and opening:
                assert "user" not in roles_in
            else:
                assert roles_in[0] == "user"
                assert "user" not in roles_in[1:]


class TestExplicitGroups:
    def test_messages_sharing_a_key_are_one_group(self):
        history = [user(1), bot(2), user(3), bot(4), bot(5), user(6)]
        keys = ["t1", "t1", "t2", "t2", "t2", "t3"]
        found = grouping.group(history, "explicit_groups", keys)
        assert [ids(g.messages) for g in found] == [["1", "2"], ["3", "4", "5"], ["6"]]

    def test_roles_do_not_split_a_keyed_group(self):
        history = [bot(1), user(2), user(3), bot(4)]
        found = grouping.group(history, "explicit_groups", ["k", "k", "k", "k"])
        assert [ids(g.messages) for g in found] == [["1", "2", "3", "4"]]

    def test_a_none_key_is_a_group_of_its_own(self):
        history = [bot(1), bot(2), user(3), bot(4)]
        found = grouping.group(history, "explicit_groups", [None, None, "t", "t"])
        assert [ids(g.messages) for g in found] == [["1"], ["2"], ["3", "4"]]

    def test_a_key_that_comes_back_later_starts_a_new_group(self):
        history = [user(1), user(2), user(3)]
        found = grouping.group(history, "explicit_groups", ["a", "b", "a"])
        assert [ids(g.messages) for g in found] == [["1"], ["2"], ["3"]]

    def test_no_messages_no_groups(self):
        assert grouping.group([], "explicit_groups", []) == []

    @pytest.mark.parametrize(
        "keys",
        [None, [], ["a"], ["a", "a", "a", "a"]],
        ids=["missing", "empty", "too-few", "too-many"],
    )
    def test_a_missing_or_mismatched_keys_list_is_refused(self, keys):
        history = [user(1), bot(2), bot(3)]
        with pytest.raises(ValueError, match="one group key per message"):
            grouping.group(history, "explicit_groups", keys)

    @SETTINGS
    @given(
        st.lists(
            st.tuples(roles, st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))),
            max_size=20,
        )
    )
    def test_property_groups_are_maximal_runs_of_one_key(self, rows):
        history = [Msg(f"m{i}", role, f"text {i}") for i, (role, _) in enumerate(rows)]
        keys = [key for _, key in rows]
        found = grouping.group(history, "explicit_groups", keys)
        assert [m for g in found for m in g.messages] == history
        by_id = dict(zip(ids(history), keys, strict=True))
        group_keys = []
        for g in found:
            those = [by_id[str(m.id)] for m in g.messages]
            assert len(set(those)) == 1
            assert those[0] is not None or len(those) == 1
            group_keys.append(those[0])
        for earlier, later in zip(group_keys, group_keys[1:], strict=False):
            assert earlier is None or later is None or earlier != later


class TestCompressible:
    @pytest.fixture
    def five(self):
        history = [m for i in range(5) for m in (user(f"u{i}"), bot(f"a{i}"))]
        found = grouping.group(history)
        assert len(found) == 5
        return found

    def test_keep_last_zero_compresses_everything(self, five):
        assert grouping.compressible(five, 0) == (five, [])

    def test_keep_last_one_keeps_the_last_group(self, five):
        old, kept = grouping.compressible(five, 1)
        assert old == five[:4]
        assert kept == [five[4]]

    def test_keep_last_two(self, five):
        assert grouping.compressible(five, 2) == (five[:3], five[3:])

    @pytest.mark.parametrize("keep_last", [5, 6, 100])
    def test_keep_last_at_or_over_the_count_compresses_nothing(self, five, keep_last):
        assert grouping.compressible(five, keep_last) == ([], five)

    def test_no_groups(self):
        assert grouping.compressible([], 0) == ([], [])
        assert grouping.compressible([], 3) == ([], [])

    def test_answers_lists(self):
        found = tuple(grouping.group([user(1), user(2)]))
        old, kept = grouping.compressible(found, 1)
        assert isinstance(old, list) and isinstance(kept, list)

    @given(st.integers(min_value=0, max_value=30), st.integers(min_value=0, max_value=40))
    def test_property_split(self, count, keep_last):
        found = grouping.group([user(i) for i in range(count)])
        old, kept = grouping.compressible(found, keep_last)
        assert old + kept == found
        assert len(kept) == min(keep_last, count)


# --- checkpoint -----------------------------------------------------------------------

CONFIG_FP = cp.config_fingerprint(model="m", keep=2, ratio=0.8)
PLAIN = {"format": "plain_text", "text": "Mira met the ferryman at the harbour."}
STRUCTURED = {
    "format": "structured_json",
    "canonical": ["Mira lives by the harbour."],
    "interaction": ["Friendly and teasing."],
    "open_threads": ["The missing ferry."],
}


def conversation(n: int = 8) -> list[Msg]:
    return [
        (user if i % 2 == 0 else bot)(f"m{i}", f"message number {i} about the tide")
        for i in range(n)
    ]


def make_checkpoint(history, start: int, end: int, **changes) -> cp.Checkpoint:
    covered = history[start : end + 1]
    made = cp.Checkpoint(
        version=1,
        summary=PLAIN,
        first_id=str(history[start].id),
        last_id=str(history[end].id),
        covered_count=len(covered),
        fingerprint=cp.fingerprint(covered),
        config_fingerprint=CONFIG_FP,
    )
    return replace(made, **changes)


def check(checkpoint, history, **overrides) -> cp.Verdict:
    kwargs = {
        "config_fp": CONFIG_FP,
        "output_format": checkpoint.summary.get("format", "plain_text"),
        "max_summary_tokens": 700,
        "count_tokens": count_tokens,
    }
    kwargs.update(overrides)
    return cp.verify(checkpoint, history, **kwargs)


class TestFingerprint:
    def test_is_deterministic_and_hex(self):
        history = conversation()
        assert cp.fingerprint(history) == cp.fingerprint(list(history))
        assert len(cp.fingerprint(history)) == 64
        int(cp.fingerprint(history), 16)

    def test_order_matters(self):
        a, b = user("1", "hello"), bot("2", "hi")
        assert cp.fingerprint([a, b]) != cp.fingerprint([b, a])

    def test_message_boundaries_matter(self):
        one = [user("1", "ab")]
        assert cp.fingerprint(one) != cp.fingerprint([user("1", "a"), user("1", "b")])

    def test_ids_are_compared_as_text(self):
        assert cp.fingerprint([user(7, "x")]) == cp.fingerprint([user("7", "x")])

    @SETTINGS
    @given(
        history=histories(min_size=1),
        data=st.data(),
        field=st.sampled_from(["id", "role", "content"]),
    )
    def test_changes_when_any_id_role_or_content_changes(self, history, data, field):
        index = data.draw(st.integers(min_value=0, max_value=len(history) - 1))
        old = history[index]
        new_value = data.draw(st.text(max_size=20).filter(lambda v: v != str(getattr(old, field))))
        changed = list(history)
        changed[index] = replace(old, **{field: new_value})
        assert cp.fingerprint(changed) != cp.fingerprint(history)


class TestConfigFingerprint:
    def test_keyword_order_does_not_matter(self):
        assert cp.config_fingerprint(a=1, b="x") == cp.config_fingerprint(b="x", a=1)

    def test_a_changed_value_changes_it(self):
        assert cp.config_fingerprint(a=1, b="x") != cp.config_fingerprint(a=2, b="x")
        assert cp.config_fingerprint(a=1) != cp.config_fingerprint(a=1, b=None)

    def test_values_that_are_not_json_are_taken_as_text(self):
        class Thing:
            def __str__(self) -> str:
                return "thing"

        assert cp.config_fingerprint(x=Thing()) == cp.config_fingerprint(x="thing")


class TestSummaryText:
    def test_plain_text(self):
        assert cp.summary_text(PLAIN) == PLAIN["text"]

    def test_plain_text_without_text_is_empty(self):
        assert cp.summary_text({"format": "plain_text"}) == ""
        assert cp.summary_text({"format": "plain_text", "text": None}) == ""

    def test_structured_json(self):
        assert cp.summary_text(STRUCTURED) == "\n".join(
            [
                "Canonical facts:",
                "- Mira lives by the harbour.",
                "Relationship and interaction:",
                "- Friendly and teasing.",
                "Open threads:",
                "- The missing ferry.",
            ]
        )

    def test_structured_json_leaves_out_empty_sections(self):
        summary = {
            "format": "structured_json",
            "canonical": ["a", "b"],
            "interaction": [],
            "open_threads": ["c"],
        }
        assert cp.summary_text(summary) == "Canonical facts:\n- a\n- b\nOpen threads:\n- c"

    def test_structured_json_all_empty_is_empty(self):
        summary = {"format": "structured_json", "canonical": [], "interaction": []}
        assert cp.summary_text(summary) == ""

    def test_a_single_string_is_one_item(self):
        summary = {"format": "structured_json", "canonical": "one fact"}
        assert cp.summary_text(summary) == "Canonical facts:\n- one fact"


class TestVerifyHappyPaths:
    def test_both_ends_present(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3)
        assert check(checkpoint, history) == cp.Verdict(True)

    def test_both_ends_present_in_the_middle_of_the_history(self):
        history = conversation(10)
        checkpoint = make_checkpoint(history, 2, 5)
        assert check(checkpoint, history).ok

    def test_a_single_covered_message(self):
        history = conversation()
        assert check(make_checkpoint(history, 0, 0), history).ok

    def test_structured_summary(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3, summary=STRUCTURED)
        assert check(checkpoint, history, output_format="structured_json").ok

    def test_messages_added_after_the_end_do_not_matter(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3)
        assert check(checkpoint, history + [user("new"), bot("newer")]).ok

    def test_only_the_end_present_skips_the_count_and_fingerprint(self):
        """The first covered message is older than the window (or the checkpoint chains
        earlier ones): neither the count nor the fingerprint can be checked."""
        history = conversation()
        checkpoint = make_checkpoint(
            history, 0, 3, covered_count=999, fingerprint="not-a-fingerprint"
        )
        assert check(checkpoint, history[2:]) == cp.Verdict(True)

    def test_the_summary_exactly_at_the_limit(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3)
        size = count_tokens(cp.summary_text(PLAIN))
        assert check(checkpoint, history, max_summary_tokens=size).ok


def _edit(history, index, **changes):
    changed = list(history)
    changed[index] = replace(changed[index], **changes)
    return changed


FAILURES = {
    # name: (make the checkpoint, the history, verify's overrides, reason, history_changed)
    "unknown_format_version": (
        lambda h: make_checkpoint(h, 0, 3, format_version=cp.FORMAT_VERSION + 1),
        lambda h: h,
        {},
        "unknown_format_version",
        False,
    ),
    "unknown_summary_format": (
        lambda h: make_checkpoint(h, 0, 3, summary={"format": "markdown", "text": "x"}),
        lambda h: h,
        {"output_format": "plain_text"},
        "unknown_summary_format",
        False,
    ),
    "no_summary_format": (
        lambda h: make_checkpoint(h, 0, 3, summary={"text": "x"}),
        lambda h: h,
        {"output_format": "plain_text"},
        "unknown_summary_format",
        False,
    ),
    "protocol_changed": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h,
        {"output_format": "structured_json"},
        "protocol_changed",
        False,
    ),
    "config_changed": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h,
        {"config_fp": cp.config_fingerprint(model="other")},
        "config_changed",
        True,
    ),
    "summary_too_large": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h,
        {"max_summary_tokens": count_tokens(PLAIN["text"]) - 1},
        "summary_too_large",
        False,
    ),
    "covered_end_deleted": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h[:3] + h[4:],
        {},
        "covered_end_missing",
        True,
    ),
    "rolled_back_past_the_end": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h[:2],
        {},
        "covered_end_missing",
        True,
    ),
    "covered_message_deleted": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h[:1] + h[2:],
        {},
        "covered_count_changed",
        True,
    ),
    "covered_message_inserted": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h[:2] + [bot("inserted")] + h[2:],
        {},
        "covered_count_changed",
        True,
    ),
    "covered_content_edited": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: _edit(h, 1, content="an edited reply"),
        {},
        "covered_content_changed",
        True,
    ),
    "covered_role_changed": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: _edit(h, 2, role="assistant"),
        {},
        "covered_content_changed",
        True,
    ),
    "covered_message_regenerated": (
        lambda h: make_checkpoint(h, 0, 3),
        lambda h: h[:2] + [bot("m1-regenerated", h[2].content)] + h[3:],
        {},
        "covered_content_changed",
        True,
    ),
}


class TestVerifyFailures:
    @pytest.mark.parametrize("name", list(FAILURES))
    def test_each_failure(self, name):
        make, shape, overrides, reason, history_changed = FAILURES[name]
        history = conversation()
        verdict = check(make(history), shape(history), **overrides)
        assert verdict == cp.Verdict(False, reason, history_changed=history_changed)

    def test_history_changed_is_false_for_format_failures(self):
        flags = {reason: changed for _, _, _, reason, changed in FAILURES.values()}
        for reason in ("unknown_format_version", "unknown_summary_format", "protocol_changed"):
            assert flags[reason] is False
        for reason in (
            "config_changed",
            "covered_end_missing",
            "covered_count_changed",
            "covered_content_changed",
        ):
            assert flags[reason] is True

    def test_format_failures_come_before_history_failures(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3, format_version=0)
        verdict = check(checkpoint, [], config_fp="other")
        assert verdict.reason == "unknown_format_version"
        assert not verdict.history_changed

    def test_the_summary_is_measured_as_the_actor_reads_it(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3, summary=STRUCTURED)
        size = count_tokens(cp.summary_text(STRUCTURED))
        ok = check(checkpoint, history, output_format="structured_json", max_summary_tokens=size)
        assert ok.ok
        too_big = check(
            checkpoint, history, output_format="structured_json", max_summary_tokens=size - 1
        )
        assert too_big.reason == "summary_too_large"

    def test_an_empty_history_misses_the_end(self):
        history = conversation()
        verdict = check(make_checkpoint(history, 0, 3), [])
        assert verdict == cp.Verdict(False, "covered_end_missing", history_changed=True)

    @SETTINGS
    @given(history=histories(min_size=1), data=st.data())
    def test_property_an_unchanged_history_verifies(self, history, data):
        end = data.draw(st.integers(min_value=0, max_value=len(history) - 1))
        start = data.draw(st.integers(min_value=0, max_value=end))
        extra = data.draw(histories(max_size=4))
        extra = [replace(m, id=f"x{m.id}") for m in extra]
        checkpoint = make_checkpoint(history, start, end)
        assert check(checkpoint, history + extra).ok
        assert cp.after(checkpoint, history + extra) == history[end + 1 :] + extra


class TestAfter:
    def test_the_messages_after_the_covered_end(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3)
        assert cp.after(checkpoint, history) == history[4:]

    def test_nothing_after_the_last_message(self):
        history = conversation()
        assert cp.after(make_checkpoint(history, 0, 7), history) == []

    def test_only_the_end_in_the_history(self):
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3)
        assert cp.after(checkpoint, history[3:]) == history[4:]

    def test_answers_a_list(self):
        history = tuple(conversation())
        assert isinstance(cp.after(make_checkpoint(list(history), 0, 1), history), list)


# --- protocol -------------------------------------------------------------------------

SPEAKERS = [("Ann", "We should go to the harbour."), ("Mira", "The tide is turning, «vite»!")]


class TestRender:
    def test_harness_json_v1(self):
        text = protocol.render("harness_json_v1", "Earlier things.", SPEAKERS, "What now?")
        assert json.loads(text) == {
            "earlier_summary": "Earlier things.",
            "messages": [
                {"speaker": "Ann", "text": "We should go to the harbour."},
                {"speaker": "Mira", "text": "The tide is turning, «vite»!"},
            ],
            "latest_user_message_context_only": "What now?",
        }
        assert "«vite»" in text  # not escaped

    def test_harness_json_v1_without_an_earlier_summary_or_latest(self):
        data = json.loads(protocol.render("harness_json_v1", "", [], None))
        assert data == {
            "earlier_summary": None,
            "messages": [],
            "latest_user_message_context_only": None,
        }

    @SETTINGS
    @given(
        earlier=st.text(max_size=40),
        messages=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=40)), max_size=6),
        latest=st.one_of(st.none(), st.text(max_size=40)),
    )
    def test_harness_json_v1_round_trips(self, earlier, messages, latest):
        data = json.loads(protocol.render("harness_json_v1", earlier, messages, latest))
        assert data["earlier_summary"] == (earlier or None)
        assert [(m["speaker"], m["text"]) for m in data["messages"]] == messages
        assert data["latest_user_message_context_only"] == latest

    def test_dream_text_v0(self):
        text = protocol.render("dream_text_v0", "Earlier things.", SPEAKERS, "What now?")
        lines = text.split("\n")
        assert lines[0] == "EARLIER SUMMARY"
        assert lines[1] == "Earlier things."
        assert "MESSAGES TO FOLD IN" in lines
        folded = lines.index("MESSAGES TO FOLD IN")
        assert lines[folded + 1 : folded + 3] == [
            "Ann: We should go to the harbour.",
            "Mira: The tide is turning, «vite»!",
        ]
        latest_label = [line for line in lines if line.startswith("LATEST USER MESSAGE")]
        assert len(latest_label) == 1
        assert "context only" in latest_label[0]
        assert lines.index(latest_label[0]) > folded + 2
        assert lines[-1] == "What now?"
        assert lines.index(latest_label[0]) == len(lines) - 2

    def test_dream_text_v0_without_an_earlier_summary_or_latest(self):
        lines = protocol.render("dream_text_v0", "", [], None).split("\n")
        assert lines[1] == "(none)"
        assert lines[-1] == ""
        assert "not something that happened" in lines[-2]


def cost(messages) -> int:
    return sum(count_tokens(text) for _, text in messages)


class TestSegments:
    def test_everything_within_the_limit_is_one_segment(self):
        assert protocol.segments(SPEAKERS, 1000, count_tokens) == [SPEAKERS]

    def test_no_messages_no_segments(self):
        assert protocol.segments([], 10, count_tokens) == []

    def test_split_at_the_limit(self):
        messages = [("A", "one two three")] * 5  # three tokens each
        assert count_tokens("one two three") == 3
        found = protocol.segments(messages, 7, count_tokens)
        assert [len(s) for s in found] == [2, 2, 1]
        assert protocol.segments(messages, 6, count_tokens) == found
        assert [len(s) for s in protocol.segments(messages, 9, count_tokens)] == [3, 2]

    def test_a_message_over_the_limit_is_alone(self):
        long = ("B", " ".join(["harbour"] * 50))
        messages = [("A", "hi"), long, ("A", "hi"), ("A", "there")]
        found = protocol.segments(messages, 10, count_tokens)
        assert found == [[("A", "hi")], [long], [("A", "hi"), ("A", "there")]]

    def test_a_message_over_the_limit_first(self):
        long = ("B", " ".join(["harbour"] * 50))
        found = protocol.segments([long, ("A", "hi")], 10, count_tokens)
        assert found == [[long], [("A", "hi")]]

    def test_only_the_text_is_counted(self):
        messages = [(" ".join(["speaker"] * 100), "hi"), ("x", "hi")]
        assert protocol.segments(messages, 2, count_tokens) == [messages]

    @SETTINGS
    @given(
        messages=st.lists(st.tuples(st.sampled_from(["Ann", "Mira"]), sentences), max_size=15),
        limit=st.integers(min_value=1, max_value=40),
    )
    def test_property(self, messages, limit):
        found = protocol.segments(messages, limit, count_tokens)
        assert [m for s in found for m in s] == messages  # order kept, nothing lost
        assert all(found)
        for segment in found:
            assert cost(segment) <= limit or len(segment) == 1
        for segment, following in zip(found, found[1:], strict=False):
            # greedy: the next message did not fit
            assert cost(segment) + count_tokens(following[0][1]) > limit


class TestResponseFormat:
    def test_structured_json_asks_for_the_schema(self):
        answer = protocol.response_format("structured_json")
        assert answer == {
            "type": "json_schema",
            "json_schema": {"name": "compact_summary", "schema": protocol.SCHEMA},
        }
        schema = answer["json_schema"]["schema"]
        assert set(schema["required"]) == {"canonical", "interaction", "open_threads"}
        assert schema["additionalProperties"] is False

    @pytest.mark.parametrize("output_format", ["plain_text", "anything"])
    def test_other_formats_ask_for_nothing(self, output_format):
        assert protocol.response_format(output_format) is None


def parse(text, output_format="plain_text", *, max_tokens=700, length_policy="reject"):
    return protocol.parse(
        text,
        output_format,
        max_tokens=max_tokens,
        length_policy=length_policy,
        count_tokens=count_tokens,
    )


LONG = " ".join(f"word{i}" for i in range(200))


class TestParsePlainText:
    def test_the_text_stripped(self):
        assert parse("  Mira waits.\n\nAnn leaves.  \n") == {
            "format": "plain_text",
            "text": "Mira waits.\n\nAnn leaves.",
        }

    @pytest.mark.parametrize("text", ["", "   ", "\n\t\n", None])
    def test_an_empty_summary_is_refused(self, text):
        with pytest.raises(protocol.SummaryInvalid, match="empty"):
            parse(text)

    @pytest.mark.parametrize("policy", ["reject", "accept_bounded"])
    def test_an_empty_summary_is_refused_whatever_the_policy(self, policy):
        with pytest.raises(protocol.SummaryInvalid):
            parse(" ", length_policy=policy)

    def test_the_error_is_a_value_error_with_its_code(self):
        with pytest.raises(ValueError) as caught:
            parse("")
        assert caught.value.code == "compact_summary_invalid"

    def test_at_the_limit_is_accepted(self):
        size = count_tokens(LONG)
        assert parse(LONG, max_tokens=size)["text"] == LONG

    def test_over_the_limit_is_refused_with_reject(self):
        with pytest.raises(protocol.SummaryInvalid, match="over 20 tokens"):
            parse(LONG, max_tokens=20)

    def test_over_the_limit_is_refused_with_an_unknown_policy(self):
        with pytest.raises(protocol.SummaryInvalid):
            parse(LONG, max_tokens=20, length_policy="truncate")

    def test_over_the_limit_is_cut_to_whole_words_with_accept_bounded(self):
        summary = parse(LONG, max_tokens=20, length_policy="accept_bounded")
        text = summary["text"]
        assert summary["format"] == "plain_text"
        assert text
        assert count_tokens(text) <= 20
        kept = text.split(" ")
        assert kept == LONG.split(" ")[: len(kept)]
        assert count_tokens(" ".join(LONG.split(" ")[: len(kept) + 1])) > 20

    def test_within_the_limit_accept_bounded_changes_nothing(self):
        text = "Mira waits.\n\nAnn leaves."
        assert parse(text, length_policy="accept_bounded")["text"] == text

    @SETTINGS
    @given(
        text_words=st.lists(words, min_size=1, max_size=60),
        max_tokens=st.integers(min_value=1, max_value=40),
    )
    def test_property_accept_bounded_keeps_the_longest_prefix_of_whole_words(
        self, text_words, max_tokens
    ):
        assume(count_tokens(text_words[0]) <= max_tokens)
        text = " ".join(text_words)
        summary = parse(text, max_tokens=max_tokens, length_policy="accept_bounded")
        kept = summary["text"].split(" ")
        assert kept == text_words[: len(kept)]
        assert count_tokens(summary["text"]) <= max_tokens
        if len(kept) < len(text_words):
            assert count_tokens(" ".join(text_words[: len(kept) + 1])) > max_tokens
        else:
            assert summary["text"] == text

    def test_accept_bounded_cuts_text_without_spaces_between_characters(self):
        text = "米拉在港口等待着她的兄弟回来，潮水拍打着古老的石墙。" * 10
        assert count_tokens(text) > 50
        summary = parse(text, max_tokens=50, length_policy="accept_bounded")
        assert summary["text"] and text.startswith(summary["text"])
        assert count_tokens(summary["text"]) <= 50

    def test_accept_bounded_keeps_line_breaks(self):
        text = "First fact here.\nSecond fact here.\n" * 40
        summary = parse(text, max_tokens=30, length_policy="accept_bounded")
        assert "\n" in summary["text"] and text.startswith(summary["text"])


def answer(**values) -> str:
    data = {"canonical": ["a fact"], "interaction": ["calm"], "open_threads": []}
    data.update(values)
    return json.dumps({k: v for k, v in data.items() if v is not ...})


class TestParseStructuredJson:
    def test_a_valid_answer(self):
        assert parse(answer(), "structured_json") == {
            "format": "structured_json",
            "canonical": ["a fact"],
            "interaction": ["calm"],
            "open_threads": [],
        }

    def test_items_are_stripped_and_blank_items_dropped(self):
        text = answer(canonical=["  a fact ", "", "   "], open_threads=["\n", " thread"])
        summary = parse(text, "structured_json")
        assert summary["canonical"] == ["a fact"]
        assert summary["open_threads"] == ["thread"]

    @pytest.mark.parametrize("text", ["not json", "", "{", "[1, 2]", '"text"', "null", "3"])
    def test_not_an_object_is_refused(self, text):
        with pytest.raises(protocol.SummaryInvalid):
            parse(text, "structured_json")

    @pytest.mark.parametrize("key", ["canonical", "interaction", "open_threads"])
    def test_a_missing_key_is_refused(self, key):
        with pytest.raises(protocol.SummaryInvalid, match="needs canonical"):
            parse(answer(**{key: ...}), "structured_json")

    def test_an_extra_key_is_refused(self):
        with pytest.raises(protocol.SummaryInvalid, match="needs canonical"):
            parse(answer(mood=["calm"]), "structured_json")

    @pytest.mark.parametrize("value", ["a fact", None, {"a": "b"}, 3, True])
    @pytest.mark.parametrize("key", ["canonical", "interaction", "open_threads"])
    def test_a_value_that_is_not_a_list_is_refused(self, key, value):
        with pytest.raises(protocol.SummaryInvalid, match=f"{key} must be a list of strings"):
            parse(answer(**{key: value}), "structured_json")

    @pytest.mark.parametrize("item", [3, None, ["nested"], {"a": "b"}, False])
    def test_an_item_that_is_not_a_string_is_refused(self, item):
        with pytest.raises(protocol.SummaryInvalid, match="interaction must be a list"):
            parse(answer(interaction=["fine", item]), "structured_json")

    def test_at_the_limit_is_accepted(self):
        text = answer(canonical=[LONG])
        size = count_tokens(cp.summary_text(parse(text, "structured_json", max_tokens=10_000)))
        assert parse(text, "structured_json", max_tokens=size)["canonical"] == [LONG]

    @pytest.mark.parametrize("policy", ["reject", "accept_bounded"])
    def test_over_the_limit_is_refused(self, policy):
        with pytest.raises(protocol.SummaryInvalid, match="over 20 tokens"):
            parse(answer(canonical=[LONG]), "structured_json", max_tokens=20, length_policy=policy)

    def test_the_limit_counts_the_text_the_actor_reads(self):
        text = answer(canonical=["x"], interaction=[], open_threads=[])
        summary = parse(text, "structured_json")
        size = count_tokens(cp.summary_text(summary))  # labels and bullets included
        assert size > count_tokens("x")
        with pytest.raises(protocol.SummaryInvalid):
            parse(text, "structured_json", max_tokens=size - 1)

    @SETTINGS
    @given(
        st.fixed_dictionaries(
            {
                "canonical": st.lists(st.text(max_size=15), max_size=4),
                "interaction": st.lists(st.text(max_size=15), max_size=4),
                "open_threads": st.lists(st.text(max_size=15), max_size=4),
            }
        )
    )
    def test_property_valid_answers_are_kept_stripped(self, data):
        if not any(item.strip() for items in data.values() for item in items):
            with pytest.raises(protocol.SummaryInvalid):
                parse(json.dumps(data), "structured_json", max_tokens=100_000)
            return
        summary = parse(json.dumps(data), "structured_json", max_tokens=100_000)
        assert summary["format"] == "structured_json"
        for key, items in data.items():
            assert summary[key] == [item.strip() for item in items if item.strip()]

    def test_the_parsed_summary_verifies_as_a_checkpoint_summary(self):
        summary = parse(answer(), "structured_json", max_tokens=50)
        history = conversation()
        checkpoint = make_checkpoint(history, 0, 3, summary=summary)
        assert check(checkpoint, history, output_format="structured_json", max_summary_tokens=50).ok


def test_the_next_turn_is_due_when_this_prompt_reply_and_input_pass_the_trigger():
    assert budgets.due_next(700, 30, 38, 768) is False  # 768 is not past 768
    assert budgets.due_next(700, 30, 39, 768) is True
    assert budgets.due_next(0, 0, 0, 0) is False


def test_a_successor_chains_the_fingerprint_when_its_first_message_left_the_history():
    class M:
        def __init__(self, i: int) -> None:
            self.id, self.role, self.content = f"m{i}", "user" if i % 2 else "assistant", str(i)

    history = [M(i) for i in range(10)]
    first = cp.successor(
        None, history, history[:4], {"format": "plain_text", "text": "a"}, config_fp="f", expected=0
    )
    assert (first.version, first.chain, first.covered_count) == (1, None, 4)
    assert first.fingerprint == cp.fingerprint(history[:4])
    later = history[4:]  # the first covered message is gone from the window
    second = cp.successor(
        first, later, later[:2], {"format": "plain_text", "text": "b"}, config_fp="f", expected=1
    )
    assert (second.version, second.chain, second.first_id, second.last_id) == (2, 1, "m0", "m5")
    assert second.covered_count == 6 and second.fingerprint != first.fingerprint


def test_split_keeps_the_last_groups_and_groups_explicitly_by_the_turn_that_wrote_them():
    @dataclass(frozen=True)
    class M:
        id: str
        role: str
        content: str = "x"

    history = [M("g", "assistant"), M("u1", "user"), M("a1", "assistant"), M("a1b", "assistant")]
    history += [M("u2", "user"), M("a2", "assistant"), M("u3", "user")]
    folded, kept = grouping.split(history, "selected_turns", 2)
    assert [m.id for m in folded] == ["g", "u1", "a1", "a1b"]
    assert [m.id for m in kept] == ["u2", "a2", "u3"]
    explicit = grouping.split(history, "explicit_groups", 2)
    assert (explicit[0], explicit[1]) == (folded, kept)  # a stored turn: a message and replies
    assert grouping.split(history, "selected_turns", 0) == (history, [])
    assert grouping.split(history, "selected_turns", 100) == ([], history)


def test_a_candidate_shrinks_by_whole_groups_from_the_end_its_policy_gives_up():
    groups = grouping.group([m for i in range(5) for m in (user(f"u{i}"), bot(f"a{i}"))])

    def ten(group) -> int:  # every group costs 10 tokens here
        return 10

    # too large by 25 tokens: three groups go, the newest (default) or the oldest
    assert grouping.shrink(groups, 25, ten, recent=False) == groups[:2]
    assert grouping.shrink(groups, 25, ten, recent=True) == groups[3:]
    # at least one group goes, and never the last one while there are several
    assert grouping.shrink(groups, 0, ten, recent=False) == groups[:4]
    assert grouping.shrink(groups, 1000, ten, recent=True) == groups[4:]
    # a single group too large leaves no candidate
    assert grouping.shrink(groups[:1], 5, ten, recent=False) == []
    assert grouping.shrink([], 5, ten, recent=True) == []


@given(count=st.integers(1, 12), excess=st.integers(0, 200), recent=st.booleans())
@SETTINGS
def test_a_smaller_candidate_is_a_part_of_the_last_one_at_its_kept_end(count, excess, recent):
    groups = grouping.group([user(i, "x " * (i + 1)) for i in range(count)])
    smaller = grouping.shrink(groups, excess, lambda g: len(g.messages[0].content), recent=recent)
    assert len(smaller) < len(groups) and (smaller or count == 1)
    assert smaller == (groups[len(groups) - len(smaller) :] if recent else groups[: len(smaller)])


def _chained_versions():
    """v1 over m0..m3; v2 saved when m0 had left the window (a chained fingerprint) over
    m4..m7; v3 an operator's edit of v2 (the same messages)."""
    history = [user(f"m{i}") if i % 2 == 0 else bot(f"m{i}") for i in range(10)]
    text = {"format": "plain_text", "text": "s"}
    first = cp.successor(None, history, history[:4], text, config_fp="f", expected=0)
    second = cp.successor(first, history[2:], history[4:8], text, config_fp="f", expected=1)
    edited = replace(second, version=3, chain=2, summary={"format": "plain_text", "text": "e"})
    return history, {1: first, 2: second, 3: edited}


def test_intact_checks_every_covered_message_through_chained_versions():
    history, versions = _chained_versions()
    assert versions[2].fingerprint != cp.fingerprint(history[:8])  # chained
    for version in (1, 2, 3):
        assert cp.intact(versions[version], history, versions.get).ok
    # an edit of a message the window no longer holds: the chained versions see it
    changed = [*history[:1], replace(history[1], content="edited"), *history[2:]]
    assert not cp.intact(versions[3], changed, versions.get).ok
    assert cp.intact(versions[3], changed, versions.get).reason == "covered_content_changed"
    # an edit in what v2 added breaks v2 and v3, not v1
    later = [*history[:5], replace(history[5], content="edited"), *history[6:]]
    assert [cp.intact(versions[v], later, versions.get).ok for v in (1, 2, 3)] == [
        True,
        False,
        False,
    ]
    # an edit after the covered end changes nothing
    after = [*history[:9], replace(history[9], content="edited")]
    assert cp.intact(versions[3], after, versions.get).ok
    # a deleted covered end; a version whose chain cannot be followed
    gone = cp.intact(versions[2], history[:6], versions.get)
    assert (gone.ok, gone.reason) == (False, "covered_end_missing")
    assert not cp.intact(versions[2], history, {}.get).ok
    # a message inserted between two covered ones
    inserted = [*history[:6], user("new"), *history[6:]]
    assert not cp.intact(versions[2], inserted, versions.get).ok
