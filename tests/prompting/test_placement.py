"""Context placement: the seed's example and each rule of the module docstring."""

from __future__ import annotations

import json

import pytest

from roleplay.prompting import placement as p
from roleplay.prompting.placement import (
    Block,
    History,
    Layout,
    Placement,
    PlacementError,
    PlacementInputError,
    Span,
    place_context_blocks,
    placement_capabilities,
)
from worldbook.engine.schema import SelectRequest


def system(text: str) -> dict:
    return {"role": "system", "content": text}


def contents(result) -> list[str]:
    return [m["content"] for m in result.messages]


def test_the_seed_example_puts_the_gate_rule_after_the_character():
    result = place_context_blocks(
        messages=[
            {"role": "system", "content": "你扮演城门守卫。"},
            {"role": "user", "content": "我递出铜钥匙。"},
        ],
        layout=Layout(character=Span(0, 1)),
        blocks=[
            Block(
                id="gate-rule",
                position="after_character",
                order=0,
                role="system",
                content="进入禁区需要手令；铜钥匙不能替代手令。",
            )
        ],
    )
    assert list(result.messages) == [
        {"role": "system", "content": "你扮演城门守卫。"},
        {"role": "system", "content": "进入禁区需要手令；铜钥匙不能替代手令。"},
        {"role": "user", "content": "我递出铜钥匙。"},
    ]
    assert result.placements == (
        Placement("gate-rule", "after_character", message_index=1, role="system", merged=False),
    )


# A prompt with every region: character, examples, an author's note hosting an outlet, and a
# history of three messages (the note is not history).
MESSAGES = [
    system("CHAR"),
    system("EX"),
    {"role": "user", "content": "H1", "id": "m1"},
    {"role": "system", "content": "NOTE [{{outlet::lore}}]"},
    {"role": "assistant", "content": "H2", "id": "m2"},
    {"role": "user", "content": "H3", "id": "m3"},
]
FULL = Layout(
    character=Span(0, 1),
    examples=Span(1, 2),
    conversation=History((2, 4, 5), empty_index=2),
    author_note=3,
    outlets={"lore": 3},
)


def test_all_eight_positions():
    blocks = [
        Block("bc", "before_character", "bc"),
        Block("ac", "after_character", "ac"),
        Block("be", "before_examples", "be"),
        Block("ae", "after_examples", "ae"),
        Block("d0", "at_depth", "d0", depth=0),
        Block("d1", "at_depth", "d1", depth=1, role="user"),
        Block("top", "author_note_top", "top", role="assistant"),
        Block("bottom", "author_note_bottom", "bottom"),
        Block("lore", "outlet", "lore", outlet_name="lore"),
    ]
    result = place_context_blocks(MESSAGES, FULL, blocks)
    assert contents(result) == [
        "bc", "CHAR", "ac", "be", "EX", "ae", "H1", "top\nNOTE [lore]\nbottom", "H2", "d1", "H3",
        "d0",
    ]  # fmt: skip
    where = {r.block_id: (r.message_index, r.role, r.merged) for r in result.placements}
    assert where == {
        "bc": (0, "system", False),
        "ac": (2, "system", False),
        "be": (3, "system", False),
        "ae": (5, "system", False),
        "d0": (11, "system", False),
        "d1": (9, "user", False),
        "top": (7, "system", True),  # merged blocks take the host's role
        "bottom": (7, "system", True),
        "lore": (7, "system", True),
    }
    assert result.messages[6] == MESSAGES[2]  # other keys carried through


@pytest.mark.parametrize(
    "depth, expected",
    [
        (0, ["CHAR", "EX", "H1", "NOTE []", "H2", "H3", "B"]),
        (1, ["CHAR", "EX", "H1", "NOTE []", "H2", "B", "H3"]),
        (2, ["CHAR", "EX", "H1", "NOTE []", "B", "H2", "H3"]),  # right before H2, after the note
        (3, ["CHAR", "EX", "B", "H1", "NOTE []", "H2", "H3"]),
        (50, ["CHAR", "EX", "B", "H1", "NOTE []", "H2", "H3"]),  # beyond: before the earliest
    ],
)
def test_depth_counts_real_history_messages_from_the_end(depth, expected):
    result = place_context_blocks(MESSAGES, FULL, [Block("b", "at_depth", "B", depth=depth)])
    assert contents(result) == expected


@pytest.mark.parametrize("depth", [0, 1, 7])
def test_without_history_every_depth_goes_to_the_empty_index(depth):
    layout = Layout(conversation=History((), empty_index=1))
    result = place_context_blocks(
        [system("A"), system("B")], layout, [Block("x", "at_depth", "X", depth=depth)]
    )
    assert contents(result) == ["A", "X", "B"]


def test_blocks_at_one_point_follow_order_then_id_and_deeper_first():
    blocks = [
        Block("b", "after_character", "b", order=1),
        Block("a", "after_character", "a", order=1),
        Block("c", "after_character", "c", order=-3),
        Block("deep", "at_depth", "deep", depth=9, order=5),
        Block("deeper", "at_depth", "deeper", depth=10, order=9),
        Block("first", "at_depth", "first", depth=3, order=0),
    ]
    result = place_context_blocks(MESSAGES, FULL, blocks)
    assert contents(result)[:4] == ["CHAR", "c", "a", "b"]
    assert contents(result)[5:9] == ["deeper", "deep", "first", "H1"]


def test_region_order_wins_at_shared_points():
    """after_character and before_examples share a point, as do after_examples and a deep
    at_depth; a smaller order never jumps across the boundary."""
    blocks = [
        Block("ac", "after_character", "ac", order=100),
        Block("be", "before_examples", "be", order=-100),
        Block("ae", "after_examples", "ae", order=100),
        Block("deep", "at_depth", "deep", depth=99, order=-100),
    ]
    result = place_context_blocks(MESSAGES, FULL, blocks)
    assert contents(result)[:7] == ["CHAR", "ac", "be", "EX", "ae", "deep", "H1"]


def test_empty_regions_keep_their_place_between_closing_and_opening_regions():
    messages = [system("CHAR"), system("H")]
    layout = Layout(
        character=Span(0, 1),
        examples=Span(1, 1),
        conversation=History((1,), empty_index=1),
    )
    blocks = [
        Block("ae", "after_examples", "ae", order=-9),
        Block("be", "before_examples", "be", order=9),
        Block("ac", "after_character", "ac", order=50),
        Block("d", "at_depth", "d", depth=1, order=-50),
    ]
    result = place_context_blocks(messages, layout, blocks)
    assert contents(result) == ["CHAR", "ac", "be", "ae", "d", "H"]


def test_both_regions_empty_at_one_point_go_character_then_examples():
    layout = Layout(character=Span(0, 0), examples=Span(0, 0))
    blocks = [
        Block("ae", "after_examples", "ae", order=-1),
        Block("be", "before_examples", "be", order=-1),
        Block("ac", "after_character", "ac"),
        Block("bc", "before_character", "bc", order=1),
    ]
    result = place_context_blocks([system("H")], layout, blocks)
    assert contents(result) == ["bc", "ac", "be", "ae", "H"]


def test_author_note_blocks_merge_in_order_and_take_the_host_role():
    messages = [{"role": "user", "content": "note", "name": "n"}]
    blocks = [
        Block("t2", "author_note_top", "t2", order=2),
        Block("t1", "author_note_top", "t1", order=1, role="assistant"),
        Block("b", "author_note_bottom", "b"),
    ]
    result = place_context_blocks(messages, Layout(author_note=0), blocks)
    assert result.messages == ({"role": "user", "content": "t1\nt2\nnote\nb", "name": "n"},)
    assert {r.role for r in result.placements} == {"user"}
    assert all(r.merged and r.message_index == 0 for r in result.placements)


def test_outlets_are_filled_and_an_unused_outlet_vanishes():
    messages = [system("a {{outlet::one}} b {{ Outlet:: two }} c"), system("{{outlet::three}}")]
    layout = Layout(outlets={"one": 0, "two": 0, "three": 1})
    blocks = [
        Block("y", "outlet", "Y", outlet_name="one", order=1),
        Block("x", "outlet", "X", outlet_name=" one ", role="user"),
        Block("z", "outlet", "Z", outlet_name="three"),
    ]
    result = place_context_blocks(messages, layout, blocks)
    assert contents(result) == ["a X\nY b  c", "Z"]
    assert [(r.outlet_name, r.message_index, r.role) for r in result.placements] == [
        ("one", 0, "system"),
        ("one", 0, "system"),
        ("three", 1, "system"),
    ]


def test_outlets_are_filled_before_the_note_is_merged_around_them():
    layout = Layout(author_note=0, outlets={"lore": 0})
    blocks = [
        Block("top", "author_note_top", "TOP"),
        Block("lore", "outlet", "LORE", outlet_name="lore"),
    ]
    result = place_context_blocks([system("[{{outlet::lore}}]")], layout, blocks)
    assert contents(result) == ["TOP\n[LORE]"]


def test_render_block_formats_inserted_and_merged_blocks():
    layout = Layout(character=Span(0, 1), author_note=1)
    blocks = [Block("a", "after_character", "x"), Block("n", "author_note_bottom", "y")]
    result = place_context_blocks(
        [system("C"), system("N")], layout, blocks, render_block=lambda b: f"<{b.id}>{b.content}"
    )
    assert contents(result) == ["C", "<a>x", "N\n<n>y"]


def test_no_blocks_changes_nothing_but_unused_markers():
    messages = [system("a{{outlet::x}}b"), {"role": "user", "content": [{"type": "text"}]}]
    result = place_context_blocks(messages, Layout(outlets={"x": 0}), [])
    assert list(result.messages) == [system("ab"), messages[1]]
    assert result.placements == ()


def test_block_from_a_worldbook_mapping():
    block = Block.from_mapping(
        {
            "id": "b1:e1", "book_id": "b1", "entry_id": "e1", "title": "t", "content": "c",
            "position": "outlet", "depth": 4, "role": "user", "order": 3, "reason": "keyword",
            "outlet_name": "lore",
        }
    )  # fmt: skip
    assert block == Block("b1:e1", "outlet", "c", order=3, depth=4, role="user", outlet_name="lore")


# --- capabilities ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layout, expected",
    [
        (Layout(), ()),
        (Layout(character=Span(0, 1)), ("before_character", "after_character")),
        (Layout(examples=Span(0, 0)), ("before_examples", "after_examples")),
        (Layout(conversation=History((), 0)), ("at_depth",)),
        (Layout(author_note=0), ("author_note_top", "author_note_bottom")),
        (Layout(outlets={"b": 0, "a": 0}), ("outlet:a", "outlet:b")),
        (FULL, (
            "before_character", "after_character", "at_depth", "before_examples",
            "after_examples", "author_note_top", "author_note_bottom", "outlet:lore",
        )),
    ],
)  # fmt: skip
def test_placement_capabilities(layout, expected):
    assert placement_capabilities(layout) == expected


def test_capabilities_are_the_worldbook_strings():
    request = SelectRequest.model_validate(
        {
            "books": [{"book_id": "b"}],
            "query": "q",
            "placement_capabilities": list(placement_capabilities(FULL)),
        }
    )
    assert request.capabilities == frozenset(placement_capabilities(FULL))


# --- errors ---------------------------------------------------------------------------------


def raises(error, code, run):
    with pytest.raises(error) as caught:
        run()
    assert caught.value.code == code
    json.dumps(caught.value.to_dict())
    return caught.value


@pytest.mark.parametrize(
    "block",
    [
        Block("a", "before_character", "x"),
        Block("a", "after_character", "x"),
        Block("a", "before_examples", "x"),
        Block("a", "after_examples", "x"),
        Block("a", "at_depth", "x"),
        Block("a", "author_note_top", "x"),
        Block("a", "author_note_bottom", "x"),
        Block("a", "outlet", "x", outlet_name="absent"),
    ],
)
def test_a_position_without_its_anchor_is_an_error(block):
    layout = Layout(outlets={"other": 0})
    error = raises(
        PlacementError,
        p.ANCHOR_MISSING,
        lambda: place_context_blocks([system("{{outlet::other}}")], layout, [block]),
    )
    assert error.kind == "invalid"
    assert error.details["blocks"][0]["block_id"] == "a"


def test_duplicate_ids_are_an_error():
    blocks = [Block("a", "at_depth", "1"), Block("a", "at_depth", "2")]
    error = raises(
        PlacementError,
        p.DUPLICATE_BLOCK_ID,
        lambda: place_context_blocks([], Layout(conversation=History((), 0)), blocks),
    )
    assert error.details == {"block_ids": ["a"]}


@pytest.mark.parametrize("role", ["tool", "System", "", None])
def test_illegal_roles_are_an_error(role):
    raises(PlacementError, p.ILLEGAL_ROLE, lambda: Block("a", "at_depth", "x", role=role))


@pytest.mark.parametrize(
    "block",
    [
        Block("a", "outlet", "see {{outlet::lore}}", outlet_name="lore"),
        Block("a", "outlet", "{{OUTLET::other}}", outlet_name="lore"),
        Block("a", "at_depth", "{{outlet::lore}}"),
    ],
)
def test_an_outlet_marker_inside_a_block_is_an_error(block):
    layout = Layout(conversation=History((), 0), outlets={"lore": 0})
    raises(
        PlacementError,
        p.NESTED_OUTLET,
        lambda: place_context_blocks([system("{{outlet::lore}}")], layout, [block]),
    )


def test_a_rendered_block_is_checked_for_markers_too():
    layout = Layout(character=Span(0, 0))
    raises(
        PlacementError,
        p.NESTED_OUTLET,
        lambda: place_context_blocks(
            [],
            layout,
            [Block("a", "before_character", "x")],
            render_block=lambda b: "{{outlet::z}}",
        ),
    )


@pytest.mark.parametrize(
    "messages, outlets, code",
    [
        ([system("no marker")], {"lore": 0}, p.OUTLET_MARKER_MISSING),
        ([system("{{outlet::Lore}}")], {"lore": 0}, p.OUTLET_MARKER_MISSING),
        ([system("{{outlet::lore}}{{outlet::lore}}")], {"lore": 0}, p.OUTLET_MARKER_DUPLICATE),
        (
            [system("{{outlet::lore}}"), system("{{outlet::lore}} {{outlet::mem}}")],
            {"lore": 0, "mem": 1},
            p.OUTLET_MARKER_DUPLICATE,
        ),
    ],
)
def test_each_marker_appears_exactly_once_in_its_host(messages, outlets, code):
    raises(
        PlacementError, code, lambda: place_context_blocks(messages, Layout(outlets=outlets), [])
    )


@pytest.mark.parametrize(
    "layout, part",
    [
        (Layout(character=Span(0, 3)), "character.end"),
        (Layout(character=Span(-1, 1)), "character.start"),
        (Layout(examples=Span(3, 3)), "examples.start"),
        (Layout(conversation=History((0, 2), 0)), "conversation.message_indices"),
        (Layout(conversation=History((), 3)), "conversation.empty_index"),
        (Layout(author_note=2), "author_note"),
        (Layout(author_note=True), "author_note"),
        (Layout(outlets={"x": 2}), "outlets.x"),
    ],
)
def test_layout_indices_out_of_range_are_an_error(layout, part):
    error = raises(
        PlacementInputError,
        p.LAYOUT_OUT_OF_RANGE,
        lambda: place_context_blocks([system("a"), system("b")], layout, []),
    )
    assert error.kind == "bad_request"
    assert error.details["part"] == part


@pytest.mark.parametrize(
    "layout",
    [
        Layout(character=Span(2, 1)),
        Layout(character=Span(0, 2), examples=Span(1, 3)),
        Layout(character=Span(0, 3), examples=Span(1, 1)),
        Layout(conversation=History((2, 1), 0)),
        Layout(conversation=History((1, 1), 0)),
        Layout(character=Span(0, 2), conversation=History((1,), 0)),
        Layout(examples=Span(1, 3), conversation=History((), 2)),
        Layout(outlets={" x": 0}),
        Layout(outlets={"": 0}),
    ],
)
def test_malformed_layouts_are_an_error(layout):
    messages = [system("{{outlet::x}}"), system("b"), system("c")]
    raises(
        PlacementInputError, p.LAYOUT_INVALID, lambda: place_context_blocks(messages, layout, [])
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: Block("", "at_depth", "x"),
        lambda: Block("a", "middle", "x"),
        lambda: Block("a", "at_depth", 3),
        lambda: Block("a", "at_depth", "x", depth=-1),
        lambda: Block("a", "at_depth", "x", order=True),
        lambda: Block("a", "at_depth", "x", order=1.5),
        lambda: Block("a", "outlet", "x"),
        lambda: Block("a", "outlet", "x", outlet_name="  "),
        lambda: Block("a", "outlet", "x", outlet_name=3),
    ],
)
def test_malformed_blocks_are_an_error(make):
    raises(PlacementInputError, p.INVALID_BLOCK, make)


def test_other_inputs_are_checked():
    layout = Layout(character=Span(0, 0), author_note=0)
    raises(
        PlacementInputError,
        p.INVALID_BLOCK,
        lambda: place_context_blocks([system("n")], layout, [{"id": "a"}]),
    )
    raises(
        PlacementInputError,
        p.INVALID_BLOCK,
        lambda: place_context_blocks(
            [system("n")], layout, [Block("a", "before_character", "x")], render_block=lambda b: 1
        ),
    )
    raises(
        PlacementInputError,
        p.INVALID_MESSAGE,
        lambda: place_context_blocks([{"role": "system", "content": None}], layout, []),
    )


def test_macro_outlets_feed_the_layout():
    """How assembly chains the engines: expand, declare the outlets the macros saw, place."""
    from roleplay.prompting.macros import MacroContext, expand_macros

    expanded = expand_macros("{{char}} knows: {{outlet::lore}}", MacroContext(char="Mira"))
    messages = [system(expanded.text), {"role": "user", "content": "hi"}]
    layout = Layout(outlets={name: 0 for name in expanded.outlets})
    result = place_context_blocks(
        messages, layout, [Block("gate", "outlet", "the gate is shut", outlet_name="lore")]
    )
    assert contents(result) == ["Mira knows: the gate is shut", "hi"]
