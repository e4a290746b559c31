"""bench/trace_scale.py traces what it says, with NumPy lanes and thread by thread alike.

No duration or memory is asserted here (tools/lint_tests.py): the figures are the README's, from running the script.
"""

import pytest

from bench import trace_scale


@pytest.mark.parametrize("per_thread", [False, True])
def test_saxpy_case_records_three_accesses_per_element_and_no_verdict(per_thread):
    r = trace_scale.measure("saxpy-1e4", per_thread)
    assert r.case == "saxpy-1e4" and r.threads == 10_240  # 40 blocks of 256 threads
    assert r.accesses == 3 * 10_000  # x[i], y[i] and out[i] for every i in range; the last 240 threads idle
    assert r.verdicts == "none"
