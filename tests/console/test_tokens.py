"""API token pages: the raw token is shown once and only its hash is stored; revoke."""

from __future__ import annotations

import pytest

from console.auth import authenticate_token
from console.models import ApiToken, hash_token

pytestmark = pytest.mark.django_db


def _create(client, name="CI bot", scopes=("content", "play")):
    return client.post("/console/tokens/new/", {"name": name, "scopes": list(scopes)})


def test_token_is_shown_once_and_stored_hashed(admin_client, tenant):
    response = _create(admin_client)
    assert response.status_code == 200
    assert "no-cache" in response["Cache-Control"] or "no-store" in response["Cache-Control"]
    page = response.content.decode()
    token = ApiToken.objects.get(tenant=tenant, name="CI bot")
    start = page.index('id="raw-token">') + len('id="raw-token">')
    raw = page[start : page.index("</div>", start)].strip()
    assert raw.startswith(f"rpk_{token.prefix}_") and "shown only once" in page
    assert token.token_hash == hash_token(raw) and raw not in token.token_hash
    assert token.scopes == ["content", "play"]
    # The raw value is stored nowhere and never shown again.
    values = ApiToken.objects.filter(pk=token.pk).values().get()
    assert all(raw not in str(v) for v in values.values())
    listing = admin_client.get("/console/tokens/").content.decode()
    assert raw not in listing and token.prefix in listing and "CI bot" in listing
    assert authenticate_token(raw) == token


def test_token_form_validation(admin_client, tenant):
    response = _create(admin_client, name="", scopes=())
    page = response.content.decode()
    assert response.status_code == 200 and page.count("This field is required.") == 2
    response = _create(admin_client, scopes=("root",))
    assert "Select a valid choice" in response.content.decode()
    assert not ApiToken.objects.filter(tenant=tenant).exists()


def test_revoke(admin_client, tenant):
    page = _create(admin_client).content.decode()
    start = page.index('id="raw-token">') + len('id="raw-token">')
    raw = page[start : page.index("</div>", start)].strip()
    token = ApiToken.objects.get(tenant=tenant)
    response = admin_client.post(f"/console/tokens/{token.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == "/console/tokens/"
    token.refresh_from_db()
    assert token.revoked_at is not None and not token.active
    assert authenticate_token(raw) is None
    listing = admin_client.get("/console/tokens/").content.decode()
    assert "revoked" in listing and f"/console/tokens/{token.pk}/revoke/" not in listing
    # Revoking again keeps the first revocation time.
    first = token.revoked_at
    admin_client.post(f"/console/tokens/{token.pk}/revoke/")
    token.refresh_from_db()
    assert token.revoked_at == first


def test_list_shows_last_used(admin_client, tenant):
    page = _create(admin_client, name="used").content.decode()
    start = page.index('id="raw-token">') + len('id="raw-token">')
    authenticate_token(page[start : page.index("</div>", start)].strip())
    listing = admin_client.get("/console/tokens/").content.decode()
    row = listing[listing.index("<td>used</td>") :]
    assert "never" not in row[: row.index("</tr>")]
