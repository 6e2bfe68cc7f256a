"""The prompt compiler: only explicit prompt text from projected nodes, by region then plan
order whatever the finishing order, system role, the size caps at ±1. Pure."""

from __future__ import annotations

from roleplay.workflows.engine import compiler
from roleplay.workflows.engine.compiler import compile_context
from roleplay.workflows.engine.contracts import (
    CapabilityValue,
    Node,
    NodeOutput,
    Plan,
    WorkflowResult,
)


def node(node_id: str, project_to: str = "turn_context") -> Node:
    return Node(id=node_id, capability=f"cap_{node_id}", project_to=project_to)  # type: ignore[arg-type]


def result(outputs: dict[str, CapabilityValue], status: str = "succeeded") -> WorkflowResult:
    return WorkflowResult(
        status=status,  # type: ignore[arg-type]
        outputs={k: NodeOutput(k, f"cap_{k}", v) for k, v in outputs.items()},
        traces=[],
    )


def text(content: str | None, value: object = None) -> CapabilityValue:
    return CapabilityValue(
        value=value if value is not None else {"raw": "data"}, prompt_content=content
    )


def test_only_prompt_content_of_projected_nodes_becomes_blocks():
    plan = Plan("s", (node("rule", "none"), node("scene"), node("raw"), node("blank")))
    done = result(
        {
            "rule": text("Entry needs a pass."),
            "scene": text("The guard checks for a pass; the key is not one."),
            "raw": text(None, value={"secret": "only data"}),
            "blank": text("   "),
        }
    )
    compiled = compile_context(plan, done)
    assert [(b.node_id, b.role, b.region) for b in compiled.blocks] == [
        ("scene", "system", "turn_context")
    ]
    assert compiled.turn_context == "The guard checks for a pass; the key is not one."
    assert compiled.foundation_context == ""
    assert "only data" not in compiled.turn_context and "Entry" not in compiled.turn_context


def test_blocks_are_ordered_by_region_then_plan_order_not_by_finishing_order():
    plan = Plan(
        "s",
        (
            node("t1"),
            node("f1", "foundation_context"),
            node("t2"),
            node("f2", "foundation_context"),
        ),
    )
    # outputs in the order the nodes happened to finish
    done = result({"t2": text("T2"), "f2": text("F2"), "t1": text("T1"), "f1": text("F1")})
    compiled = compile_context(plan, done)
    assert [b.node_id for b in compiled.blocks] == ["f1", "f2", "t1", "t2"]
    assert compiled.foundation_context == "F1\n\nF2"
    assert compiled.turn_context == "T1\n\nT2"
    assert compile_context(plan, done) == compiled  # deterministic


def test_a_failed_node_has_no_block_and_the_rest_still_compile():
    plan = Plan("s", (node("failed"), node("ok")))
    compiled = compile_context(plan, result({"ok": text("fine")}, status="failed"))
    assert [b.node_id for b in compiled.blocks] == ["ok"]


def test_a_block_is_cut_at_its_cap():
    plan = Plan("s", (node("a"), node("b")))
    at_cap = "a" * compiler.MAX_BLOCK_CHARS
    over = "b" * (compiler.MAX_BLOCK_CHARS + 1)
    compiled = compile_context(plan, result({"a": text(at_cap), "b": text(over)}))
    first, second = compiled.blocks
    assert first.content == at_cap and not first.truncated
    assert len(second.content) == compiler.MAX_BLOCK_CHARS and second.content.endswith("…")
    assert second.truncated


def test_the_total_cap_cuts_the_crossing_block_and_drops_what_cannot_fit():
    size = compiler.MAX_BLOCK_CHARS
    full = compiler.MAX_TOTAL_CHARS // size  # whole blocks that fit
    ids = [f"n{i}" for i in range(full + 3)]
    plan = Plan("s", tuple(node(i) for i in ids))
    compiled = compile_context(plan, result({i: text("x" * size) for i in ids}))
    total = sum(len(b.content) for b in compiled.blocks)
    assert total == compiler.MAX_TOTAL_CHARS
    left = compiler.MAX_TOTAL_CHARS - full * size
    assert left >= compiler.MIN_BLOCK_CHARS  # with the chosen caps, one block is cut
    assert compiled.blocks[-1].truncated and len(compiled.blocks[-1].content) == left
    assert compiled.dropped == tuple(ids[full + 1 :])


def test_exactly_the_total_fits_and_the_next_character_is_dropped():
    # blocks hold at most MAX_BLOCK_CHARS each: the total is made of several full nodes
    many = compiler.MAX_TOTAL_CHARS // compiler.MAX_BLOCK_CHARS + 1
    ids = [f"n{i}" for i in range(many)]
    sizes = [compiler.MAX_BLOCK_CHARS] * (many - 1)
    sizes.append(compiler.MAX_TOTAL_CHARS - sum(sizes))
    plan = Plan("s", (*[node(i) for i in ids], node("tail")))
    outputs = {i: text("x" * size) for i, size in zip(ids, sizes, strict=True)}
    fitted = compile_context(plan, result({**outputs, "tail": text("y")}))
    assert sum(len(b.content) for b in fitted.blocks) == compiler.MAX_TOTAL_CHARS
    assert not any(b.truncated for b in fitted.blocks)
    assert fitted.dropped == ("tail",)  # 0 characters left: less than MIN_BLOCK_CHARS


def test_unstorable_characters_are_replaced():
    plan = Plan("s", (node("a"),))
    compiled = compile_context(plan, result({"a": text("gate\x00 rule \ud800")}))
    assert compiled.turn_context == "gate\ufffd rule \ufffd"
    compiled.turn_context.encode("utf-8")
