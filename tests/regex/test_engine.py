"""The pure regex-script engine: SillyTavern's script shape over RE2, or a backtracking engine
under a time budget (no database)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.backtracking import MAX_TIMEOUTS, Backtracking
from roleplay.regex_scripts.engine import (
    AI_OUTPUT,
    MAX_OUTPUT_CHARS,
    USER_INPUT,
    WORLD_INFO,
    RegexScriptError,
    apply_scripts,
    compile_all,
    compile_script,
    parse_find_regex,
    run_script,
)


def script(find, replace="", **extra):
    return compile_script(
        {"scriptName": extra.pop("scriptName", "s"), "findRegex": find, "replaceString": replace,
         "placement": extra.pop("placement", [USER_INPUT, AI_OUTPUT]), **extra}
    )  # fmt: skip


def test_flags_g_means_every_match_and_without_it_the_first():
    assert run_script(script("/o/g", "0"), "foo boo") == "f00 b00"
    assert run_script(script("/o/", "0"), "foo boo") == "f0o boo"


def test_flags_i_m_s_and_y():
    assert run_script(script("/HELLO/i", "hi"), "hello") == "hi"
    assert run_script(script("/^b/gm", "B"), "a\nb\nb") == "a\nB\nB"
    assert run_script(script("/a.b/s", "x"), "a\nb") == "x"
    assert run_script(script("/a.b/", "x"), "a\nb") == "a\nb"
    assert run_script(script("/a/gy", "x"), "aab") == "xxb"
    assert run_script(script("/b/y", "x"), "ab") == "ab"


def test_a_bare_pattern_has_no_flags():
    assert run_script(script("a+", "x"), "caab aa") == "cxb aa"


def test_unsupported_flags_are_a_coded_error():
    with pytest.raises(RegexScriptError) as err:
        parse_find_regex("/a/gd")
    assert err.value.code == "regex_script_unsupported"
    with pytest.raises(RegexScriptError):
        parse_find_regex("/a/gg")


def test_replacement_tokens_follow_javascript_and_sillytavern():
    s = script(r"/(\w+) (?<last>\w+)/", "$2 $1|$<last>|$&|{{match}}|$0|$$|$9|$`|$'")
    assert run_script(s, "<ab cd>") == "<cd ab|cd|ab cd|ab cd|ab cd|$|$9|<|>>"


def test_an_absent_group_is_empty_and_two_digits_fall_back_to_one():
    assert run_script(script("/(a)|(b)/", "[$1$2]"), "b") == "[b]"
    assert run_script(script("/(a)/", "$10"), "a") == "a0"


def test_macros_fill_the_replacement_and_the_find_pattern():
    macros = {"char": "Mi.ra", "user": "Ann"}
    assert run_script(script("/x/", "{{char}} & {{user}}"), "x", macros) == "Mi.ra & Ann"
    raw = script("/{{char}}/g", "C", substituteRegex=1)
    assert run_script(raw, "Mi.ra Mixra", macros) == "C C"
    escaped = script("/{{char}}/g", "C", substituteRegex=2)
    assert run_script(escaped, "Mi.ra Mixra", macros) == "C Mixra"
    none = script("/{{char}}/g", "C", substituteRegex=0)
    assert run_script(none, "Mi.ra", macros) == "Mi.ra"


def test_trim_strings_are_removed_from_each_match_before_substitution():
    s = script(r"/<think>[\s\S]*?<\/think>/g", "[{{match}}]", trimStrings=["<think>", "</think>"])
    assert run_script(s, "a<think>x</think>b") == "a[x]b"
    groups = script(r"/(\w+)!/", "$1", trimStrings=["{{user}}"])
    assert run_script(groups, "hiAnn!", {"user": "Ann"}) == "hi"


def test_placement_and_modes():
    stored = script("/a/", "S", placement=[AI_OUTPUT])
    prompt = script("/a/", "P", placement=[AI_OUTPUT], promptOnly=True)
    display = script("/a/", "D", placement=[AI_OUTPUT], markdownOnly=True)
    scripts = [stored, prompt, display]
    assert apply_scripts(scripts, "a", placement=AI_OUTPUT).text == "S"
    assert apply_scripts(scripts, "a", placement=USER_INPUT).text == "a"
    assert apply_scripts(scripts, "a", placement=AI_OUTPUT, mode="prompt").text == "P"
    assert apply_scripts(scripts, "a", placement=AI_OUTPUT, mode="display").text == "D"
    lore = script("/a/", "W", placement=[WORLD_INFO])
    assert apply_scripts([display, lore], "a", placement=WORLD_INFO, mode="world_info").text == "W"


def test_disabled_and_run_on_edit():
    off = script("/a/", "x", disabled=True)
    assert apply_scripts([off], "a", placement=USER_INPUT).text == "a"
    plain = script("/a/", "x")
    on_edit = script("/a/", "y", runOnEdit=True)
    assert apply_scripts([plain], "a", placement=USER_INPUT, edit=True).text == "a"
    assert apply_scripts([on_edit], "a", placement=USER_INPUT, edit=True).text == "y"


@pytest.mark.parametrize(
    ("min_depth", "max_depth", "depths"),
    [(None, None, {0, 1, 5}), (-1, -1, {0, 1, 5}), (1, None, {1, 5}), (None, 1, {0, 1}),
     (1, 1, {1}), ("", "2", {0, 1})],
)  # fmt: skip
def test_depth_bounds(min_depth, max_depth, depths):
    s = script("/a/", "x", promptOnly=True, minDepth=min_depth, maxDepth=max_depth)
    hit = {
        d for d in (0, 1, 5)
        if apply_scripts([s], "a", placement=USER_INPUT, mode="prompt", depth=d).text == "x"
    }  # fmt: skip
    assert hit == depths
    # no depth (text being stored): the bounds do not apply
    assert apply_scripts([s], "a", placement=USER_INPUT, mode="prompt").text == "x"


@pytest.mark.parametrize("pattern", [r"/(a+)+$/", r"/(a|aa)*b/", r"/(x+x+)+y/"])
def test_catastrophic_patterns_run_in_linear_time(pattern):
    # RE2 has no backtracking: these finish at once on the inputs that hang a backtracker
    assert run_script(script(pattern, "!"), "a" * 50_000 + "!") is not None


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"/(?<=\*)(\w+)(?=\*)/g", "*hi* and *yo*", "*[hi]* and *[yo]*"),
        (r"/(a)\1/g", "aab aa a", "[aa]b [aa] a"),
        (r"/(?<!x)y/g", "xy yy", "xy [y][y]"),
        (r"/(?<w>o)\k<w>/", "foo", "f[oo]"),
        (r"/\u{1F600}(?!a)/g", "\U0001f600b \U0001f600a", "[\U0001f600]b \U0001f600a"),
        (r"/(?=A)a/gi", "aA", "[a][A]"),
    ],
)
def test_what_re2_cannot_run_runs_with_backtracking(pattern, text, expected):
    compiled = script(pattern, "[$&]")
    assert isinstance(compiled.regex({}), Backtracking)
    assert run_script(compiled, text) == expected


def test_a_backtracking_run_over_its_time_leaves_the_text_and_is_then_skipped():
    slow = script(r"/(?=(x+x+)+y)/g", "!")
    text = "x" * 3000
    outcome = apply_scripts([slow, script("/x$/", "z")], text, placement=USER_INPUT)
    assert outcome.text == text[:-1] + "z"  # the next script still ran
    assert outcome.notes == [{"script": "s", "code": "regex_script_timeout"}]
    pattern = slow.regex({})
    for _ in range(MAX_TIMEOUTS):
        apply_scripts([slow], text, placement=USER_INPUT)
    assert pattern.timeouts == MAX_TIMEOUTS  # from here on it is not run at all
    assert apply_scripts([slow], "xxy", placement=USER_INPUT).notes == outcome.notes[:1]


def test_a_pattern_neither_engine_compiles_is_refused():
    for pattern in (r"/(?=a/", r"/[a-/", r"/\u{110000}(?=a)/"):
        with pytest.raises(RegexScriptError) as err:
            script(pattern)
        assert err.value.code == "regex_script_unsupported"
        assert err.value.details["script"] == "s"


def test_output_is_capped_per_script():
    s = script("/a/g", "b" * 1000)
    with pytest.raises(RegexScriptError) as err:
        run_script(s, "a" * 1000)
    assert err.value.code == "regex_script_output_too_large"
    outcome = apply_scripts([s, script("/c/", "d")], "a" * 1000 + "c", placement=USER_INPUT)
    assert outcome.text == "a" * 1000 + "d"
    assert outcome.notes == [{"script": "s", "code": "regex_script_output_too_large"}]
    assert MAX_OUTPUT_CHARS >= 100_000


def test_compile_all_lists_what_does_not_compile():
    good, problems = compile_all(
        [{"scriptName": "ok", "findRegex": "/a/"}, {"scriptName": "bad", "findRegex": "/(?=a/"},
         "nonsense", {"scriptName": "flags", "findRegex": "/a/q"}]
    )  # fmt: skip
    assert [s.spec.script_name for s in good] == ["ok"]
    assert [(p["index"], p["script"], p["code"]) for p in problems] == [
        (1, "bad", "regex_script_unsupported"),
        (2, "", "regex_script_invalid"),
        (3, "flags", "regex_script_unsupported"),
    ]


@pytest.mark.parametrize("field", ["scriptName", "findRegex", "replaceString"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
def test_text_the_database_cannot_store_is_refused(field, bad):
    raw = {"scriptName": "s", "findRegex": "/a/", field: bad}
    with pytest.raises(RegexScriptError) as err:
        compile_script(raw)
    assert err.value.code == "regex_script_invalid" and err.value.details["field"] == field
    with pytest.raises(RegexScriptError):
        compile_script({"scriptName": "s", "findRegex": "/a/", "trimStrings": [bad]})


def test_unicode_and_javascript_escapes():
    assert run_script(script(r"/\u4f60/g", "N"), "你好你") == "N好N"
    assert run_script(script(r"/a\/b/", "x"), "a/b") == "x"
    assert run_script(script("/好(.)/", "[$1]"), "你好吗") == "你[吗]"


_fields = st.fixed_dictionaries(
    {},
    optional={
        "scriptName": st.one_of(st.text(max_size=5), st.integers(), st.none(), st.lists(st.none())),
        "findRegex": st.one_of(st.text(max_size=30), st.from_regex(r"/.{0,10}/[a-z]{0,3}")),
        "replaceString": st.one_of(st.text(max_size=20), st.booleans()),
        "trimStrings": st.one_of(st.lists(st.text(max_size=3), max_size=3), st.text(max_size=3)),
        "placement": st.one_of(st.lists(st.integers(-2, 8), max_size=4), st.text(max_size=2)),
        "substituteRegex": st.one_of(st.integers(-1, 4), st.booleans(), st.text(max_size=2)),
        "minDepth": st.one_of(st.none(), st.integers(-3, 5), st.text(max_size=2), st.floats()),
        "maxDepth": st.one_of(st.none(), st.integers(-3, 5)),
        "disabled": st.one_of(st.booleans(), st.text(max_size=4), st.floats()),
    },
)


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(_fields, st.text(max_size=5), st.integers(), st.none()), text=st.text())
def test_fuzz_only_the_coded_error_escapes(raw, text):
    try:
        compiled = compile_script(raw)
    except RegexScriptError as exc:
        assert exc.code in {"regex_script_invalid", "regex_script_unsupported"}
        return
    outcome = apply_scripts([compiled], text, placement=USER_INPUT, macros={"user": "U"})
    assert isinstance(outcome.text, str)


@settings(max_examples=300, deadline=None)
@given(find=st.text(max_size=40))
def test_fuzz_the_find_parser(find):
    try:
        parsed = parse_find_regex(find)
    except RegexScriptError as exc:
        assert exc.code in {"regex_script_invalid", "regex_script_unsupported"}
    else:
        assert set(parsed.flags) <= set("gimsuy")


def test_a_backtracking_pattern_is_bounded_in_size_as_re2_bounds_one():
    with pytest.raises(RegexScriptError) as err:
        script(r"/(?=a)((a{100}){100}){100}/")
    assert err.value.code == "regex_script_unsupported"
    assert isinstance(script(r"/\\(?=a)[(?=]/").regex({}), Backtracking)
