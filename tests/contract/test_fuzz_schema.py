"""Every operation of ``/api/schema/``, fuzzed from the schema itself (schemathesis).

The operations are those of the served document, read when this module is collected: a new
endpoint is fuzzed the day it is documented, and one that is not documented fails the
contract tests. Each operation runs a fixed number of derandomized examples in two modes,
valid data (*positive*) and data that breaks the schema (*negative*), with a real tenant
token. Path ids and id fields of bodies are sometimes the caller's real objects, so requests
reach the code behind the lookups. For each response:

- no 5xx (the failure shows the server's traceback);
- the status is documented, and the body and content type match its schema;
- data that breaks the schema is refused with a 4xx (but for the leniencies listed, as
  findings, in ``fuzzing.KNOWN_LENIENCY``); the operation refuses a missing or wrong token;
- every error is ``{"error": {"code", "message", "details"}}``.

A third mode, *hostile*, takes valid cases and turns them the way an attacker would: lone
surrogates and NULs in strings and keys, a list item repeated, numbers at and past the
64-bit edges, floats where integers go, a value nested just under the parser's limit, path
and query text no id parses as, and every documented header (``Idempotency-Key``, the
token's ``Authorization``) with any text a header can carry. Its answers must be no 5xx and
the one error format; the schema's own checks do not apply to data the schema forbids.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.contract.conftest import SCHEMA_URL
from tests.contract.documents import view_model
from tests.contract.fuzzing import (
    CHECKS,
    EXTRA_HEADERS,
    InProcessApp,
    hostile,
    hostile_headers,
    hostile_params,
    plant_ids,
    send_raw,
)

# Per operation and mode: about 2,300 requests, under a minute. FUZZ_EXAMPLES=500 for a
# deeper run by hand; the suite always runs the same, derandomized examples.
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
APP = InProcessApp()
# The token schemathesis authenticates with; the ``world`` fixture stores its hash for the
# test's tenant (schemathesis knows it is the credential, so it also tries requests without).
TOKEN = "rpk_fuzz0001_" + "f" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MOSTLY = st.integers(0, 3).map(bool)  # three times in four
# 413 is how this API refuses an oversized body: an answer to invalid data like any 4xx.
CONFIG = schemathesis.Config.from_dict(
    {
        "auth": {"openapi": {"bearerAuth": {"bearer": TOKEN}}},
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": ["400", "401", "403", "404", "405", "406", "409", "413",
                                      "415", "422"],
            }
        }
    }
)  # fmt: skip

# The document as served, through the app itself.
SCHEMA = schemathesis.openapi.from_wsgi(SCHEMA_URL, APP, config=CONFIG)
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]


def _strategy(operation, mode):
    """Cases with the fixed token; in negative mode one in four may break the token too (an
    operation without other input has nothing else to break). Negative mode would otherwise
    spend most examples on the Authorization header; ``ignored_auth`` still probes each
    operation without it."""
    with_token = operation.as_strategy(generation_mode=mode, headers=AUTH)
    if mode == GenerationMode.POSITIVE:
        return with_token
    return st.one_of(
        with_token, with_token, with_token, operation.as_strategy(generation_mode=mode)
    )


@pytest.fixture
def fuzz_world(world):
    """The world, and the fixed token as one of its tenant's API tokens."""
    from console.models import ApiToken, hash_token

    ApiToken.objects.create(
        tenant=world.tenant,
        name="fuzz",
        prefix="fuzz0001",
        token_hash=hash_token(TOKEN),
        scopes=["admin"],
    )
    return world


def test_the_fuzzer_covers_both_apis():
    prefixes = {operation.path.split("/")[1] for operation in OPERATIONS}
    assert prefixes == {"api", "v1"} and len(OPERATIONS) > 40


HOSTILE = "hostile"


@pytest.mark.parametrize(
    "mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE, HOSTILE], ids=str
)
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_fuzz_operation(operation, mode, fuzz_world):
    world = fuzz_world
    model = view_model(operation.path)
    hostile_mode = mode == HOSTILE
    strategy = _strategy(operation, GenerationMode.POSITIVE if hostile_mode else mode)

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, data=st.data())
    def run(case, data):
        if mode != GenerationMode.NEGATIVE:  # a planted id must not repair a negative case
            for name in case.path_parameters or {}:
                if data.draw(MOSTLY, label=f"real {name}"):
                    case.path_parameters[name] = str(world.value(name, model))
            if isinstance(case.body, dict | list):
                plant_ids(case.body, world, data.draw)
        if hostile_mode:
            if isinstance(case.body, dict | list):
                case.body = hostile(case.body, data.draw)
            hostile_params(case.path_parameters, data.draw)
            hostile_params(case.query, data.draw)
            sent = {**AUTH, **hostile_headers(operation, data.draw)}
            APP.tracebacks.clear()
            with APP:
                response = send_raw(case, sent)
            assert response.status_code < 500, "\n".join(
                [f"{case.method} {case.path_parameters} {case.query}", repr(case.body)[:2000],
                 repr(sent)[:500], *APP.tracebacks, response.content[:2000].decode()]
            )  # fmt: skip
            if response.status_code >= 400:
                error = response.json()["error"]
                assert set(error) == {"code", "message", "details"} and error["code"], error
            return
        else:
            sent = data.draw(EXTRA_HEADERS, label="headers")
        APP.tracebacks.clear()
        with APP:
            response = case.call(headers=sent)
        assert response.status_code < 500, "\n".join(
            [case.as_curl_command(headers=sent), *APP.tracebacks, response.content[:2000].decode()]
        )
        case.validate_response(
            response, checks=CHECKS, headers=sent, transport_kwargs={"headers": sent}
        )

    run()
