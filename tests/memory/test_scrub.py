"""The memory scrubber (seed 003): every kind of secret, the near misses it must leave
alone, idempotence and never-raises as properties, and ``scrub_value`` over JSON values."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.engine.scrub import (
    API_KEY,
    AWS_KEY,
    CARD,
    EMAIL,
    KINDS,
    MAX_VALUE_DEPTH,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
    TOKEN,
    Scrubbed,
    luhn_valid,
    placeholder,
    scrub,
    scrub_value,
)

OPENAI_KEY = "sk-proj-" + "Ab3dE6gH9jKlMn0pQr2sTu5w"
ANTHROPIC_KEY = "sk-ant-api03-" + "x9Y8z7W6v5U4t3S2r1Q0p-_AbCd"
OUR_TOKEN = "rpk_0a1b2c3d_" + "Zx9_-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm1Q2"  # token_urlsafe(32)
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXBhcnQ"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_11ABCDEFG0" + "a1b2c3d4e5_f6g7h8i9j0k1l2m3n4"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAuNhT0pZ1QhQ5mH2cM8Yx\nq3kR7d0Q2xJY+Wm1r/8vH6a9==\n"
    "-----END RSA PRIVATE KEY-----"
)
CERT = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----"
PASSWORD_SECRET = "S3cr3t-Pa55w0rd!"
VISA = "4111 1111 1111 1111"
AMEX = "378282246310005"

# (text, raw secrets that must be gone, expected counts)
CORPUS = [
    (f"my key is {OPENAI_KEY} ok", [OPENAI_KEY], {API_KEY: 1}),
    (f"claude: {ANTHROPIC_KEY}", [ANTHROPIC_KEY], {API_KEY: 1}),
    (f"我的密钥是{OPENAI_KEY}，别告诉别人", [OPENAI_KEY], {API_KEY: 1}),
    (f"gh {GITHUB} and {GITHUB_PAT}", [GITHUB, GITHUB_PAT], {API_KEY: 2}),
    (f"slack bot token {SLACK}.", [SLACK], {API_KEY: 1}),
    (f"use the token {OUR_TOKEN} for the API", [OUR_TOKEN], {TOKEN: 1}),
    (f"令牌：{OUR_TOKEN}", [OUR_TOKEN], {TOKEN: 1}),
    (f"Authorization: Bearer {JWT}", [JWT], {TOKEN: 1}),
    (f"header authorization: bearer {JWT}\n", [JWT], {TOKEN: 1}),
    (f"请求头 Bearer {JWT} 已过期", [JWT], {TOKEN: 1}),
    (f"aws id {AWS_ID}", [AWS_ID], {AWS_KEY: 1}),
    (f"aws_secret_access_key = {AWS_SECRET}", [AWS_SECRET], {AWS_KEY: 1}),
    (f'{{"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"}}', [AWS_SECRET], {AWS_KEY: 1}),
    (f'{{"SecretAccessKey": "{AWS_SECRET}"}}', [AWS_SECRET], {AWS_KEY: 1}),
    (
        f"[default]\naws_access_key_id={AWS_ID}\naws_secret_access_key={AWS_SECRET}\n",
        [AWS_ID, AWS_SECRET],
        {AWS_KEY: 2},
    ),
    (f"here:\n{PEM}\nthanks", ["MIIEowIBAAKCAQEA", "q3kR7d0Q2xJY"], {PRIVATE_KEY: 1}),
    (f"证书如下 {CERT} 完毕", ["MIIDdzCCAl"], {PRIVATE_KEY: 1}),
    (
        f"DATABASE_URL=postgres://app:{PASSWORD_SECRET}@db.internal:5432/app",
        [PASSWORD_SECRET],
        {PASSWORD: 1},
    ),
    (f"数据库 mysql://root:{PASSWORD_SECRET}@10.0.0.5/x 别外传", [PASSWORD_SECRET], {PASSWORD: 1}),
    (
        "write to alice@example.com or bob.smith+tag@mail.co.uk.",
        ["alice@example.com", "bob.smith+tag@mail.co.uk"],
        {EMAIL: 2},
    ),
    (
        "我的邮箱是 alice@example.com，手机 13812345678",
        ["alice@example.com", "13812345678"],
        {EMAIL: 1, PHONE: 1},
    ),
    ("联系电话：+86 138 1234 5678。", ["138 1234 5678"], {PHONE: 1}),
    ("电话8613912345678或者139-1234-5678", ["8613912345678", "139-1234-5678"], {PHONE: 2}),
    ("call +1 (555) 123-4567 or +44 20 7946 0958", ["(555) 123-4567", "20 7946 0958"], {PHONE: 2}),
    ("ring +33.1.42.68.53.00 tomorrow", ["42.68.53.00"], {PHONE: 1}),
    (f"card {VISA}, exp 12/26", [VISA], {CARD: 1}),
    (f"卡号{AMEX}有效", [AMEX], {CARD: 1}),
    ("pay with 5555-5555-5555-4444 now", ["5555-5555-5555-4444"], {CARD: 1}),
    ("diners 3056 930902 5904 and jcb 3530111333300000", ["930902", "3530111333300000"], {CARD: 2}),
    (f"qty 2 {VISA} 12/26 cvv 123", [VISA], {CARD: 1}),
    (
        f"mail a@b.io, key {OPENAI_KEY}, card {VISA}, tel 13800138000",
        ["a@b.io", OPENAI_KEY, VISA, "13800138000"],
        {EMAIL: 1, API_KEY: 1, CARD: 1, PHONE: 1},
    ),
]


@pytest.mark.parametrize(("text", "secrets", "counts"), CORPUS)
def test_every_kind_is_replaced_by_its_placeholder(text, secrets, counts):
    result = scrub(text)
    for secret in secrets:
        assert secret not in result.text
    for kind, count in counts.items():
        assert result.text.count(placeholder(kind)) == count
    assert result.found == counts


def test_placeholders_and_kinds_are_the_documented_ones():
    assert KINDS == (API_KEY, TOKEN, AWS_KEY, PRIVATE_KEY, PASSWORD, EMAIL, PHONE, CARD)
    assert [placeholder(kind) for kind in KINDS] == [
        "[redacted:api_key]",
        "[redacted:token]",
        "[redacted:aws_key]",
        "[redacted:private_key]",
        "[redacted:password]",
        "[redacted:email]",
        "[redacted:phone]",
        "[redacted:card]",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization: Bearer {JWT}", "Authorization: Bearer [redacted:token]"),
        (
            f"postgres://app:{PASSWORD_SECRET}@db.internal:5432/app",
            "postgres://app:[redacted:password]@db.internal:5432/app",
        ),
        ("redis://:hunter2hunter2@cache:6379/0", "redis://:[redacted:password]@cache:6379/0"),
        ("https://u:p@ss@host/x", "https://u:[redacted:password]@host/x"),
        (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [redacted:aws_key]"),
        (f"a\n{PEM}\nb", "a\n[redacted:private_key]\nb"),
        ("x -----BEGIN PRIVATE KEY-----\nMIIabc never ends\nat all", "x [redacted:private_key]"),
        (
            "-----BEGIN PRIVATE KEY-----\nAAA\n-----END CERTIFICATE-----\nrest",
            "[redacted:private_key]",
        ),
        (f"Bearer {OPENAI_KEY}", "Bearer [redacted:api_key]"),
        (f"Bearer {OUR_TOKEN}", "Bearer [redacted:token]"),
        ("mailto:alice@example.com", "mailto:[redacted:email]"),
        ("+8613812345678", "[redacted:phone]"),
        ("+4420794609581", "[redacted:phone]"),
        (
            "\x00alice@example.com\ud800 13812345678\x00",
            "\x00[redacted:email]\ud800 [redacted:phone]\x00",
        ),
        ("卡号：4111-1111-1111-1111，谢谢", "卡号：[redacted:card]，谢谢"),
    ],
)
def test_what_is_kept_around_a_secret(text, expected):
    assert scrub(text).text == expected


@pytest.mark.parametrize(
    "text",
    [
        "In 2024 we met on 2024-05-01 at 12:30:45, and again on 2024/06/02.",
        "Version 1.2.3 and v10.13.812 shipped; python 3.11.7.",
        "It cost $1,299.99 or ¥12800, about 9.99 each, 15% off.",
        "order 202405011234 and invoice 100234567890",
        "4111 1111 1111 1112 fails the checksum",
        "4111111111111112",
        "1715000000000 is a millisecond timestamp",
        "user@localhost and root@server are not addresses",
        "ping @mention and @alice_bob in the channel, a@b too",
        "sk-short and sk-1234567890123456789 are too short",
        "task-management-and-planning-suite is a word",
        "the bearer of this letter; Bearer bonds; the bearer responsibilities",
        "THE BEARER RESPONSIBILITIESXX",
        "12345678901 is not a mobile, 1381234567 too short, 138123456789 too long",
        "ID13812345678X is glued to letters",
        "+1 555 is too short, +1234567 too",
        "https://example.com:8080/path?q=1#frag and ftp://files.example.org/",
        "AKIA1234 and AKIAIOSFODNN7EXAMPLEX",
        "-----END PRIVATE KEY----- alone",
        "rpk_nothex!_abc",
        "3.14159265358979323846264338327950288",
        "电话号码以后再说，价格是 128 元，编号 A-2024-0501。",
        "2024年5月1日 13:45，订单号 202405011234，版本 2.13.0，共 15800 元。",
        "",
    ],
)
def test_near_misses_are_left_alone(text):
    assert scrub(text) == Scrubbed(text, {})


def test_a_run_starting_with_plus_is_a_phone_unless_too_long_for_one():
    assert luhn_valid("4420794609582")  # it would be a card without the +
    assert scrub("+4420794609582").found == {PHONE: 1}
    assert scrub("4420794609582").found == {CARD: 1}
    assert scrub("+4111111111111111").text == "+[redacted:card]"  # 16 digits: not a phone


def test_the_result_is_frozen():
    result = scrub("alice@example.com")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]


def test_counts_add_up_per_kind():
    text = " ; ".join(["alice@example.com", "bob@example.org", VISA, "13812345678"] * 3)
    assert scrub(text).found == {EMAIL: 6, PHONE: 3, CARD: 3}


@pytest.mark.parametrize(
    ("digits", "valid"),
    [
        ("4111111111111111", True),
        ("4111111111111112", False),
        ("378282246310005", True),
        ("6011111111111117", True),
        ("79927398713", True),
        ("79927398710", False),
    ],
)
def test_luhn(digits, valid):
    assert luhn_valid(digits) is valid


# --- Properties -----------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=300)  # surrogates, NULs

FRAGMENTS = [
    *"@ . - + ( ) : / // _ = \" ' [ ] com example a Z x 0 1 4 86 138 1234 4111 5678".split(),
    *"sk- ghp_ xoxb- rpk_ 0a1b2c3d_ AKIA :// https u: p@ 手机 ， 。 邮箱 [redacted:".split(),
    *[" ", "  ", "\n", "\t", "Bearer ", "bearer\t", "\x00", "\ud800", AWS_SECRET[:20]],
    *["-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "aws_secret_access_key="],
]
SOUP = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=60).map(
    "".join
)

SECRETS = [
    (OPENAI_KEY, OPENAI_KEY, API_KEY),
    (GITHUB, GITHUB, API_KEY),
    (SLACK, SLACK, API_KEY),
    (OUR_TOKEN, OUR_TOKEN, TOKEN),
    (f"Bearer {JWT}", JWT, TOKEN),
    (AWS_ID, AWS_ID, AWS_KEY),
    (f"aws_secret_access_key={AWS_SECRET}", AWS_SECRET, AWS_KEY),
    (PEM, "MIIEowIBAAKCAQEA", PRIVATE_KEY),
    (f"postgres://app:{PASSWORD_SECRET}@db:5432/x", PASSWORD_SECRET, PASSWORD),
    ("carol.white@example.net", "carol.white@example.net", EMAIL),
    ("13812345678", "13812345678", PHONE),
    ("+1 (555) 123-4567", "(555) 123-4567", PHONE),
    (VISA, VISA, CARD),
    (AMEX, AMEX, CARD),
]
SEPARATORS = ["\n", " \n", "，", "。", "; ", " ; ", "\t|\t"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(ANY_TEXT, SOUP))
def test_scrub_never_raises_and_is_idempotent(text):
    once = scrub(text)
    twice = scrub(once.text)
    assert twice.text == once.text
    assert twice.found == {}
    assert set(once.found) <= set(KINDS) and all(n > 0 for n in once.found.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(ANY_TEXT, SOUP),
    st.data(),
    st.sampled_from(SECRETS),
    st.sampled_from(SEPARATORS),
    st.sampled_from(SEPARATORS),
)
def test_a_spliced_secret_is_gone(text, data, secret, before, after):
    raw, core, kind = secret
    assume(core not in text)  # else the text itself would hold it, untouched or not
    at = data.draw(st.integers(0, len(text)))
    spliced = text[:at] + before + raw + after + text[at:]
    result = scrub(spliced)
    assert core not in result.text
    # Its own kind, unless the text around set up a wider one (a PEM or URL swallowing it).
    assert result.found.get(kind, 0) >= 1 or {PRIVATE_KEY, PASSWORD} & set(result.found)
    assert scrub(result.text).text == result.text


ADVERSARIAL = [
    "a" * 1_000_000,
    "1" * 1_000_000,
    "4111 " * 200_000,
    "1-" * 500_000,
    "a@" + "a." * 500_000,
    "@a." * 333_333,
    "sk-" * 333_333,
    "-----BEGIN A-----" * 60_000,
    "a://u:" * 166_666,
    "bearer " * 142_857,
    "+1 " * 333_333,
    "+" + "1 " * 500_000,
    "86 " * 333_333,
    "aws_secret_access_key=" + " " * 1_000_000,
    "\x00\ud800手机" * 250_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_a_megabyte_of_adversarial_text_finishes(text):
    result = scrub(text)
    assert scrub(result.text).text == result.text


# --- scrub_value ---------------------------------------------------------------------


def test_scrub_value_scrubs_strings_in_nested_values_and_keeps_keys():
    value = {
        "alice@example.com": "keys stay",
        "note": "mail alice@example.com",
        "list": ["13812345678", 42, None, True, 1.5, [f"key {OPENAI_KEY}", {"deep": VISA}]],
        "empty": {},
    }
    original = copy.deepcopy(value)
    cleaned, found = scrub_value(value)
    assert cleaned == {
        "alice@example.com": "keys stay",
        "note": "mail [redacted:email]",
        "list": [
            "[redacted:phone]",
            42,
            None,
            True,
            1.5,
            ["key [redacted:api_key]", {"deep": "[redacted:card]"}],
        ],
        "empty": {},
    }
    assert found == {EMAIL: 1, PHONE: 1, API_KEY: 1, CARD: 1}
    assert value == original  # the input is not changed
    assert list(cleaned) == list(value) and list(cleaned["list"][5][1]) == ["deep"]


@pytest.mark.parametrize("value", ["alice@example.com", 7, None, [], {}])
def test_scrub_value_of_scalars_and_empty_containers(value):
    cleaned, found = scrub_value(value)
    if isinstance(value, str):
        assert (cleaned, found) == ("[redacted:email]", {EMAIL: 1})
    else:
        assert (cleaned, found) == (value, {})


def test_scrub_value_walks_deep_values_without_recursion():
    value: list = ["alice@example.com"]
    for _ in range(MAX_VALUE_DEPTH - 1):
        value = [value]
    cleaned, found = scrub_value(value)
    assert found == {EMAIL: 1}
    for _ in range(MAX_VALUE_DEPTH - 1):
        cleaned = cleaned[0]
    assert cleaned == ["[redacted:email]"]


def test_scrub_value_refuses_a_cycle_instead_of_looping():
    cycle: list = ["x"]
    cycle.append(cycle)
    with pytest.raises(ValueError, match="deeper than"):
        scrub_value(cycle)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | SOUP,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(JSON)
def test_scrub_value_matches_scrub_on_every_string(value):
    cleaned, found = scrub_value(value)
    total: dict[str, int] = {}

    def walk(original, result):
        if isinstance(original, str):
            expected = scrub(original)
            assert result == expected.text
            for kind, n in expected.found.items():
                total[kind] = total.get(kind, 0) + n
        elif isinstance(original, dict):
            assert list(result) == list(original)
            for key in original:
                walk(original[key], result[key])
        elif isinstance(original, list):
            assert len(result) == len(original)
            for item, new in zip(original, result, strict=True):
                walk(item, new)
        else:
            assert result is original

    walk(value, cleaned)
    assert found == {kind: total[kind] for kind in KINDS if kind in total}
