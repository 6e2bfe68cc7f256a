"""``console.scoping.canonical_uuid``: the one reading of an id, shared by ``is_uuid`` and the
chat socket's path (an upper-case or brace-wrapped id names the same conversation)."""

from __future__ import annotations

from console.scoping import canonical_uuid, is_uuid

ID = "0b4f6a0e-55aa-4c1e-9a38-2f0f3c1d9e7b"


def test_canonical_forms():
    assert canonical_uuid(ID.upper()) == ID
    assert canonical_uuid("{" + ID + "}") == ID
    assert canonical_uuid(ID.replace("-", "")) == ID
    assert canonical_uuid("not-an-id") is None and not is_uuid("not-an-id")
    assert is_uuid(ID.upper())
