"""The archive reader's checks and the id remapping, pure and fuzzed."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.backup.engine import manifest as manifest_format
from console.backup.engine import reader
from console.backup.engine.errors import ArchiveRefused, ArchiveTooLarge
from console.backup.engine.limits import Limits
from console.backup.engine.remap import Remapper

LABEL = "roleplay.Preset"
ROW = {"id": "0f0e0d0c-0b0a-4908-8706-050403020100", "name": "p"}


def manifest(**over) -> dict:
    base = manifest_format.build(
        tenant_id="11111111-2222-4333-8444-555555555555",
        tenant_name="t",
        created_at="2026-01-01T00:00:00+00:00",
        tables={LABEL: {"rows": 1, "sha256": "0" * 64}},
        files={},
    )
    base.update(over)
    return base


def archive(entries: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return out.getvalue()


def good(extra: list | None = None, rows: bytes | None = None) -> bytes:
    return archive(
        [
            ("manifest.json", json.dumps(manifest()).encode()),
            (
                f"tables/{LABEL}.jsonl",
                rows if rows is not None else json.dumps(ROW).encode() + b"\n",
            ),
            *(extra or []),
        ]
    )


def test_a_good_archive_reads():
    read = reader.read(good())
    assert read.tables[LABEL] == [ROW]


@pytest.mark.parametrize(
    "data",
    [b"not a zip at all", good()[:-40], good()[:200], b"PK\x03\x04" + b"\x00" * 100, b""],
    ids=["not-zip", "truncated-end", "truncated-middle", "bad-header", "empty"],
)
def test_not_a_readable_zip_is_refused(data):
    with pytest.raises(ArchiveRefused) as caught:
        reader.read(data)
    assert caught.value.code == "archive_invalid"


@pytest.mark.parametrize(
    "name",
    ["../evil", "/abs/path", "tables\\x.jsonl", "a/../../b", "C:/win", "files/./x", "tables//x"],
)
def test_path_traversal_names_are_refused(name):
    with pytest.raises(ArchiveRefused):
        reader.read(good([(name, b"x")]))


def test_duplicate_entries_are_refused():
    with pytest.warns(UserWarning), pytest.raises(ArchiveRefused, match="twice"):
        reader.read(good([(f"tables/{LABEL}.jsonl", b"{}\n")]))


def test_another_format_version_is_refused():
    data = archive([("manifest.json", json.dumps(manifest(version=2)).encode())])
    with pytest.raises(ArchiveRefused) as caught:
        reader.read(data)
    assert caught.value.code == "archive_version"


def test_a_zip_bomb_stops_at_the_cap():
    bomb = archive(
        [
            ("manifest.json", json.dumps(manifest()).encode()),
            (f"tables/{LABEL}.jsonl", b" " * (8 << 20)),
        ]
    )
    with pytest.raises(ArchiveTooLarge):
        reader.read(bomb, Limits(max_total_bytes=1 << 20))
    with pytest.raises(ArchiveTooLarge):
        reader.read(bomb, Limits(max_ratio=10))


def test_too_many_entries_are_refused():
    with pytest.raises(ArchiveTooLarge):
        reader.read(good([(f"files/{i:064x}", b"x") for i in range(5)]), Limits(max_entries=3))


def test_a_zip_that_lies_about_its_sizes_stops_at_the_stated_size():
    data = bytearray(good())
    # shrink the stated uncompressed size of the table entry in the central directory
    name = f"tables/{LABEL}.jsonl".encode()
    at = data.rfind(b"PK\x01\x02", 0, data.rfind(name))
    data[at + 24 : at + 28] = (5).to_bytes(4, "little")
    with pytest.raises((ArchiveTooLarge, ArchiveRefused)):
        reader.read(bytes(data))


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": "\\ud800"}',
        b'{"id": "a\\u0000b"}',
        b'{"n": 1' + b"0" * 50 + b"}",
        b'{"n": NaN}',
        b'{"n": 1e999}',
        b"[1, 2]",
        b"\xff\xfe",
        b'{"\\u0000": 1}',
    ],
    ids=["lone-surrogate", "nul", "huge-int", "nan", "inf", "not-object", "not-utf8", "nul-key"],
)
def test_bad_rows_are_refused(line):
    with pytest.raises(ArchiveRefused):
        reader.read(good(rows=line + b"\n"))


def test_row_counts_and_tables_must_match_the_manifest():
    with pytest.raises(ArchiveRefused, match="row count"):
        reader.read(good(rows=json.dumps(ROW).encode() + b"\n" + json.dumps(ROW).encode() + b"\n"))
    with pytest.raises(ArchiveRefused, match="tables do not match"):
        reader.read(archive([("manifest.json", json.dumps(manifest()).encode())]))


def test_a_file_must_match_its_hash():
    m = manifest(files={"t/x.png": "a" * 64})
    data = archive(
        [
            ("manifest.json", json.dumps(m).encode()),
            (f"tables/{LABEL}.jsonl", json.dumps(ROW).encode()),
            ("files/" + "a" * 64, b"other"),
        ]
    )
    with pytest.raises(ArchiveRefused, match="hash"):
        reader.read(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_nasty_bytes_anywhere_are_a_coded_refusal_or_a_read(data):
    """Any byte of a good archive replaced, cut or inserted: a clean read or a coded error,
    never another exception."""
    raw = bytearray(good())
    at = data.draw(st.integers(0, len(raw) - 1))
    action = data.draw(st.sampled_from(["replace", "cut", "insert"]))
    nasty = data.draw(st.binary(min_size=1, max_size=8))
    if action == "replace":
        raw[at : at + len(nasty)] = nasty
    elif action == "cut":
        raw = raw[:at]
    else:
        raw[at:at] = nasty
    try:
        reader.read(bytes(raw))
    except (ArchiveRefused, ArchiveTooLarge) as exc:
        assert exc.code in ("archive_invalid", "archive_version", "archive_too_large")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(), max_size=5),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=10,
    ),
)
def test_nasty_rows_are_a_coded_refusal_or_a_read(keys, value):
    line = json.dumps({"id": value, **{k: value for k in keys}}).encode()
    try:
        reader.read(good(rows=line + b"\n"))
    except ArchiveRefused as exc:
        assert exc.code == "archive_invalid"


def test_remap_rewrites_every_uuid_it_knows_and_reports_the_rest():
    old, new, stray = (
        "0f0e0d0c-0b0a-4908-8706-050403020100",
        "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        "99999999-9999-4999-8999-999999999999",
    )
    remapper = Remapper({old: new}, {"roleplay.ModelCall": {5: 50}})
    value = {"scope": f"character:{old.upper()}", old: [old, stray], "n": 5}
    assert remapper.json(value) == {"scope": f"character:{new}", new: [new, stray], "n": 5}
    assert remapper.unmapped == {stray}
    ints = remapper.int_paths(
        {"inputs": {"entry_ids": [5, 6, True]}}, {"inputs.entry_ids[]": "roleplay.ModelCall"}
    )
    assert ints == {"inputs": {"entry_ids": [50, 6, True]}}
    assert "roleplay.ModelCall:6" in remapper.unmapped
    assert remapper.int_paths([5], {"[]": "roleplay.ModelCall"}) == [50]
    assert remapper.int_paths(
        {"inputs": {"entries": [{"id": 5}]}}, {"inputs.entries[].id": "roleplay.ModelCall"}
    ) == {"inputs": {"entries": [{"id": 50}]}}


@pytest.mark.parametrize("nasty", [b"\xff", b"\x00", b"\x80"])
def test_every_byte_position_replaced_is_a_coded_refusal_or_a_read(nasty):
    """Exhaustive beside the fuzz: each position of a good archive, one nasty byte."""
    raw = good()
    for at in range(len(raw)):
        changed = raw[:at] + nasty + raw[at + 1 :]
        try:
            reader.read(changed)
        except (ArchiveRefused, ArchiveTooLarge):
            pass
