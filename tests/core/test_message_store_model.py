"""Property: the message store behaves like a plain list (the seed's in-memory provider).

Random sequences of save / trim / rollback / clear run against the database and against a
list-based reference model; after every step the reads of both must agree.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import selectors as reads
from memory import services as store

ROLES = ["user", "assistant", "system", "tool"]
KINDS = [None, "chat", "control"]


@dataclass
class Row:
    session: str
    ts: int
    role: str
    kind: str | None
    archived: bool = False


class Reference:
    """What seed 001 says each call does, over a list."""

    def __init__(self):
        self.rows: list[Row] = []

    def active(self, session):
        return [r for r in self.rows if r.session == session and not r.archived]

    def history(self, session, limit):
        return self.active(session)[-limit:] if limit else []

    def full(self, session, limit):
        rows = [r for r in self.rows if r.session == session]
        return rows[-limit:] if limit else rows

    def trim(self, session, keep):
        active = self.active(session)
        doomed = active[: max(len(active) - keep, 0)]
        for r in doomed:
            r.archived = True
        return len(doomed)

    def delete(self, session, stamps):
        before = len(self.rows)
        self.rows = [r for r in self.rows if not (r.session == session and r.ts in stamps)]
        return before - len(self.rows)

    def clear(self, session):
        return self.delete(session, {r.ts for r in self.rows if r.session == session})

    def recent(self, limit, exclude_kinds):
        rows = [
            r for r in self.rows
            if not r.archived and r.role in ("user", "assistant")
            and (r.kind is None or r.kind not in exclude_kinds)
        ]  # fmt: skip
        rows.sort(key=lambda r: r.ts)
        return rows[-limit:] if limit else []


operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("save"), st.sampled_from("ab"), st.sampled_from(ROLES), st.sampled_from(KINDS)
        ),
        st.tuples(st.just("trim"), st.sampled_from("ab"), st.integers(-1, 6)),
        st.tuples(st.just("rollback"), st.sampled_from("ab"), st.lists(st.integers(0, 30))),
        st.tuples(st.just("clear"), st.sampled_from("ab")),
    ),
    max_size=25,
)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations, limit=st.integers(1, 8))
def test_store_matches_the_reference_model(db, ops, limit):
    from console.models import Tenant

    # Every example gets its own tenant: the examples share one test transaction.
    tenant = Tenant.objects.create(name=f"model-{uuid.uuid4().hex}")
    sessions = {name: f"session-{name}" for name in "ab"}
    model = Reference()
    saved: list[int] = []
    for op in ops:
        kind, name = op[0], op[1]
        session = sessions[name]
        if kind == "save":
            m = store.save_message(tenant, session, role=op[2], content="x", kind=op[3])
            model.rows.append(Row(session, m.ts, op[2], op[3]))
            saved.append(m.ts)
        elif kind == "trim":
            assert store.trim_history(tenant, session, op[2]) == model.trim(session, max(op[2], 0))
        elif kind == "rollback":
            stamps = {saved[i] for i in op[2] if i < len(saved)}
            assert store.delete_messages_by_timestamps(tenant, session, stamps) == model.delete(
                session, stamps
            )
        else:
            assert store.clear_session(tenant, session) == model.clear(session)
        for session in sessions.values():
            got = [m.ts for m in reads.get_history(tenant, session, limit)]
            assert got == [r.ts for r in model.history(session, limit)]
            got_full = [(m.ts, m.archived) for m in reads.get_full_history(tenant, session, limit)]
            assert got_full == [(r.ts, r.archived) for r in model.full(session, limit)]
    recent = reads.get_recent_across_sessions(tenant, limit=limit, exclude_kinds=["control"])
    assert [(s, m.ts) for s, m in recent] == [
        (r.session, r.ts) for r in model.recent(limit, {"control"})
    ]
