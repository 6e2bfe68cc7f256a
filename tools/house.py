"""The one list of pure modules, and what is made from it.

A pure module imports no Django, DRF or Channels, so it runs and is tested without a
database, and mypy checks its types. The list lives once, in ``pyproject.toml`` under
``[tool.house]``: ``pure`` (every ``engine`` package plus a named few) and
``takes_token_counter`` (the pure engines that are handed a token counter instead of
importing the tokenizer). From it come:

- the import-linter contracts whose ``id`` is ``pure`` and ``pure-tokenizer`` (their
  ``source_modules``; ``python tools/house.py write`` rewrites them in place), and
- the Makefile's ``MYPY_PATHS`` (``python tools/house.py mypy-paths``).

``python tools/house.py check`` (a step of ``make lint``, and ``tests/core/test_house.py``)
fails when the contracts and the list drift apart, when a ``takes_token_counter`` module is
not in ``pure``, when a listed module does not exist, or when an ``engine`` package is
missing from the list.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
PACKAGES = ("console", "roleplay", "worldbook", "memory", "story", "images")
CONTRACTS = {"pure": "pure", "pure-tokenizer": "takes_token_counter"}
"""Contract id -> the ``[tool.house]`` key its ``source_modules`` come from."""


def house(text: str) -> dict[str, list[str]]:
    """The ``[tool.house]`` lists of a pyproject's text."""
    table = tomllib.loads(text)["tool"]["house"]
    return {key: list(table[key]) for key in CONTRACTS.values()}


def module_path(module: str, root: Path = ROOT) -> Path:
    """The file or package directory of a dotted module name (a package: its directory)."""
    base = root.joinpath(*module.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def mypy_paths(text: str, root: Path = ROOT) -> list[str]:
    """The paths mypy checks: every pure module, as a file or a package directory."""
    return [str(module_path(m, root).relative_to(root)) for m in house(text)["pure"]]


def engine_packages(root: Path = ROOT) -> list[str]:
    """Every ``engine`` package of the house, as a dotted name."""
    found = []
    for package in PACKAGES:
        for init in sorted((root / package).rglob("engine/__init__.py")):
            found.append(".".join(init.parent.relative_to(root).parts))
    return found


def _covered(module: str, listed: list[str]) -> bool:
    return any(module == m or module.startswith(m + ".") for m in listed)


def problems(text: str, root: Path = ROOT) -> list[str]:
    """What is wrong between the list and the contracts of a pyproject's text (none: [])."""
    lists = house(text)
    found: list[str] = []
    pure = lists["pure"]
    for key, modules in lists.items():
        seen = set()
        for module in modules:
            if module in seen:
                found.append(f"[tool.house] {key}: {module} is listed twice")
            seen.add(module)
            if not module_path(module, root).exists():
                found.append(f"[tool.house] {key}: {module} does not exist")
    for module in lists["takes_token_counter"]:
        if not _covered(module, pure):
            found.append(f"[tool.house] takes_token_counter: {module} is not in pure")
    for module in engine_packages(root):
        if not _covered(module, pure):
            found.append(f"[tool.house] pure: the engine package {module} is missing")
    contracts = {c.get("id"): c for c in tomllib.loads(text)["tool"]["importlinter"]["contracts"]}
    for contract_id, key in CONTRACTS.items():
        contract = contracts.get(contract_id)
        if contract is None:
            found.append(f"import-linter: no contract with id {contract_id!r}")
        elif list(contract["source_modules"]) != lists[key]:
            missing = sorted(set(lists[key]) - set(contract["source_modules"]))
            extra = sorted(set(contract["source_modules"]) - set(lists[key]))
            found.append(
                f"import-linter contract {contract_id!r} drifted from [tool.house] {key}: "
                f"missing {missing}, not in the list {extra} (run `python tools/house.py write`)"
            )
    return found


def _toml_list(modules: list[str]) -> str:
    lines = [f'    "{module}",' for module in modules]
    return "source_modules = [\n" + "\n".join(lines) + "\n]"


def written(text: str) -> str:
    """``text`` with the generated contracts' ``source_modules`` made from the list."""
    lists = house(text)
    for contract_id, key in CONTRACTS.items():
        pattern = re.compile(
            rf'(^id = "{re.escape(contract_id)}".*\n(?:(?!\[\[).*\n)*?)source_modules = \[[^\]]*\]',
            re.MULTILINE,
        )
        text, count = pattern.subn(lambda m, k=key: m.group(1) + _toml_list(lists[k]), text)
        if count != 1:
            raise SystemExit(f"no contract with id {contract_id!r} to write")
    return text


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    text = PYPROJECT.read_text()
    if command == "mypy-paths":
        print(" ".join(mypy_paths(text)))
    elif command == "write":
        PYPROJECT.write_text(written(text))
    elif command == "check":
        found = problems(text)
        for problem in found:
            print(problem, file=sys.stderr)
        return 1 if found else 0
    else:
        print("usage: house.py [check | write | mypy-paths]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
