"""Fixtures of the preset tests: the signed-in console clients per role of the character
tests (made by the matrices' ``console_client``)."""

from tests.characters.conftest import operator_client, viewer_client  # noqa: F401 (fixtures)
from tests.matrix.conftest import console_client  # noqa: F401 (fixture)
