"""`Trace.show_banks()` shows the conflicted access first, with its conflict degree (issue 13).

Before, the picture drew the warp's first 6 shared-memory accesses in execution order: for a transpose
tile, or notebook 05's column sums, those were the conflict-free row writes, and the 32-way column
read that the text is about never appeared.
"""

import ast
import linecache
import math

import matplotlib

matplotlib.use("Agg")
import nbformat
import numba
import numpy as np
import pytest
from numba import cuda

from helpers.errors import LearnerError
from helpers.tracer import trace
from helpers.tracer.pictures import bank_accesses
from support import ROOT, artists

MAX_PX = 1500  # a picture stays about 1,500 px tall (bench/picture_speed.py times the drawing)
MAX_ARTISTS = 450  # today 6 (six panels) and 396 (the one-screen case): a patch per thread and bank would be 600+


@cuda.jit
def _transpose_tile(a, out):
    tile = cuda.shared.array((32, 32), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[tx, ty]


@cuda.jit
def _transpose_padded_tile(a, out):
    tile = cuda.shared.array((32, 33), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[tx, ty]


@cuda.jit
def _broadcast(a, out):
    tile = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    tile[t] = a[t]
    tile[t + 32] = a[t + 32]
    cuda.syncthreads()
    # every lane reads the same word (one pass); then two words of bank 0, each read by 16 lanes (two)
    out[t] = tile[0]
    out[t + 32] = tile[(t % 2) * 32]


@cuda.jit
def _six_column_reads(a, out):
    tile = cuda.shared.array((32, 32), np.float32)
    t = cuda.threadIdx.x
    for r in range(32):
        tile[r, t] = a[r, t]
    cuda.syncthreads()
    s = tile[t, 0]
    s += tile[t, 1]
    s += tile[t, 2]
    s += tile[t, 3]
    s += tile[t, 4]
    s += tile[t, 5]
    out[t] = s


def _titles(fig):
    return [ax.get_title(loc="left") for ax in fig.axes]


def _square(kernel):
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(a)
    t = trace(kernel, 1, (32, 32), a, out, outputs=("out",))
    assert t.ok and np.array_equal(out, a.T), t.summary()
    return t


def test_the_transpose_tiles_column_read_is_drawn_first_as_a_32_way_conflict():
    t = _square(_transpose_tile)
    worst = bank_accesses(t)[0]
    assert (worst["ways"], worst["bank"], worst["threads"]) == (32, 0, 32)
    assert worst["ways"] == t.metrics.bank_ways_max  # the picture and t.summary() agree
    titles = _titles(t.show_banks())
    assert "tile[tx, ty]" in titles[0] and "read" in titles[0]
    assert "32-way conflict: 32 threads hit bank 0 at 32 different addresses" in titles[0]
    assert "tile[ty, tx] = a[ty, tx]" in titles[1] and "-way" not in titles[1]  # the row write: 32 banks


def test_the_padded_tiles_column_read_is_conflict_free():
    t = _square(_transpose_padded_tile)
    assert {p["ways"] for p in bank_accesses(t)} == {1}
    titles = _titles(t.show_banks())
    (read,) = [title for title in titles if "tile[tx, ty]" in title]
    assert "conflict-free" in read and "-way" not in read


def test_a_broadcast_is_not_called_a_conflict():
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    t = trace(_broadcast, 1, 32, a, out, outputs=("out",))
    assert np.array_equal(out[:32], np.zeros(32)) and np.array_equal(out[32:], np.tile([0, 32], 16))
    titles = _titles(t.show_banks())
    (same_word,) = [title for title in titles if "tile[0]" in title]
    assert "broadcast" in same_word and "conflict-free" in same_word and "-way" not in same_word
    # 32 lanes in one bank, but only 2 different words: 2 passes, not 32
    (two_words,) = [title for title in titles if "tile[(t % 2) * 32]" in title]
    assert "2-way conflict: 32 threads hit bank 0 at 2 different addresses" in two_words
    assert titles.index(two_words) == 0  # the only conflict comes first


@cuda.jit
def _doubles(a, out):
    tile = cuda.shared.array(64, np.float64)
    t = cuda.threadIdx.x
    tile[t] = a[t]
    tile[t + 32] = a[t + 32]
    cuda.syncthreads()
    s = tile[t]
    s += tile[2 * t]
    out[t] = s


def test_8_byte_elements_count_two_words_each():
    a = np.arange(64, dtype=np.float64)
    out = np.zeros(32, np.float64)
    t = trace(_doubles, 1, 32, a, out, outputs=("out",))
    ranked = bank_accesses(t)
    assert max(p["ways"] for p in ranked) == t.metrics.bank_ways_max == 2
    titles = _titles(t.show_banks())
    # tile[2 * t] spans words 4t and 4t + 1: lanes t, t + 8, t + 16, t + 24 share two banks, 4 passes
    (strided,) = [title for title in titles if "tile[2 * t]" in title]
    assert "2-way conflict: bank 0 holds 4 different words, 4 passes where 2 would do" in strided
    assert titles.index(strided) == 0
    for line in ("tile[t] = a[t]", "s = tile[t]"):  # 64 words: 2 passes is the best 32 banks can do
        (dense,) = [title for title in titles if line in title]
        assert "conflict-free: 64 different words in 2 passes" in dense and "-way" not in dense


@cuda.jit
def _shared_count(out):
    count = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        count[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(count, 0, 1)
    cuda.syncthreads()
    if t == 0:
        out[0] = count[0]


def test_atomics_on_one_address_are_not_called_free():
    out = np.zeros(1, np.int32)
    t = trace(_shared_count, 1, 32, out, outputs=("out",))
    assert out[0] == 32
    (atomic,) = [title for title in _titles(t.show_banks()) if "atomic" in title]
    assert "32 threads update one address: those atomics run one after another" in atomic
    assert "conflict-free" not in atomic and "broadcast" not in atomic


def test_limit_picks_the_worst_first_and_the_arguments_are_still_checked():
    t = _square(_transpose_tile)
    (only,) = _titles(t.show_banks(limit=1))
    assert "32-way" in only
    for bad in (dict(limit=0), dict(warp=32), dict(block=1), dict(array="nope")):
        with pytest.raises(LearnerError):
            t.show_banks(**bad)


@cuda.jit
def _twenty_lines(a, out):
    tile = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    tile[t] = a[t]
    cuda.syncthreads()
    s = tile[t]
    s += tile[(t + 1) % 32]
    s += tile[(t + 2) % 32]
    s += tile[(t + 3) % 32]
    s += tile[(t + 4) % 32]
    s += tile[(t + 5) % 32]
    s += tile[(t + 6) % 32]
    s += tile[(t + 7) % 32]
    s += tile[(t + 8) % 32]
    s += tile[(t + 9) % 32]
    s += tile[(t + 10) % 32]
    s += tile[(t + 11) % 32]
    s += tile[(t + 12) % 32]
    s += tile[(t + 13) % 32]
    s += tile[(t + 14) % 32]
    s += tile[(t + 15) % 32]
    s += tile[(t + 16) % 32]
    s += tile[(t + 17) % 32]
    s += tile[(t + 18) % 32]
    out[t] = s


def _drawn(t, limit):
    fig = t.show_banks(limit=limit)
    fig.canvas.draw()  # what Jupyter does to show it: any drawing error surfaces here
    return fig


@pytest.mark.parametrize("limit", [6, 7, 50])
def test_the_picture_stays_small_even_with_many_32_way_accesses(limit):
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    t = trace(_six_column_reads, 1, 32, a, np.zeros(32, np.float32), outputs=("out",))
    fig = _drawn(t, limit)
    assert fig.get_figheight() * fig.dpi <= MAX_PX and artists(fig) <= MAX_ARTISTS
    titles = _titles(fig)
    assert len(titles) == 6 and all("32-way conflict" in title for title in titles)  # the write made way


def test_a_large_limit_still_fits_on_one_screen():
    a = np.arange(32, dtype=np.float32)
    t = trace(_twenty_lines, 1, 32, a, np.zeros(32, np.float32), outputs=("out",))
    assert len(bank_accesses(t)) == 20  # the write and 19 reads
    fig = _drawn(t, 50)
    assert fig.get_figheight() * fig.dpi <= MAX_PX and artists(fig) <= MAX_ARTISTS
    assert 6 <= len(fig.axes) < 20 and "limit=50 would not fit on one screen" in fig._suptitle.get_text()


def _notebook_05_section_5():
    """Run notebook 05's bank-conflict cell as the notebook does; its namespace."""
    nb = nbformat.read(ROOT / "solutions" / "05_shared_memory.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "def column_sums(" in c.source]
    ns = {"np": np, "numba": numba, "cuda": cuda, "trace": trace, "math": math}
    name = "<notebook 05, bank conflicts>"
    linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(True), name)  # as Jupyter does
    exec(compile(ast.parse(cell.source), name, "exec"), ns)  # noqa: S102 - the course's own notebook
    shows = [c.source.strip() for c in nb.cells if c.cell_type == "code" and "show_banks" in c.source]
    return nb, ns, shows


def test_notebook_05_shows_the_conflicted_read_and_its_text_says_so():
    nb, ns, shows = _notebook_05_section_5()
    assert shows == ['traces["column_sums"].show_banks()', 'traces["column_sums_padded"].show_banks()']
    plain = _titles(eval(shows[0], ns))  # noqa: S307 - the notebook's own one-line cell
    padded = _titles(eval(shows[1], ns))  # noqa: S307
    assert "s += tile[t, c]" in plain[0] and "32-way conflict: 32 threads hit bank 0" in plain[0]
    (read,) = [title for title in padded if "s += tile[t, c]" in title]
    assert "conflict-free" in read and not any("-way" in title for title in padded)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "bank 0" in text and "32 passes" in text and "worst" in text
