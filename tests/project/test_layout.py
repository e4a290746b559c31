"""The repository's shape, so a newcomer finds things by their path: tests/ mirrors helpers/, tests never
import each other, and no Python file in helpers/ is longer than the project's 450 lines."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELPERS, TESTS = ROOT / "helpers", ROOT / "tests"
MAX_LINES = 450
# Test folders that are not helpers packages: what they cover instead.
OTHER_FOLDERS = {
    "notebooks": "what the notebooks say, ship and draw",
    "bench": "the benchmark scripts in bench/",
    "tools": "the maintainer scripts in tools/",
    "project": "rules over the whole repository (layers, locks, deprecated APIs, this layout)",
    "e2e": "learner cells run in a real ipykernel",
    "gpu": "the GPU tier (make test-gpu)",
    "browser": "the browser tier (make test-browser)",
}
# Folders of data and shared code beside the tests (they hold no test files).
SUPPORT = {"support", "corpus", "wrong_solutions", "fuzz", "refused", "ptx_corpus", "submission_sets", "data"}


def _packages() -> set[str]:
    return {p.parent.name for p in HELPERS.glob("*/__init__.py")}


def _test_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("test_*.py"))


def test_every_helpers_package_has_its_test_folder():
    missing = [pkg for pkg in sorted(_packages()) if not _test_files(TESTS / pkg)]
    assert not missing, f"add tests/<package>/test_*.py for: {missing}"


def test_every_test_folder_is_a_package_or_says_what_it_covers():
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    unknown = folders - _packages() - set(OTHER_FOLDERS) - SUPPORT
    assert not unknown, f"name a test folder after the helpers package it tests, or add it to OTHER_FOLDERS: {unknown}"
    holding_tests = sorted(f for f in SUPPORT if _test_files(TESTS / f))
    assert not holding_tests, f"data folders hold no tests: {holding_tests}"


def test_top_level_test_files_name_a_top_level_module():
    modules = {p.stem.lstrip("_") for p in HELPERS.glob("*.py")}
    strays = [p.name for p in TESTS.glob("test_*.py") if p.stem.removeprefix("test_") not in modules]
    assert not strays, f"a test of helpers/<x>.py is tests/test_<x>.py; move these into a folder: {strays}"


def test_tests_never_import_each_other():
    found = []
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[-1].startswith("test_")]
    assert not found, f"shared test code goes in tests/support/: {found}"


def test_no_python_file_in_helpers_is_over_the_limit():
    long = {
        str(p.relative_to(ROOT)): n for p in HELPERS.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these into modules with one job each (at most {MAX_LINES} lines): {long}"
