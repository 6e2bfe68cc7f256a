"""Placement against the plain reference on random valid layouts, and its invariants."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roleplay.prompting.placement import (
    ROLES,
    Block,
    History,
    Layout,
    Span,
    place_context_blocks,
    placement_capabilities,
)
from tests.prompting.placement_reference import reference_place

PROPERTY = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
TEXT = st.text(alphabet="ab \n", max_size=6)
OUTLET_NAMES = ("lore", "memory", "Tools")


@st.composite
def scenarios(draw):
    n = draw(st.integers(0, 9))
    a, b, c, d = sorted(draw(st.lists(st.integers(0, n), min_size=4, max_size=4)))
    spans = [Span(a, b), Span(c, d)]
    if draw(st.booleans()):
        spans.reverse()
    character = spans[0] if draw(st.integers(0, 3)) else None
    examples = spans[1] if draw(st.integers(0, 3)) else None
    regions = [s for s in (character, examples) if s is not None]
    free = [i for i in range(n) if not any(s.start <= i < s.end for s in regions)]
    gaps = [g for g in range(n + 1) if not any(s.start < g < s.end for s in regions)]
    conversation = None
    if draw(st.integers(0, 3)):
        chosen = [i for i in free if draw(st.booleans())]
        conversation = History(tuple(chosen), draw(st.sampled_from(gaps)))
    author_note = draw(st.integers(0, n - 1)) if n and draw(st.booleans()) else None
    outlets = {}
    if n:
        for name in OUTLET_NAMES:
            if draw(st.booleans()):
                outlets[name] = draw(st.integers(0, n - 1))
    layout = Layout(character, examples, conversation, author_note, outlets)

    messages = []
    for i in range(n):
        parts = [draw(TEXT)]
        for name, host in outlets.items():
            if host == i:
                parts += ["{{outlet::" + name + "}}", draw(TEXT)]
        message = {"role": draw(st.sampled_from(ROLES)), "content": "".join(parts), "id": i}
        messages.append(message)

    capabilities = placement_capabilities(layout)
    blocks = []
    if capabilities:
        for i in range(draw(st.integers(0, 12))):
            capability = draw(st.sampled_from(capabilities))
            position, _, outlet = capability.partition(":")
            blocks.append(
                Block(
                    id=draw(st.sampled_from(["x", "y", "z", "w"])) + str(i),
                    position=position,
                    content=draw(TEXT),
                    order=draw(st.integers(-2, 2)),
                    depth=draw(st.integers(0, n + 2)),
                    role=draw(st.sampled_from(ROLES)),
                    outlet_name=outlet or None,
                )
            )
    return messages, layout, blocks


@PROPERTY
@given(scenarios())
def test_the_engine_equals_the_reference(scenario):
    messages, layout, blocks = scenario
    result = place_context_blocks(messages, layout, blocks)
    expected_messages, expected_records = reference_place(messages, layout, blocks)
    assert list(result.messages) == expected_messages
    assert list(result.placements) == expected_records


@PROPERTY
@given(scenarios())
def test_invariants(scenario):
    messages, layout, blocks = scenario
    before = copy.deepcopy(messages)
    result = place_context_blocks(messages, layout, blocks)
    out = result.messages
    assert messages == before  # the input is not changed

    # Every block placed exactly once, each record pointing at its text.
    assert [p.block_id for p in result.placements] == [b.id for b in blocks]
    inserted = {p.message_index for p in result.placements if not p.merged}
    assert len(inserted) == sum(not p.merged for p in result.placements)
    assert len(out) == len(messages) + len(inserted)
    for block, record in zip(blocks, result.placements, strict=True):
        host = out[record.message_index]
        assert record.role == host["role"]
        assert block.content in host["content"]
        if not record.merged:
            assert host == {"role": block.role, "content": block.content}

    # The original messages keep their relative order and their other keys.
    kept = [m for i, m in enumerate(out) if i not in inserted]
    assert [m["id"] for m in kept] == [m["id"] for m in messages]
    hosts = set(layout.outlets.values()) | {layout.author_note}
    for original, now in zip(messages, kept, strict=True):
        assert now["role"] == original["role"]
        if original["id"] not in hosts:
            assert now == original

    # No marker reaches the model; every role is legal.
    assert not any("{{outlet::" in m["content"] for m in out)
    assert all(m["role"] in ROLES for m in out)
