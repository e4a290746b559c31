"""The coalescing and bank-conflict tables group rows by packed int64 keys (issue 33: np.unique over
stacked columns was most of the analysis time); on random access patterns they must give exactly
the tables the row-wise np.unique gave, which the slow references below keep."""

import numpy as np
import pytest

from helpers.accesses import READ, WRITE, ArrayInfo
from helpers.tracer.findings import distinct, group_ids
from helpers.tracer.metrics import bank_table, coalescing_table, warp_groups
from helpers.tracer.result import Location, Trace


def _reference_coalescing(t):
    rows, wid, nw, addr = warp_groups(t, "global")
    if nw == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    itemsize = np.array([info.itemsize for info in t.arrays])[t.accesses.array[rows]]
    first, last = addr // 32, (addr + itemsize - 1) // 32
    pairs = np.unique(np.stack([np.r_[wid, wid], np.r_[first, last]]), axis=1)
    elems = np.unique(np.stack([wid, t.accesses.index[rows], itemsize]), axis=1)
    needed = np.bincount(elems[0], weights=elems[2], minlength=nw)
    return np.bincount(pairs[0], minlength=nw), np.ceil(needed / 32).astype(np.int64)


def _reference_banks(t):
    rows, wid, nw, addr = warp_groups(t, "shared")
    if nw == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = t.accesses
    itemsize = np.array([info.itemsize for info in t.arrays])[a.array[rows]]
    words_per = np.maximum(itemsize // 4, 1)
    rep = np.repeat(np.arange(len(rows)), words_per)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(words_per) - words_per, words_per)
    word = addr[rep] // 4 + offs
    base = np.array([i << 32 for i in range(len(t.arrays))], dtype=np.int64)[a.array[rows]][rep]
    uniq = np.unique(np.stack([wid[rep], word + base]), axis=1)
    bank = (uniq[1] - (uniq[1] >> 32 << 32)) % 32
    per_bank = np.unique(np.stack([uniq[0], bank]), axis=1, return_counts=True)
    passes = np.zeros(nw, np.int64)
    np.maximum.at(passes, per_bank[0][0], per_bank[1])
    ideal = np.maximum(np.ceil(np.bincount(uniq[0], minlength=nw) / 32).astype(np.int64), 1)
    return passes, ideal


def _reference_group_ids(*cols):
    order = np.lexsort(cols[::-1])
    change = np.zeros(len(order), bool)
    change[0] = True
    for c in cols:
        s = c[order]
        change[1:] |= s[1:] != s[:-1]
    gid = np.empty(len(order), np.int64)
    gid[order] = np.cumsum(change) - 1
    return gid, int(gid.max()) + 1


def _random_trace(rng):
    """A launch of 1-3 blocks whose threads touch global and shared arrays of assorted element
    sizes and shapes (transposed strides too) at random elements, lines and epochs."""
    arrays = []
    for k in range(int(rng.integers(1, 5))):
        dtype = np.dtype(rng.choice(["f4", "f8", "i2", "u1", "c16"]))
        shape = (int(rng.integers(1, 300)),) if rng.random() < 0.5 else tuple(int(n) for n in rng.integers(1, 20, 2))
        strides = np.zeros(shape, dtype).strides
        if len(shape) == 2 and rng.random() < 0.3:
            strides = strides[::-1]  # a transposed view: column-major addresses
        arrays.append(ArrayInfo(f"a{k}", str(rng.choice(["global", "shared"])), shape, dtype, strides))
    tpb, nblocks = int(rng.choice([32, 48, 64, 96])), int(rng.integers(1, 4))
    n = int(rng.integers(1, 3000))
    aid = rng.integers(0, len(arrays), n)
    size = np.array([max(int(np.prod(a.shape)), 1) for a in arrays])
    index = (rng.random(n) * size[aid]).astype(np.int64)
    if rng.random() < 0.5:  # neighbours and repeats, as real kernels make
        index = np.minimum(np.arange(n) // int(rng.integers(1, 4)), size[aid] - 1)
    table = [aid, index, rng.choice([READ, WRITE], n), rng.integers(0, tpb * nblocks, n), rng.integers(0, 3, n)]
    table.append(rng.integers(0, 4, n))
    locations = [Location("kernel.py", line, "k") for line in range(4)]
    return Trace.from_table("k", (nblocks, 1, 1), (tpb, 1, 1), arrays, table, locations)


@pytest.mark.parametrize("seed", range(60))
def test_packed_tables_equal_the_row_wise_unique(seed):
    t = _random_trace(np.random.default_rng(seed))
    for got, want in zip(coalescing_table(t), _reference_coalescing(t)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(bank_table(t), _reference_banks(t)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("wide", [False, True])
def test_grouping_and_distinct_rows_match_the_references(wide):
    rng = np.random.default_rng(7)
    cols = [rng.integers(-5, 9, 5000), rng.integers(0, 3, 5000), rng.integers(100, 140, 5000)]
    if wide:  # spans that cannot share one int64 key: the lexsort fallback
        cols[1] = cols[1] << 40
        cols[2] = cols[2] << 40
    gid, ng = group_ids(*cols)
    want_gid, want_ng = _reference_group_ids(*cols)
    np.testing.assert_array_equal(gid, want_gid)
    assert ng == want_ng
    (got, counts), (want, want_counts) = (
        distinct(*cols, counts=True),
        np.unique(np.stack(cols), axis=1, return_counts=True),
    )
    np.testing.assert_array_equal(np.stack(got), want)
    np.testing.assert_array_equal(counts, want_counts)


@pytest.mark.parametrize("seed", range(20))
def test_tables_a_chunk_of_blocks_at_a_time_equal_the_whole_log(seed, monkeypatch):
    from helpers.tracer import findings

    t = _random_trace(np.random.default_rng(seed))
    t.accesses.gtid = np.sort(t.accesses.gtid)  # blocks one after another, as the tracer runs them
    whole = coalescing_table(t), bank_table(t)
    monkeypatch.setattr(findings, "CHUNK", 37)
    assert len(findings.block_chunks(t)) > 1 or len(t.accesses) <= 37 or t.nblocks == 1
    for got, want in zip((*coalescing_table(t), *bank_table(t)), (*whole[0], *whole[1])):
        np.testing.assert_array_equal(got, want)
