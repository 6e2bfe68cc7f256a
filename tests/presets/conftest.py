"""Fixtures of the preset tests: the character tests' signed-in console clients per role."""

from tests.characters.conftest import operator_client, viewer_client  # noqa: F401 (fixtures)
