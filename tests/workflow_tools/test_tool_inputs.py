"""The input rules of ``http_tool`` and ``mcp_tool`` (``roleplay.workflows.engine.tool_inputs``),
by properties: any JSON a node may hold is either read or refused with an ``InputError``
(never another exception), an accepted path never leaves its prefix, and the arguments sent
to an MCP tool never lose what the node set."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roleplay.workflows.engine import tool_inputs as t
from roleplay.workflows.engine.contracts import CapabilityValue, NodeOutput

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
HTTP_KEYS = st.sampled_from([*t.HTTP_INPUT_SCHEMA["properties"], "other"])
MCP_KEYS = st.sampled_from([*t.MCP_INPUT_SCHEMA["properties"], "other"])
PIECES = ["a", "b", ".", "/", "%", "2", "e", "E", "f", "\\", "?", "#", "~", " ", "-", "_",
          "..", "%2e%2e", "%2E", "%2f", "%00"]  # fmt: skip
PATH_TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
PREFIXES = ["https://api.example/v1", "https://api.example/v1/", "http://api.example:8080",
            "https://api.example/v1/search"]  # fmt: skip
FAST = settings(max_examples=300, deadline=None)


@FAST
@given(st.dictionaries(HTTP_KEYS, JSON | PATH_TEXT, max_size=6) | JSON)
def test_http_input_is_read_or_refused_with_an_input_error(raw):
    try:
        parsed = t.parse_http_input(raw)
    except t.InputError:
        return
    assert parsed.endpoint and len(parsed.query) <= t.MAX_QUERY_PARAMS


@FAST
@given(path=PATH_TEXT, prefix=st.sampled_from(PREFIXES))
def test_an_accepted_path_stays_under_its_prefix(path, prefix):
    try:
        parsed = t.parse_http_input({"endpoint": "e", "path": path})
    except t.InputError:
        return
    url = t.join_under_prefix(prefix, parsed.path)
    assert t.under_prefix(url, prefix), url


@pytest.mark.parametrize(
    ("url", "prefix", "under"),
    [("https://api.example/v1/x", "https://api.example/v1", True),
     ("https://api.example/v1", "https://api.example/v1", True),
     ("https://api.example/v10", "https://api.example/v1", False),
     ("https://api.example/v1/../admin", "https://api.example/v1", False),
     ("https://api.example/v1/%2e%2e/admin", "https://api.example/v1", False),
     ("http://api.example/v1/x", "https://api.example/v1", False),
     ("https://api.example:444/v1/x", "https://api.example/v1", False),
     ("https://api.example:443/v1/x", "https://API.example./v1", True),
     ("https://evil.example/v1/x", "https://api.example/v1", False),
     ("https://api.example.evil/v1/x", "https://api.example/v1", False),
     ("https://api.example/v1/x", "https://api.example/v1/", True),
     ("https://api.example/", "https://api.example", True)],
)  # fmt: skip
def test_under_prefix(url, prefix, under):
    assert t.under_prefix(url, prefix) is under


@FAST
@given(st.dictionaries(MCP_KEYS, JSON, max_size=6) | JSON)
def test_mcp_input_is_read_or_refused_with_an_input_error(raw):
    try:
        parsed = t.parse_mcp_input(raw)
    except t.InputError:
        return
    assert t.MCP_TOOL_NAME.match(parsed.tool)


NAMES = st.sampled_from(["query", "dependencies", "note", "location"])


@FAST
@given(
    arguments=st.dictionaries(NAMES, JSON, max_size=3),
    declared=st.lists(NAMES, max_size=4),
    query_argument=st.sampled_from([t.AUTO, None, "note", "query"]),
    dependencies_argument=st.sampled_from([t.AUTO, None, "dependencies", "location"]),
    query=st.text(max_size=20),
)
def test_mcp_arguments_keep_what_the_node_set(arguments, declared, query_argument,
                                              dependencies_argument, query):  # fmt: skip
    given_input = t.McpInput("s", "tool", arguments, query_argument, dependencies_argument)
    schema = {"type": "object", "properties": {name: {} for name in declared}}
    outputs = {"rule": NodeOutput("rule", "c", CapabilityValue({"a": 1}, "p"))}
    dependencies = t.dependency_results(outputs)
    sent = t.mcp_arguments(given_input, schema, query, dependencies)
    assert {k: sent[k] for k in arguments} == arguments
    for name in set(sent) - set(arguments):
        assert sent[name] in (query, dependencies)
    if query_argument == t.AUTO and "query" in declared and "query" not in arguments:
        assert sent["query"] == query
    if query_argument is None and dependencies_argument is None:
        assert sent == arguments


@FAST
@given(value=JSON, cap=st.integers(1, 50))
def test_prompt_text_is_capped(value, cap):
    assert len(t.prompt_text(value, cap)) <= cap


@pytest.mark.parametrize(
    "value", [["a", "a"], ["a b"], "gate_rule", [1], ["x"] * 101, [""], ["a" * 129]]
)
def test_an_allowed_tool_list_that_breaks_a_rule_is_named(value):
    assert t.allowed_tools_problem(value)


def test_an_allowed_tool_list_of_names_is_fine():
    assert t.allowed_tools_problem([]) is None
    assert t.allowed_tools_problem(["gate_rule", "ns.tool/x-1"]) is None


@pytest.mark.parametrize(
    "url", ["https://api.example/v1?key=1", "https://api.example/v1#x", "https://api.example/a/../b",
            "https://api.example/a b", "ftp://api.example/", "https://u:p@api.example/"],
)  # fmt: skip
def test_a_prefix_with_a_query_dot_segment_or_credentials_is_refused(url):
    assert t.prefix_problem(url)
