"""A scenario's ``dio`` object (``roleplay.scenarios.config.Dio``): modes, what each needs,
``timeoutMs`` at its bounds ±1, ``apiKeyEnv`` a variable name, the front loop required.
Pure."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from console.secrets import is_key_name
from roleplay.scenarios.config import (
    DIO_DEFAULT_TIMEOUT_MS,
    DIO_TIMEOUT_MS,
    ScenarioInvalid,
    as_json,
    check_scenario,
    model_config_refs,
)

DIRECTOR = {"modelConfigId": "controller"}
INTERNAL = {"mode": "internal", "modelConfigId": "compiler"}
EXTERNAL = {"mode": "external", "serviceUrl": "https://dio.example.test", "apiKeyEnv": "DIO_KEY"}


def check(dio, *, director=True):
    data = {"dio": dio}
    if director:
        data["preActorDirector"] = DIRECTOR
    return check_scenario(data, actor_config_id=None)


def refused(dio, field, *, director=True):
    with pytest.raises(ScenarioInvalid) as caught:
        check(dio, director=director)
    assert caught.value.field == field, caught.value.message
    return caught.value


def test_each_mode_with_its_defaults():
    internal = check(INTERNAL).dio
    assert internal.on and internal.timeoutMs == DIO_DEFAULT_TIMEOUT_MS
    external = check(EXTERNAL).dio
    assert external.serviceUrl == "https://dio.example.test" and external.apiKeyEnv == "DIO_KEY"
    off = check({"mode": "off"}, director=False).dio
    assert not off.on
    assert as_json(check(INTERNAL))["dio"] == {
        "mode": "internal",
        "modelConfigId": "compiler",
        "serviceUrl": None,
        "apiKeyEnv": None,
        "timeoutMs": DIO_DEFAULT_TIMEOUT_MS,
    }
    assert check_scenario({}, actor_config_id=None).dio is None


def test_what_each_mode_needs():
    refused({"mode": "internal"}, "dio.modelConfigId")
    refused({"mode": "external"}, "dio.serviceUrl")
    refused({"mode": "external", "serviceUrl": "ftp://x"}, "dio.serviceUrl")
    refused({}, "dio.mode")
    refused({"mode": "sometimes"}, "dio.mode")
    refused({**INTERNAL, "extra": 1}, "dio.extra")


def test_dio_on_needs_the_front_loop_and_off_does_not():
    error = refused(INTERNAL, "dio.mode", director=False)
    assert "preActorDirector" in error.message
    refused(EXTERNAL, "dio.mode", director=False)
    assert check({"mode": "off", "timeoutMs": 5000}, director=False).dio.timeoutMs == 5000


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (DIO_TIMEOUT_MS[0] - 1, False),
        (DIO_TIMEOUT_MS[0], True),
        (DIO_TIMEOUT_MS[0] + 1, True),
        (DIO_TIMEOUT_MS[1] - 1, True),
        (DIO_TIMEOUT_MS[1], True),
        (DIO_TIMEOUT_MS[1] + 1, False),
    ],
)
def test_timeout_bounds(value, ok):
    if ok:
        assert check({**INTERNAL, "timeoutMs": value}).dio.timeoutMs == value
    else:
        refused({**INTERNAL, "timeoutMs": value}, "dio.timeoutMs")


def test_timeout_is_an_integer_and_the_url_bounded():
    refused({**INTERNAL, "timeoutMs": "3000"}, "dio.timeoutMs")
    refused({**INTERNAL, "timeoutMs": 3000.5}, "dio.timeoutMs")
    refused({**INTERNAL, "timeoutMs": True}, "dio.timeoutMs")
    url = "https://dio.example.test/" + "a" * (500 - len("https://dio.example.test/"))
    assert check({**EXTERNAL, "serviceUrl": url}).dio.serviceUrl == url
    refused({**EXTERNAL, "serviceUrl": url + "a"}, "dio.serviceUrl")


def test_a_pasted_key_is_refused_as_api_key_env():
    refused({**EXTERNAL, "apiKeyEnv": "sk-live-abcdef"}, "dio.apiKeyEnv")
    refused({**EXTERNAL, "apiKeyEnv": "has space"}, "dio.apiKeyEnv")
    refused({**EXTERNAL, "apiKeyEnv": ""}, "dio.apiKeyEnv")


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_any_timeout_is_accepted_exactly_within_its_bounds(value):
    inside = DIO_TIMEOUT_MS[0] <= value <= DIO_TIMEOUT_MS[1]
    try:
        check({**INTERNAL, "timeoutMs": value})
    except ScenarioInvalid as exc:
        assert not inside and exc.field == "dio.timeoutMs"
    else:
        assert inside


# What the config's ``strip_whitespace`` strips: Unicode's White_Space, which, unlike
# Python's ``str.strip``, leaves the information separators U+001C..U+001F in place.
WHITE_SPACE = "".join(
    c for c in map(chr, range(0x3001)) if c.isspace() and c not in "\x1c\x1d\x1e\x1f"
)


@given(st.text(max_size=120))
@example("A\x1f")  # an information separator is not stripped: refused
@example(" A\u3000")  # Unicode white space is: accepted as "A"
def test_api_key_env_is_accepted_exactly_when_it_names_a_variable(value):
    try:
        config = check({**EXTERNAL, "apiKeyEnv": value})
    except ScenarioInvalid as exc:
        assert exc.field == "dio.apiKeyEnv"
        stripped = value.strip(WHITE_SPACE)
        assert not (stripped and is_key_name(stripped))
    else:
        assert is_key_name(config.dio.apiKeyEnv)


def test_the_internal_compiler_config_is_a_reference_the_service_checks():
    refs = model_config_refs(check(INTERNAL))
    assert ("dio.modelConfigId", "compiler", None) in refs
    assert not [r for r in model_config_refs(check(EXTERNAL)) if r[0].startswith("dio")]
    off = check({"mode": "off", "modelConfigId": "compiler"}, director=False)
    assert not [r for r in model_config_refs(off) if r[0].startswith("dio")]
