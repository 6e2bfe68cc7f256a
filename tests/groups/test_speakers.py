"""The pure speaker rules of group chats (no database): each mode pinned, seeded."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.groups.engine import (
    Member,
    activate_natural,
    find_member,
    next_speaker,
    pooled_remaining,
)

MIRA, JON, ADA = Member("m", "Mira"), Member("j", "Jon Snow"), Member("a", "Ada")
GROUP = [MIRA, JON, ADA]


def rng(seed=1):
    return random.Random(seed)


def test_natural_mentions_come_first_in_order_of_mention():
    silent = [Member(m.id, m.name, talkativeness=0.0) for m in GROUP]
    order = activate_natural(silent, "Ada, ask Mira what snow is", None, rng())
    assert order == ["a", "m", "j"]  # Ada, then Mira, then Jon (his name's word "snow")


def test_natural_talkativeness_one_activates_everyone_and_zero_nobody_but_a_fallback():
    chatty = [Member(m.id, m.name, talkativeness=1.0) for m in GROUP]
    assert sorted(activate_natural(chatty, "hello", None, rng())) == ["a", "j", "m"]
    shy = [Member(m.id, m.name, talkativeness=0.0) for m in GROUP]
    for seed in range(20):
        assert len(activate_natural(shy, "hello", None, rng(seed))) == 1


def test_natural_fallback_prefers_talkative_members():
    members = [Member("m", "Mira", 0.0), Member("j", "Jon", 1e-12)]
    picked = {activate_natural(members, "hi", None, rng(seed))[0] for seed in range(30)}
    assert picked == {"j"}


def test_natural_never_repeats_the_last_speaker_unless_alone():
    chatty = [Member(m.id, m.name, talkativeness=1.0) for m in GROUP]
    for seed in range(30):
        order = activate_natural(chatty, "Mira!", "m", rng(seed))
        assert "m" not in order
        assert next_speaker("natural", chatty, text="Mira!", speakers=["m"],
                            after_player=False, rng=rng(seed)) != "m"  # fmt: skip
    alone = [MIRA]
    assert next_speaker("natural", alone, speakers=["m"], after_player=False, rng=rng()) == "m"


def test_self_responses_let_the_last_speaker_answer_its_own_reply():
    members = [Member("m", "Mira", 0.0), Member("j", "Jon", 0.0)]
    for mode in ("natural", "pooled"):  # SillyTavern's pooled order ignores the setting
        picked = {
            next_speaker(mode, members, text="Mira!", speakers=["j", "m"], after_player=False,
                         self_responses=True, rng=rng(seed))
            for seed in range(30)
        }  # fmt: skip
        assert picked == ({"m"} if mode == "natural" else {"j"})
        without = {
            next_speaker(mode, members, text="Mira!", speakers=["j", "m"], after_player=False,
                         rng=rng(seed))
            for seed in range(30)
        }  # fmt: skip
        assert without == {"j"}


def test_after_the_players_message_the_previous_speaker_may_answer():
    members = [Member("m", "Mira", 0.0), Member("j", "Jon", 0.0)]
    found = next_speaker("natural", members, text="Mira?", speakers=["m"], rng=rng())
    assert found == "m"


def test_natural_is_seeded():
    picks = [next_speaker("natural", GROUP, text="hi", rng=rng(7)) for _ in range(5)]
    assert len(set(picks)) == 1


def test_list_goes_in_order_after_the_last_speaker_and_skips_the_muted():
    assert next_speaker("list", GROUP, rng=rng()) == "m"
    assert next_speaker("list", GROUP, speakers=["m"], rng=rng()) == "j"
    assert next_speaker("list", GROUP, speakers=["m", "j", "a"], rng=rng()) == "m"
    muted = [MIRA, Member("j", "Jon", muted=True), ADA]
    assert next_speaker("list", muted, speakers=["m"], rng=rng()) == "a"


def test_manual_chooses_nobody():
    assert next_speaker("manual", GROUP, text="Mira", rng=rng()) is None


def test_muted_members_are_never_chosen_automatically():
    muted = [Member("m", "Mira", 1.0, muted=True), Member("j", "Jon", 0.0), ADA]
    for mode in ("natural", "list", "pooled"):
        for seed in range(25):
            chosen = next_speaker(mode, muted, text="Mira, Mira", speakers=[], rng=rng(seed))
            assert chosen in {"j", "a"}
    everyone_muted = [Member(m.id, m.name, muted=True) for m in GROUP]
    assert next_speaker("natural", everyone_muted, rng=rng()) is None


def test_pooled_remaining_resets_once_everyone_spoke():
    assert pooled_remaining(GROUP, []) == ["m", "j", "a"]
    assert pooled_remaining(GROUP, ["m", None, "j"]) == ["a"]
    assert pooled_remaining(GROUP, ["m", "j", "a"]) == ["m", "j", "a"]
    assert pooled_remaining(GROUP, ["m", "j", "a", "j"]) == ["m", "a"]


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 6), seed=st.integers(0, 10_000), rounds=st.integers(1, 4))
def test_pooled_never_repeats_before_everyone_spoke(size, seed, rounds):
    members = [Member(str(i), f"M{i}") for i in range(size)]
    speakers: list[str | None] = []
    random_ = rng(seed)
    for _ in range(size * rounds):
        speakers.append(next_speaker("pooled", members, speakers=speakers,
                                     after_player=False, rng=random_))  # fmt: skip
    for start in range(0, len(speakers), size):
        assert sorted(speakers[start : start + size]) == sorted(m.id for m in members)
    if size > 1:
        assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))


def test_force_talk_finds_a_member_by_id_name_or_unique_prefix_even_muted():
    jon = Member("j", "Jon")
    members = [Member("m", "Mira", muted=True), jon, Member("x", "Jonas")]
    assert find_member(members, "mira") == members[0]
    assert find_member(members, "m") == members[0]
    assert find_member(members, "Jon") == jon
    assert find_member(members, "Jo") is None  # Jon and Jonas
    assert find_member(members, "Jona") == members[2]
    assert find_member(members, "  ") is None
