"""helpers.tracer.findings.block_chunks: the analyses run a chunk of blocks at a time (issue 33: the
temporaries stay the chunk's size), so every range must hold whole blocks and together cover the log."""

import numpy as np
import pytest

from helpers.accesses import READ, ArrayInfo
from helpers.tracer import findings
from helpers.tracer.result import Location, Trace


def _trace(gtid, tpb):
    n = len(gtid)
    arrays = [ArrayInfo("x", "global", (n,), np.dtype(np.float32), (4,))]
    table = [np.zeros(n, np.int64), np.arange(n), np.full(n, READ), gtid, np.zeros(n, np.int64), np.zeros(n, np.int64)]
    nblocks = int(gtid.max()) // tpb + 1
    return Trace.from_table("k", (nblocks, 1, 1), (tpb, 1, 1), arrays, table, [Location("k.py", 1, "k")])


@pytest.mark.parametrize("seed", range(5))
def test_ranges_cover_the_log_and_never_split_a_block(seed, monkeypatch):
    monkeypatch.setattr(findings, "CHUNK", 50)
    rng = np.random.default_rng(seed)
    tpb = 8
    per_block = rng.integers(0, 40, 30)  # accesses each block made, some none, some over a chunk
    gtid = np.concatenate([b * tpb + rng.integers(0, tpb, k) for b, k in enumerate(per_block)])
    t = _trace(gtid, tpb)
    ranges = findings.block_chunks(t)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(gtid)
    assert all(stop == start for (_, stop), (start, _) in zip(ranges[:-1], ranges[1:]))
    assert len(ranges) > 1
    block = gtid // tpb
    for start, stop in ranges[1:]:
        assert block[start - 1] != block[start]  # a cut falls between two blocks


def test_interleaved_blocks_stay_one_range(monkeypatch):
    monkeypatch.setattr(findings, "CHUNK", 4)
    gtid = np.array([0, 8, 1, 9, 2, 10, 3, 11, 4, 12])  # two blocks side by side (a grid sync)
    assert findings.block_chunks(_trace(gtid, 8)) == [(0, 10)]
