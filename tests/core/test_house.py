"""The one list of pure modules (``[tool.house]`` in ``pyproject.toml``) and what is made from
it: the import-linter purity contracts and mypy's paths (``tools/house.py``)."""

from __future__ import annotations

from tools import house

TEXT = house.PYPROJECT.read_text()


def test_the_contracts_are_made_from_the_list():
    assert house.problems(TEXT) == []


def test_a_module_added_to_the_list_alone_is_drift():
    listed = '"memory.bench.report", "story.bench",\n]'
    drifted = TEXT.replace(listed, listed[:-2] + ' "roleplay.llm.gateway",\n]', 1)
    assert drifted != TEXT
    (problem,) = house.problems(drifted)
    assert "'pure' drifted" in problem and "missing ['roleplay.llm.gateway']" in problem


def test_a_module_dropped_from_a_contract_alone_is_drift():
    drifted = TEXT.replace('    "roleplay.llm.reasoning",\n', "", 1)
    assert drifted != TEXT
    (problem,) = house.problems(drifted)
    assert "'pure' drifted" in problem and "missing ['roleplay.llm.reasoning']" in problem


def test_writing_the_contracts_mends_the_drift():
    drifted = TEXT.replace('    "roleplay.llm.reasoning",\n', "", 1)
    assert house.problems(house.written(drifted)) == []
    assert house.written(TEXT) == TEXT


def test_every_engine_package_is_pure():
    engines = house.engine_packages()
    assert {"worldbook.engine", "memory.engine", "story.engine"} <= set(engines)
    dropped = TEXT.replace(
        '"worldbook.engine", "memory.engine", "story.engine",',
        '"worldbook.engine", "memory.engine",',
        1,
    )
    problems = house.problems(house.written(dropped))
    assert problems == ["[tool.house] pure: the engine package story.engine is missing"]


def test_a_token_counter_engine_must_be_pure():
    stray = TEXT.replace(
        "takes_token_counter = [\n", 'takes_token_counter = [\n    "roleplay.llm.gateway",\n', 1
    )
    assert any("not in pure" in p for p in house.problems(house.written(stray)))


def test_mypy_checks_every_pure_module_where_it_lives():
    paths = house.mypy_paths(TEXT)
    assert len(paths) == len(house.house(TEXT)["pure"])
    assert all((house.ROOT / path).exists() for path in paths)
    assert "worldbook/engine" in paths and "roleplay/llm/reasoning.py" in paths
