"""The workflow editor's drawing: a scenario's ``workflow`` as boxes and arrows, laid out on
the server (no script library): a node's column is its level (the longest chain of
dependencies before it), its row its place among the nodes of that level in declaration
order, so the drawing reads left to right in the order the planner runs the nodes.

Drawn from the raw JSON, not from a plan, so an invalid workflow is still drawn: a
dependency on a missing node has no arrow, the nodes of a cycle stay in the first column,
and the node the planner or the parser blamed is marked (``error``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BOX_W, BOX_H = 170, 46
GAP_X, GAP_Y = 60, 24
PAD = 12


@dataclass
class GraphNode:
    id: str
    capability: str
    required: bool
    parallel: bool
    project_to: str
    depends_on: list[str]
    level: int = 0
    row: int = 0
    x: int = 0
    y: int = 0
    error: str | None = None

    @property
    def cx_right(self) -> int:
        return self.x + BOX_W

    @property
    def cy(self) -> int:
        return self.y + BOX_H // 2


@dataclass
class Graph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    width: int = 0
    height: int = 0
    box_w: int = BOX_W
    box_h: int = BOX_H

    def edge_paths(self) -> list[dict[str, Any]]:
        """Each arrow as an SVG path from the dependency's right side to the node's left."""
        out = []
        for source, target in self.edges:
            x1, y1 = source.cx_right, source.cy
            x2, y2 = target.x, target.cy
            mid = (x1 + x2) // 2
            out.append(
                {
                    "from": source.id,
                    "to": target.id,
                    "d": f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2 - 2},{y2}",
                }
            )
        return out


def _nodes_of(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, dict):
        return []
    graph = raw.get("executionGraph")
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    return [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def workflow_graph(raw: Any, errors: dict[str, str] | None = None) -> Graph:
    """The drawing of ``raw`` (a scenario's ``workflow``), ``errors`` by node id."""
    errors = errors or {}
    nodes: list[GraphNode] = []
    seen: set[str] = set()
    for item in _nodes_of(raw)[:200]:
        node_id = _text(item.get("id"), "?")
        if node_id in seen:  # a duplicate id is drawn once, marked by the planner's error
            continue
        seen.add(node_id)
        depends = item.get("dependsOn")
        nodes.append(
            GraphNode(
                id=node_id,
                capability=_text(item.get("capability"), "?"),
                required=item.get("required", True) is not False,
                parallel=item.get("parallel") is True,
                project_to=_text(item.get("projectTo"), "turn_context"),
                depends_on=[d for d in depends if isinstance(d, str)]
                if isinstance(depends, list)
                else [],
                error=errors.get(node_id),
            )
        )
    by_id = {n.id: n for n in nodes}
    _levels(nodes, by_id)
    rows: dict[int, int] = {}
    for node in nodes:
        node.row = rows.get(node.level, 0)
        rows[node.level] = node.row + 1
        node.x = PAD + node.level * (BOX_W + GAP_X)
        node.y = PAD + node.row * (BOX_H + GAP_Y)
    edges = [(by_id[d], n) for n in nodes for d in n.depends_on if d in by_id and d != n.id]
    width = PAD * 2 + (max((n.level for n in nodes), default=0) + 1) * (BOX_W + GAP_X) - GAP_X
    height = PAD * 2 + max(rows.values(), default=1) * (BOX_H + GAP_Y) - GAP_Y
    return Graph(nodes, edges, width, height)


def _levels(nodes: list[GraphNode], by_id: dict[str, GraphNode]) -> None:
    """Each node's level: 0 without (known) dependencies, else one more than its deepest
    dependency's; nodes on a cycle keep level 0."""
    level: dict[str, int] = {}
    for _ in range(len(nodes) + 1):
        changed = False
        for node in nodes:
            known = [d for d in node.depends_on if d in by_id and d != node.id]
            if all(d in level for d in known):
                value = 1 + max((level[d] for d in known), default=-1)
                if level.get(node.id) != value:
                    level[node.id] = value
                    changed = True
        if not changed:
            break
    for node in nodes:
        node.level = level.get(node.id, 0)
