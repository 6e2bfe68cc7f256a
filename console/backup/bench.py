"""``bench_backup``: how long a tenant of ``messages`` chat messages takes to export, to
restore into a new tenant and to verify (every table's count and hash), and the archive's
size. The tenant is made by importing SillyTavern chat files (``import_chat``, at most 50,000
messages a conversation) and both tenants are deleted afterwards."""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from pathlib import Path

from console.models import Player, Tenant
from console.services import create_tenant

from . import verify
from .export import export_tenant
from .restore import restore_archive

PER_CHAT = 50_000


def _chat(count: int, start: int) -> bytes:
    lines = [json.dumps({"user_name": "Bench", "character_name": "Mira"})]
    for i in range(start, start + count):
        user = i % 2 == 0
        lines.append(
            json.dumps(
                {
                    "name": "Bench" if user else "Mira",
                    "is_user": user,
                    "mes": f"line {i}: the lighthouse keeper counts the ships again.",
                }
            )
        )
    return "\n".join(lines).encode()


def seed(tenant, messages: int) -> None:
    from roleplay.conversations.services.chat_import import import_chat
    from roleplay.models import Character

    character = Character.objects.create(tenant=tenant, name="Mira", first_message="Hello.")
    player = Player.objects.create(tenant=tenant, external_id="bench-player")
    done = 0
    while done < messages:
        count = min(PER_CHAT, messages - done)
        import_chat(
            tenant, _chat(count, done), character=character, player=player, title=f"bench {done}"
        )
        done += count


def measure(messages: int) -> dict:
    label = secrets.token_hex(4)
    source = create_tenant(f"bench-backup-{label}")
    target = None
    try:
        seed(source, messages)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "backup.zip"
            started = time.perf_counter()
            with path.open("wb") as out:
                exported = export_tenant(source, out)
            export_s = time.perf_counter() - started
            size = path.stat().st_size
            target = create_tenant(f"bench-restored-{label}")
            started = time.perf_counter()
            with path.open("rb") as data:
                restored = restore_archive(data, target, check=False)
            restore_s = time.perf_counter() - started
        started = time.perf_counter()
        checks = verify.compare_tenants(source, target, restored.ids)
        verify_s = time.perf_counter() - started
    finally:
        Tenant.objects.filter(pk__in=[t.pk for t in (source, target) if t is not None]).delete()
    return {
        "messages": messages,
        "rows": exported.rows,
        "archive_bytes": size,
        "export_s": round(export_s, 3),
        "restore_s": round(restore_s, 3),
        "verify_s": round(verify_s, 3),
        "tables_equal": all(c.equal for c in checks),
        "rows_per_s_export": round(exported.rows / export_s) if export_s else None,
        "rows_per_s_restore": round(restored.rows / restore_s) if restore_s else None,
    }
