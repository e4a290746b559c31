"""The access log's three ways of putting rows in thread order (helpers/ptx/log.py) build the same table.

Small logs are sorted (a stable argsort by thread); large ones are placed by counting, or, when every run
has the same threads, interleaved. All three must give the table a stable sort gives: thread order, and
one thread's rows in the order they were logged (the order the tracer's verdicts read).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.ptx import log
from helpers.ptx.log import AccessLog, Run


def _stable_sort(runs, gbase):
    cols = []
    for r in runs:
        n = len(r.elems)
        cols.append(
            np.array(
                [
                    np.full(n, r.aid),
                    r.elems,
                    np.full(n, r.kind),
                    r.tids,
                    np.broadcast_to(r.epochs, n),
                    np.full(n, r.loc),
                ]
            )
        )
    t = np.concatenate(cols, axis=1)
    t = t[:, np.argsort(t[3], kind="stable")]
    t[3] += gbase
    return t


def _runs(rng, n, same_threads, wide):
    runs = []
    everyone = np.sort(rng.choice(n, n // 2, replace=False))
    for k in range(6):
        tids = everyone if same_threads else np.sort(rng.choice(n, rng.integers(1, n), replace=False))
        epochs = rng.integers(0, 3, len(tids)) if k % 2 else 0
        if wide and k == 2:
            per = rng.integers(1, 4, len(tids))
            tids, epochs = np.repeat(tids, per), (np.repeat(epochs, per) if np.ndim(epochs) else epochs)
        runs.append(Run(k % 3, rng.integers(0, 1000, len(tids)), k % 2, tids, epochs, 10 + k, bool(wide and k == 2)))
    return runs


@pytest.mark.parametrize("same_threads,wide", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("sort_below", [1, 1 << 30])
def test_every_way_of_ordering_the_log_gives_the_stable_sort(same_threads, wide, sort_below, monkeypatch):
    monkeypatch.setattr(log, "SORT_BELOW", sort_below)
    rng = np.random.default_rng(int(same_threads) + 2 * int(wide))
    runs = _runs(rng, 400, same_threads, wide)
    got = AccessLog()
    got.runs = list(runs)
    assert np.array_equal(got.take(1000, 400), _stable_sort(runs, 1000))
    assert got.take(1000, 400) is None  # taking empties the log


def test_a_wide_access_logs_one_row_per_element_in_address_order():
    class Win:
        aid, itemsize = 3, 4

    got = AccessLog()
    got.record(Win, np.array([0, 6]), 8, np.array([5, 9]), 0, 1, 7)  # 8 bytes: 2 elements, or 3 when misaligned
    t = got.take(0, 10)
    assert t[1].tolist() == [0, 1, 1, 2, 3] and t[3].tolist() == [5, 5, 9, 9, 9]
