"""A tenant holding one of (nearly) everything, built by the API tests' world and the
matrices' worldbook, for the backup's round trips."""

from __future__ import annotations

import io

import pytest


@pytest.fixture
def full_tenant(make_tenant, llm, api_client_for):
    """A tenant with runtime objects, memory, Story and Agent V2 state, a checkpoint, images,
    regex scripts, tools and a published worldbook bound to a prompt."""
    from tests.matrix.world import build_tenancy

    tenant = make_tenant("source-tenant")
    tenancy = build_tenancy(tenant, llm.base_url, "src", api_client_for)
    return tenancy


def export_bytes(tenant) -> bytes:
    from console.backup.export import export_tenant

    out = io.BytesIO()
    export_tenant(tenant, out)
    return out.getvalue()
