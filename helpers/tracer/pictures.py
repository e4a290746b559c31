"""Pictures of traced kernels, for beginners: which thread touched which element, and why.

Every function returns a matplotlib Figure (already closed with pyplot, so Jupyter shows it
exactly once when it is a cell's last value; `fig.savefig("x.png")` works too).
"""

from typing import NamedTuple

import numpy as np

from .._style import OTHER_BLOCK, PROBLEM, UNTOUCHED, finish, pyplot
from ..accesses import ATOMIC, READ, WRITE
from ..errors import LearnerError
from .metrics import warp_groups

__all__ = ["draw_accesses", "draw_coalescing", "draw_banks", "bank_accesses"]

MAX_TEXT_CELLS = 600  # above this, cells are too small to carry thread numbers
MAX_HEIGHT_IN = 15.0  # figure inches at 100 dpi: a trace picture stays about 1,500 px tall


def _thread_colours(n):
    """Light, distinct colours per thread id (no reds: red means "problem")."""
    from matplotlib import colormaps

    base = colormaps["tab20"](np.arange(20))
    base = np.delete(base, [6, 7, 14, 15], axis=0)  # tab20's reds and greys (other meanings)
    base[:, :3] = 0.6 * base[:, :3] + 0.4  # lighter, so black numbers stay readable
    return base[np.arange(n) % len(base)]


def _select_arrays(t, rows, array):
    """Array ids to draw: `array` (name) or every array this block touched, globals first."""
    if array is not None:
        return [t.array_id(array)]
    ids = list(np.unique(t.accesses.array[rows]))
    return sorted(ids, key=lambda i: (t.arrays[i].space != "global", i))


def _grid_shape(info):
    """(rows, columns) used to lay an array out: 2-D as is, 1-D wrapped at 32 like memory."""
    shape = info.shape or (1,)  # a 0-d array: one element
    if len(shape) == 1:
        cols = min(shape[0], 32)
        return -(-shape[0] // cols), cols
    cols = shape[-1]
    return int(np.prod(shape[:-1])), cols


class _Panel(NamedTuple):
    """One array's panel in draw_accesses: rows r0 to r1 - 1 of its nrows x ncols layout."""

    aid: int
    info: object
    nrows: int
    ncols: int
    mine: np.ndarray  # positions in t.accesses of this block's accesses to the array
    r0: int
    r1: int


def _problem_rows(t, block):
    """Access positions that some verdict points at, in this block."""
    marked = [v.accesses for v in t.verdicts if len(v.accesses)]
    if not marked:
        return np.zeros(0, np.int64)
    rows = np.unique(np.concatenate(marked))
    return rows[t.accesses.block[rows] == block]


def draw_accesses(t, block=0, array=None, max_rows=24):
    """One panel per array: each element coloured by the thread of `block` that touched it.

    Cell text is the thread number and what it did (W write, R read, A atomic); a red border
    marks an element a verdict is about; grey elements were touched only by other blocks.
    """
    plt = pyplot()
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    a = t.accesses
    if not 0 <= block < t.nblocks:
        raise LearnerError(f"block must be between 0 and {t.nblocks - 1}, not {block}.")
    in_block = np.flatnonzero(a.block == block)
    ids = _select_arrays(t, in_block, array)
    if not ids:
        ids = [i for i, info in enumerate(t.arrays) if info.space == "global"][:1]
    if not ids:
        raise LearnerError(f"There is nothing to draw: {t.kernel_name} has no array parameters and touched no array.")
    bad = _problem_rows(t, block)
    panels = []
    for aid in ids:
        info = t.arrays[aid]
        nrows, ncols = _grid_shape(info)
        mine = in_block[a.array[in_block] == aid]
        r0, r1 = 0, nrows
        if nrows > max_rows and len(mine):  # crop to the rows this block touched
            touched = a.index[mine] // ncols
            r0 = int(touched.min())
            r1 = min(nrows, max(int(touched.max()) + 1, r0 + 1), r0 + max_rows)
        panels.append(_Panel(aid, info, nrows, ncols, mine, r0, r1))

    widest = max(p.ncols for p in panels)  # one cell size for every panel, left-aligned
    width = min(16, max(7.5, 0.42 * widest + 1.5))  # wide enough for the title
    # Cells are square, so a panel is as tall as its rows at the width's cell size, plus its title.
    cell_in = (width - 1.2) / widest
    rows_drawn = sum(p.r1 - p.r0 for p in panels)
    room = MAX_HEIGHT_IN - 0.9 - 0.95 * len(panels)  # keep the whole picture about 1,500 px tall at most
    if cell_in * rows_drawn > room > 0:
        cell_in = room / rows_drawn
    heights = [cell_in * (p.r1 - p.r0) + 0.95 for p in panels]
    fig = plt.figure(figsize=(width, sum(heights) + 0.9))
    gs = fig.add_gridspec(len(panels), 1, height_ratios=heights)
    colours = _thread_colours(t.threads_per_block)
    bad_set = set(bad.tolist())
    for k, (aid, info, nrows, ncols, mine, r0, r1) in enumerate(panels):
        ax = fig.add_subplot(gs[k])
        others = np.unique(a.index[(a.array == aid) & (a.block != block)])
        show_text = (r1 - r0) * ncols <= MAX_TEXT_CELLS
        # who did what to each element: last writer wins the colour, else first reader
        cell = {}
        thread = a.thread  # a property computed over the whole log: once, not once per access
        for r in mine:
            idx, tid, kind = int(a.index[r]), int(thread[r]), int(a.kind[r])
            c = cell.setdefault(idx, {"tid": tid, "kinds": set(), "threads": set(), "bad": False})
            if kind != READ:
                c["tid"] = tid
            c["kinds"].add(kind)
            c["threads"].add(tid)
            c["bad"] |= r in bad_set
        plain, problem = [], []  # one collection each: thousands of add_patch calls took seconds
        others = set(others.tolist())
        for idx in range(r0 * ncols, min(r1 * ncols, info.size)):
            row, col = divmod(idx, ncols)
            y = row - r0
            c = cell.get(idx)
            face = colours[c["tid"]] if c else OTHER_BLOCK if idx in others else UNTOUCHED
            (problem if c and c["bad"] else plain).append(((col, y), face))
            if c and show_text:
                mark = "".join(m for m, kd in (("R", READ), ("W", WRITE), ("A", ATOMIC)) if kd in c["kinds"])
                more = "+" if len(c["threads"]) > 1 else ""
                ax.text(
                    col + 0.5,
                    y + 0.5,
                    f"{c['tid']}{more}\n{mark}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    zorder=4,
                    fontweight="bold" if c["bad"] else "normal",
                    in_layout=False,  # inside the cells: measuring hundreds of them made the layout slow
                )
        for cells, edge, lw, z in ((plain, "#555555", 0.6, 2), (problem, PROBLEM, 2.5, 3)):
            if cells:
                squares = [((x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)) for (x, y), _ in cells]
                ax.add_collection(
                    PolyCollection(squares, facecolors=[f for _, f in cells], edgecolors=edge, linewidths=lw, zorder=z)
                )
        ax.set_xlim(0, widest)
        ax.set_ylim(r1 - r0, 0)
        ax.set_aspect("equal")
        ax.set_xticks(np.arange(ncols) + 0.5 if ncols <= 40 else [])
        ax.set_xticklabels([str(i) for i in range(ncols)] if ncols <= 40 else [], fontsize=7)
        ax.set_yticks(np.arange(r1 - r0) + 0.5)
        step = ncols if len(info.shape) == 1 else 1
        ax.set_yticklabels([str((r0 + i) * step) for i in range(r1 - r0)], fontsize=7)
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        crop = f" (rows {r0}–{r1 - 1} of {nrows})" if (r0, r1) != (0, nrows) else ""
        title = f"{info.name}: shape {tuple(info.shape)}, {info.dtype}{crop}"
        oob = [e for e in t.out_of_bounds if e.array == aid and e.thread[0] // t.threads_per_block == block]
        if oob:
            shown = ", ".join(f"[{', '.join(map(str, e.index))}]" for e in oob[:4])
            title += f"\nout of bounds in this block: {shown}" + (" …" if len(oob) > 4 else "")
        ax.set_title(title, fontsize=9, loc="left", color=PROBLEM if oob else "black")

    fig.suptitle(
        f"{t.kernel_name}: which thread of block {_block_label(t, block)} touched "
        f"which element\nnumber = thread (linear id in the block; + = several "
        f"threads), R read, W write, A atomic",
        fontsize=10,
    )
    legend = [
        Patch(facecolor=UNTOUCHED, edgecolor="#555555", label="not touched"),
        Patch(facecolor=OTHER_BLOCK, edgecolor="#555555", label="other blocks only"),
        Patch(facecolor="white", edgecolor=PROBLEM, linewidth=2.5, label="problem (see t.summary())"),
    ]
    fig.legend(handles=legend, loc="lower center", ncol=3, fontsize=8, frameon=False)
    top = 1 - 0.75 / fig.get_figheight()
    fig.tight_layout(rect=(0, 0.4 / fig.get_figheight(), 1, top), h_pad=1.5)
    return finish(fig)


def _block_label(t, block):
    b = t.block_of(block * t.threads_per_block)
    return str(b[0]) if t.griddim[1] == t.griddim[2] == 1 else str(b)


def _warp_selection(t, space, array, block, warp, limit):
    """The warp-wide accesses of one warp, as lists of access positions (first `limit`)."""

    rows, wid, nw, addr = warp_groups(t, space)
    a = t.accesses
    keep = (a.block[rows] == block) & (a.warp[rows] == warp)
    if array is not None:
        keep &= a.array[rows] == t.array_id(array)
    groups = []
    for g in np.unique(wid[keep]):
        m = keep & (wid == g)
        groups.append((rows[m], addr[m]))
    groups.sort(key=lambda ga: ga[0][0])  # in execution order
    return groups[:limit], len(groups)


def _access_title(t, rows):
    a = t.accesses
    r = rows[0]
    info = t.arrays[a.array[r]]
    loc = t.locations[a.loc[r]]
    verb = {READ: "read", WRITE: "write", ATOMIC: "atomic"}[int(a.kind[r])]
    return f"line {loc.line} `{loc.source}` — {verb} {info.var}", info


def draw_coalescing(t, array=None, block=0, warp=0, limit=6):
    """The 32-byte memory sectors one warp touches at each global access.

    One panel per warp-wide access: the sectors it touched, side by side (a gap `//` means
    sectors in between were skipped), with each lane placed at the bytes it read or wrote.
    Fewer, fuller sectors = better coalescing.
    """
    plt = pyplot()
    from matplotlib.patches import Rectangle

    groups, total = _warp_selection(t, "global", array, block, warp, limit)
    if not groups:
        raise LearnerError(
            f"Warp {warp} of block {block} made no global-memory accesses" + (f" to {array}" if array else "") + "."
        )
    fig = plt.figure(figsize=(13, 1.9 * len(groups) + 0.8))
    a = t.accesses
    for k, (rows, addr) in enumerate(groups):
        ax = fig.add_subplot(len(groups), 1, k + 1)
        title, info = _access_title(t, rows)
        size = info.itemsize
        sectors = np.unique(np.r_[addr // 32, (addr + size - 1) // 32])
        needed = int(np.ceil(len(np.unique(a.index[rows])) * size / 32))
        slot = {s: i for i, s in enumerate(sectors)}
        shown = sectors[:24]
        for s in shown:
            x = slot[s] * 36
            ax.add_patch(Rectangle((x, 0), 32, 1, facecolor="#c6dbef", edgecolor="#08519c"))
            ax.text(x + 16, -0.25, f"bytes {s * 32}–{s * 32 + 31}", ha="center", va="top", fontsize=6)
            if slot[s] and sectors[slot[s] - 1] != s - 1:
                ax.text(x - 2, 0.5, "//", ha="center", va="center", fontsize=9, color="#555555")
        lanes = a.thread[rows] % 32
        for lane, ad in zip(lanes, addr):
            s = ad // 32
            if s not in slot or slot[s] >= len(shown):
                continue
            x = slot[s] * 36 + ad % 32
            ax.add_patch(
                Rectangle(
                    (x, 0.15), min(size, 32 - ad % 32), 0.7, facecolor="#fd8d3c", edgecolor="black", linewidth=0.4
                )
            )
            ax.text(x + size / 2, 0.5, str(lane), ha="center", va="center", fontsize=5, rotation=90)
        eff = needed / len(sectors)
        ax.set_title(
            f"{title}: {len(np.unique(lanes))} lanes touched {len(sectors)} sector(s), "
            f"{needed} would do ({eff:.0%})" + ("" if len(sectors) <= len(shown) else f" — first {len(shown)} shown"),
            fontsize=9,
            loc="left",
            color="black" if eff >= 0.5 else PROBLEM,
        )
        ax.set_xlim(-4, max(len(shown), 8) * 36)
        ax.set_ylim(-0.7, 1.2)
        ax.axis("off")
    more = f" (first {len(groups)} of {total} accesses)" if total > len(groups) else ""
    fig.suptitle(
        f"{t.kernel_name}: memory sectors (32 bytes) touched by warp {warp} of block "
        f"{_block_label(t, block)}{more}; orange = a lane's element, number = lane",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return finish(fig)


def bank_accesses(t, array=None, block=0, warp=0):
    """The shared-memory access instructions of one warp, worst bank conflict first.

    An instruction is one source line's read, write or atomic on one shared array; in a loop the
    warp runs it many times, and the worst of those runs stands for it. Returns a list of dicts,
    ranked by conflict degree (then by first run): `rows` (access positions of the run shown),
    `banks` ({bank: {word: [lanes]}}), `passes` (most distinct 4-byte words in one bank: threads
    on the same word share it by broadcast, as on the hardware), `ideal` (passes the words need
    at best: 1 for 4-byte elements), `ways` (passes / ideal, rounded up: 1 means conflict-free),
    `bank` (the bank with the most words), `threads` (lanes that hit it), `runs` and `conflicted`
    (how often the warp ran the instruction, and how many of those runs had a conflict).
    """
    rows, wid, _, addr = warp_groups(t, "shared")
    a = t.accesses
    keep = (a.block[rows] == block) & (a.warp[rows] == warp)
    if array is not None:
        keep &= a.array[rows] == t.array_id(array)
    rows, wid, addr = rows[keep], wid[keep], addr[keep]
    instructions = {}
    for g in np.unique(wid):
        m = wid == g
        r, ad = rows[m], addr[m]
        info = t.arrays[a.array[r[0]]]
        words_per = max(info.itemsize // 4, 1)  # an 8-byte element spans two banks
        banks = {}
        for lane, first in zip(a.thread[r] % 32, ad // 4):
            for w in range(int(first), int(first) + words_per):
                lanes = banks.setdefault(w % 32, {}).setdefault(w, [])
                if int(lane) not in lanes:
                    lanes.append(int(lane))
        nwords = sum(len(v) for v in banks.values())
        passes = max(len(v) for v in banks.values())
        ideal = max(-(-nwords // 32), 1)
        bank = min(banks, key=lambda b: (-len(banks[b]), b))
        run = {
            "rows": r,
            "banks": banks,
            "words": nwords,
            "passes": passes,
            "ideal": ideal,
            "ways": -(-passes // ideal),
            "bank": bank,
            "threads": len({lane for lanes in banks[bank].values() for lane in lanes}),
            "first": int(r.min()),
            "kind": int(a.kind[r[0]]),
        }
        key = (int(a.loc[r[0]]), int(a.array[r[0]]), int(a.kind[r[0]]))
        instructions.setdefault(key, []).append(run)
    ranked = []
    for runs in instructions.values():
        worst = max(runs, key=lambda run: (run["ways"], run["passes"], -run["first"]))
        first = min(run["first"] for run in runs)
        conflicted = sum(run["ways"] > 1 for run in runs)
        ranked.append(dict(worst, runs=len(runs), conflicted=conflicted, first=first))
    ranked.sort(key=lambda p: (-p["ways"], -p["passes"], p["first"]))
    return ranked


def bank_verdict(p):
    """One line on one access: its conflict degree, in words a learner can check on the picture."""
    banks, bank = p["banks"], p["bank"]
    if p["ways"] > 1:
        if p["ideal"] == 1:
            return (
                f"{p['ways']}-way conflict: {p['threads']} threads hit bank {bank} at {p['passes']} "
                f"different addresses, {p['passes']} passes instead of 1"
            )
        return (
            f"{p['ways']}-way conflict: bank {bank} holds {p['passes']} different words, "
            f"{p['passes']} passes where {p['ideal']} would do"
        )
    if p["ideal"] > 1:  # 8-byte (or wider) elements: more words than banks
        return f"conflict-free: {p['words']} different words in {p['passes']} passes, the fewest 32 banks allow"
    words = [lanes for per_word in banks.values() for lanes in per_word.values()]
    most = max(len(lanes) for lanes in words)
    if most > 1 and p["kind"] == ATOMIC:  # no bank conflict, but the updates of one address take turns
        return f"no bank conflict, but up to {most} threads update one address: those atomics run one after another"
    if most > 1 and p["kind"] == WRITE:
        return f"conflict-free: up to {most} threads write one address, one pass (one of the writes is kept)"
    if len(words) == 1 and most > 1:
        return f"conflict-free: all {most} threads read the same address, a broadcast in 1 pass"
    if most > 1:
        return (
            f"conflict-free: threads on the same address share it (a broadcast, up to {most} threads "
            f"on one address), and no bank is asked for two addresses: 1 pass"
        )
    return "conflict-free: every bank is asked for one address at most, 1 pass"


def draw_banks(t, array=None, block=0, warp=0, limit=6):
    """Shared-memory banks for one warp: one column per bank (32 banks of 4 bytes), worst conflict first.

    One panel per access instruction (a source line's read or write of a shared array; the worst
    time the warp ran it). Each lane sits in the column of the bank its word lives in; lanes on the
    same word share it (broadcast). A column holding several different words needs several passes:
    those extra passes are the bank conflict and are drawn in red.
    """
    plt = pyplot()
    from matplotlib.collections import PolyCollection

    ranked = bank_accesses(t, array=array, block=block, warp=warp)
    if not ranked:
        raise LearnerError(
            f"Warp {warp} of block {block} made no shared-memory accesses" + (f" to {array}" if array else "") + "."
        )
    head = 1.0  # inches per panel for its two-line title and the bank numbers
    panels = ranked[:limit]

    # About 1,500 px tall at most: the least conflicted panels make way until every pass gets some room,
    # and beyond the default 6 until each has room for its lane numbers.
    def level(panels):
        return (MAX_HEIGHT_IN - 1.0 - head * len(panels)) / sum(p["passes"] for p in panels)

    while len(panels) > 1 and (level(panels) < 0.04 or (len(panels) > 6 and level(panels) < 0.12)):
        panels.pop()
    levels = sum(p["passes"] for p in panels)
    level_in = min(0.3, (MAX_HEIGHT_IN - 1.0 - head * len(panels)) / levels)
    fig = plt.figure(figsize=(13, levels * level_in + head * len(panels) + 1.0))
    gs = fig.add_gridspec(len(panels), 1, height_ratios=[p["passes"] for p in panels])
    labels = level_in >= 0.11  # room for a lane number in each cell
    for k, p in enumerate(panels):
        ax = fig.add_subplot(gs[k])
        title, _ = _access_title(t, p["rows"])
        cells, faces = [], []
        for bank, words in p["banks"].items():
            for level, (_word, lanes) in enumerate(sorted(words.items())):
                cells.append(((bank, level), (bank + 1, level), (bank + 1, level + 1), (bank, level + 1)))
                faces.append("#9ecae1" if level == 0 else PROBLEM)
                if labels:
                    text = str(lanes[0]) + ("+" if len(lanes) > 1 else "")
                    ax.text(bank + 0.5, level + 0.5, text, ha="center", va="center", fontsize=6, in_layout=False)
        ax.add_collection(PolyCollection(cells, facecolors=faces, edgecolors="black", linewidths=0.5))
        depth = p["passes"]
        ax.set_xlim(0, 32)
        ax.set_ylim(depth, 0)
        ax.set_xticks(np.arange(32) + 0.5)
        ax.set_xticklabels([str(b) for b in range(32)], fontsize=6)
        step = 1 if labels else 4
        ax.set_yticks(np.arange(0, depth, step) + 0.5)
        ax.set_yticklabels([f"pass {q + 1}" for q in range(0, depth, step)], fontsize=6)
        ax.tick_params(length=0)
        runs = ""
        if p["runs"] > 1 and p["conflicted"]:
            runs = f", the worst of the {p['runs']} times warp {warp} ran it ({p['conflicted']} with a conflict)"
        elif p["runs"] > 1:
            runs = f", run {p['runs']} times by warp {warp}, never with a conflict"
        ax.set_title(
            f"{title}{runs}\n{bank_verdict(p)}", fontsize=9, loc="left", color=PROBLEM if p["ways"] > 1 else "black"
        )
    more = f" ({len(panels)} of {len(ranked)} shared-memory accesses)" if len(ranked) > len(panels) else ""
    if len(panels) < min(limit, len(ranked)):
        more += f"; limit={limit} would not fit on one screen"
    fig.suptitle(
        f"{t.kernel_name}: shared-memory banks used by warp {warp} of block {_block_label(t, block)}, "
        f"worst conflict first{more}\nnumber = lane (+ = several lanes on the same word: for a read, a "
        f"broadcast, no conflict); red = an extra pass",
        fontsize=10,
    )
    fig.supxlabel("bank", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()), h_pad=1.2)
    return finish(fig)
