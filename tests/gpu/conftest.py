"""Tests that need a real GPU: collected only by `make test-gpu` (COURSE_MODE=gpu)."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("COURSE_MODE", "").lower() == "gpu":
        return
    skip = pytest.mark.skip(reason="needs a real GPU: run `make test-gpu` on an NVIDIA machine")
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)
