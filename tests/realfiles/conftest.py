import pytest

from tests.matrix.conftest import console_client  # noqa: F401 (fixture)


@pytest.fixture
def operator_client(console_client, tenant):  # noqa: F811
    return console_client(tenant, "operator")


@pytest.fixture
def staging_dir(tmp_path, monkeypatch):
    """The worldbook console stages uploads in a per-test directory."""
    from worldbook.views import staging

    directory = tmp_path / "staging"
    monkeypatch.setattr(staging, "STAGING_DIR", directory)
    return directory
