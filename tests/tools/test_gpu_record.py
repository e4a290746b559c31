"""tools/gpu_record.py (run by `make test-gpu`): the record counts the test files beside the
notebooks from pytest's JUnit XML, and a failed test makes the record, and the target, fail."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import gpu_record  # noqa: E402

SAMPLE = """
import pytest

def test_one():
    assert 1 + 1 == 2

def test_two():
    assert "a" * 2 == "aa"

@pytest.mark.skip(reason="a sample skip")
def test_three():
    pass
"""


def junit(tmp_path: Path, body: str) -> Path:
    (tmp_path / "test_sample.py").write_text(body)
    xml = tmp_path / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
         f"--junitxml={xml}", "test_sample.py"],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    return xml


def notebooks_report(tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    row = {"cells": 8, "failed": False, "seconds": 1.0}
    path.write_text(json.dumps({"notebooks": {"notebooks/00_setup.ipynb": row}}))
    return path


def test_counts_each_test_file_from_the_junit_xml(tmp_path):
    files = gpu_record.test_files(str(junit(tmp_path, SAMPLE)))
    assert files == [gpu_record.TestFile("test_sample.py", passed=2, failed=0, skipped=1)]


def test_a_failed_test_fails_the_record(tmp_path):
    xml = junit(tmp_path, SAMPLE + "\ndef test_four():\n    assert 2 + 2 == 5\n")
    out = tmp_path / "record.md"
    rc = gpu_record.main(str(notebooks_report(tmp_path)), str(tmp_path / "none.jsonl"), str(out), str(xml))
    text = out.read_text()
    assert rc == 1
    assert "**Result:** FAILED" in text
    assert "| test_sample.py | 2 | 1 | 1 |" in text
    assert "Failed tests:\n- `test_sample.py::test_four`" in text  # which one, not only how many


def test_all_passing_gives_a_passed_record_with_the_table(tmp_path):
    out = tmp_path / "record.md"
    xml = junit(tmp_path, SAMPLE)
    rc = gpu_record.main(str(notebooks_report(tmp_path)), str(tmp_path / "none.jsonl"), str(out), str(xml))
    text = out.read_text()
    assert rc == 0
    assert "**Result:** PASSED" in text and "2 other tests passed, 0 failed" in text
    assert "| Test file | Passed | Failed | Skipped |" in text


def test_without_junit_xml_only_notebooks_count(tmp_path):
    assert gpu_record.test_files(str(tmp_path / "missing.xml")) == []
    assert gpu_record.test_files("") == []
