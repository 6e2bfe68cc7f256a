"""Management commands: create_tenant, create_api_token, seed_demo."""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from console.models import ApiToken, Tenant, hash_token
from tests.api.helpers import db_snapshot
from tests.background.processes import manage


def _run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_tenant_prints_its_id(db):
    out, _ = _run("create_tenant", "initech")
    tenant = Tenant.objects.get(name="initech")
    assert out.strip() == str(tenant.id)
    uuid.UUID(out.strip())


def test_create_tenant_twice_is_an_error(db):
    _run("create_tenant", "initech")
    with pytest.raises(CommandError, match="already exists"):
        _run("create_tenant", "initech")
    assert Tenant.objects.filter(name="initech").count() == 1


def test_create_api_token_prints_only_a_working_token(db, tenant):
    out, err = _run("create_api_token", "--tenant", tenant.name, "--name", "ci", "--scope", "play")
    lines = out.splitlines()
    assert len(lines) == 1 and err == ""
    raw = lines[0]
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert (token.name, token.scopes, token.tenant_id) == ("ci", ["play"], tenant.id)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/players/").status_code == 200
    assert client.post("/api/v1/characters/", {"name": "x"}, format="json").status_code == 403


def test_create_api_token_default_and_repeated_scopes(db, tenant):
    out, _ = _run("create_api_token", "--tenant", tenant.name, "--name", "default")
    assert ApiToken.objects.get(token_hash=hash_token(out.strip())).scopes == ["content", "play"]
    out, _ = _run(
        "create_api_token", "--tenant", tenant.name, "--name", "all",
        "--scope", "admin", "--scope", "content", "--scope", "admin",
    )  # fmt: skip
    assert ApiToken.objects.get(token_hash=hash_token(out.strip())).scopes == ["admin", "content"]


def test_create_api_token_errors(db, tenant):
    with pytest.raises(CommandError, match="no tenant"):
        _run("create_api_token", "--tenant", "nobody", "--name", "x")
    with pytest.raises(CommandError):
        _run("create_api_token", "--tenant", tenant.name, "--name", "x", "--scope", "root")
    assert not ApiToken.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_create_api_token_process_stdout_is_one_line():
    """As a separate process: nothing else (logs, banners) reaches stdout."""
    Tenant.objects.create(name="proc-tenant")
    result = manage("create_api_token", "--tenant", "proc-tenant", "--name", "shell")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {lines[0]}")
    assert client.get("/api/v1/characters/").status_code == 200


@pytest.fixture
def demo_credentials(tmp_path, monkeypatch):
    """Keep the demo password file of this test out of the real ``var/``."""
    from console.management.commands import seed_demo

    path = tmp_path / "demo-login.txt"
    monkeypatch.setattr(seed_demo, "CREDENTIALS", path)
    return path


def test_seed_demo_is_idempotent(db, demo_credentials):
    from roleplay.models import Character, Conversation, ModelConfig

    first, _ = _run("seed_demo")
    counts = {table: count for table, (count, _digest) in db_snapshot().items()}
    second, _ = _run("seed_demo")
    assert {table: count for table, (count, _d) in db_snapshot().items()} == counts
    assert first == second  # same login, same password, same conversation
    tenant = Tenant.objects.get(name="demo")
    assert Character.objects.filter(tenant=tenant, name="Mira").count() == 1
    assert Conversation.objects.filter(tenant=tenant).count() == 1
    config = ModelConfig.objects.get(tenant=tenant)
    assert config.is_default and config.is_demo and config.provider == "llama_cpp"
    assert demo_credentials.read_text().strip() in first


def test_seed_demo_login_works(db, demo_credentials, client):
    out, _ = _run("seed_demo")
    fields = dict(part.split("=", 1) for part in out.split())
    # Through the login form: the throttling backend refuses logins that carry no request.
    response = client.post(
        "/console/login/", {"username": fields["login"], "password": fields["password"]}
    )
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_seed_demo_keeps_an_existing_default_and_links_the_demo_player(db, demo_credentials):
    from console.models import Player
    from roleplay.llm.configs import services as model_configs
    from roleplay.models import ModelConfig

    tenant = Tenant.objects.create(name="demo")
    mine = model_configs.create_model_config(
        tenant, name="mine", provider="llama_cpp", model="m", is_default=True
    )
    _run("seed_demo")
    assert list(ModelConfig.objects.filter(tenant=tenant, is_default=True)) == [mine]
    demo = ModelConfig.objects.get(tenant=tenant, is_demo=True)
    assert demo.provider == "llama_cpp" and demo.max_output_tokens < demo.context_limit
    player = Player.objects.get(tenant=tenant, external_id="console:demo")
    assert player.display_name == "Traveller"
    # And the player app's demo account, a player of its own.
    account = Player.objects.exclude(pk=player.pk).get(tenant=tenant).account
    assert account.email == "player@example.com" and account.email_verified_at
    assert player.user.username == "demo"
