"""Notebook 13 - several GPUs: splitting work over devices, combining their results, choosing a copy route."""

from helpers.exercises import FunctionExercise, Ints, register


def _split_range(n, k):
    """Every device's (start, stop), np.array_split's way (the notebook and _Parts use it)."""
    return tuple(_chunk_range(n, k, d) for d in range(k))


def _chunk_range(n, k, d):
    q, r = divmod(n, k)
    start = d * q + min(d, r)
    return (start, start + q + (1 if d < r else 0))


def _ceil_chunk(n, k, d):
    size = -(-n // k)
    return (min(d * size, n), min((d + 1) * size, n))


def _remainder_last(n, k, d):
    q = n // k
    return (d * q, n if d == k - 1 else (d + 1) * q)


def _linspace(n, k, d):
    return (d * n // k, (d + 1) * n // k)


def _tail_dropped(n, k, d):
    return (d * (n // k), (d + 1) * (n // k))


chunk_range = FunctionExercise(
    prompt="Write chunk_range(n, k, d): the (start, stop) of device d's chunk when n elements are split over k "
    "devices (d = 0 .. k-1) as np.array_split does: every chunk has n // k elements and the first n % k chunks "
    "one more, in device order, covering 0 .. n with no overlap. With n < k some chunks are empty (start == stop).",
    reference=_chunk_range,
    inputs={"n": Ints(0, 1000), "k": Ints(1, 8), "d": Ints(0, 7)},
    where=lambda n, k, d: d < k,
    edge_cases=((10, 4, 0), (10, 4, 1), (10, 4, 2), (10, 4, 3), (3, 4, 3), (0, 2, 1), (7, 1, 0), (1, 3, 2)),
    trials=200,
    mistakes=(
        (
            _ceil_chunk,
            "chunks of ceil(n / k) leave the last device(s) with less, or nothing: the sizes must differ by at "
            "most one, the extra elements going to the first n % k chunks.",
        ),
        (
            _remainder_last,
            "the last device gets all n % k leftover elements; spread them, one each, over the first n % k chunks.",
        ),
        (
            _linspace,
            "d * n // k .. (d + 1) * n // k is balanced and covering too, but puts the longer chunks last; "
            "np.array_split gives the extra elements to the first n % k devices.",
        ),
        (_tail_dropped, "with n // k per device the last n % k elements belong to no device: nothing sums them."),
    ),
    hints=(
        "q, r = divmod(n, k): chunk d has q + 1 elements when d < r, else q.",
        "Device d starts after d chunks, min(d, r) of which had the extra element: start = d * q + min(d, r).",
    ),
)

# ----------------------------------------------------------------------------- combining partial results


class _Parts:
    """Per-device argmax results of a random integer array split over k devices (ties likely):
    ((start, local_index, local_max), ...), one per non-empty chunk, in device order."""

    def draw(self, rng):
        n, k = int(rng.integers(1, 60)), int(rng.integers(1, 6))
        x = rng.integers(0, int(rng.choice([3, 10, 100])), size=n)
        parts = []
        for start, stop in _split_range(n, k):
            if stop > start:
                i = int(x[start:stop].argmax())
                parts.append((start, i, int(x[start + i])))
        return tuple(parts)


def _combine_argmax(parts):
    best = None
    for start, i, value in parts:
        if best is None or value > best[1]:  # strict: on a tie the earlier chunk (the first occurrence) wins
            best = (start + i, value)
    return best


def _local_index(parts):
    best = None
    for _, i, value in parts:
        if best is None or value > best[1]:
            best = (i, value)
    return best


def _last_tie(parts):
    best = None
    for start, i, value in parts:
        if best is None or value >= best[1]:
            best = (start + i, value)
    return best


combine_argmax = FunctionExercise(
    prompt="Each device found the largest element of its chunk: parts is a tuple of (start, local_index, "
    "local_max), one per device in order, where start is where the chunk begins in the whole array and "
    "local_index counts from that start. Write combine_argmax(parts) returning (global_index, max) for the whole "
    "array, the first occurrence on a tie, as np.argmax.",
    reference=_combine_argmax,
    inputs={"parts": _Parts()},
    edge_cases=((((0, 2, 5), (4, 1, 5)),), (((0, 0, 1), (3, 2, 9), (6, 0, 9)),), (((0, 3, 7),),)),
    trials=150,
    mistakes=(
        (
            _local_index,
            "local_index counts from the start of its device's chunk: add that chunk's start to get the index "
            "in the whole array.",
        ),
        (
            _last_tie,
            "on a tie the later device won; np.argmax returns the first occurrence, so keep the earlier chunk "
            "(compare with >, not >=).",
        ),
    ),
    hints=(
        "Keep the best (index, value) so far; a part replaces it only when its value is strictly larger.",
        "The global index of a part's maximum is start + local_index.",
    ),
)

# ----------------------------------------------------------------------------- choosing a copy route


class _PeerMatrix:
    """The notebook's peer table on a machine of 2-4 GPUs: deviceCanAccessPeer(i, j) for i != j, usually
    symmetric, sometimes one way only; the diagonal is False (the notebook never asks a GPU about itself)."""

    def draw(self, rng):
        k = int(rng.integers(2, 5))
        m = [[False] * k for _ in range(k)]
        for i in range(k):
            for j in range(i + 1, k):
                both = bool(rng.random() < 0.6)
                m[i][j] = m[j][i] = both
                if not both and rng.random() < 0.3:
                    m[i][j] = True  # one direction only
        return tuple(tuple(row) for row in m)


def _copy_route(peer, src, dst):
    if src == dst:
        return "local"
    if peer[src][dst] and peer[dst][src]:
        return "peer"
    return "host"


def _diagonal_ignored(peer, src, dst):
    return "peer" if peer[src][dst] and peer[dst][src] else "host"


def _one_way(peer, src, dst):
    if src == dst:
        return "local"
    return "peer" if peer[src][dst] else "host"


def _either_way(peer, src, dst):
    if src == dst:
        return "local"
    return "peer" if peer[src][dst] or peer[dst][src] else "host"


copy_route = FunctionExercise(
    prompt="peer[i][j] is cp.cuda.runtime.deviceCanAccessPeer(i, j) for every pair of different GPUs, and False "
    "on the diagonal (peer[i][i]), as the notebook builds it. Write "
    "copy_route(peer, src, dst) returning how to copy an array from GPU src to GPU dst: 'local' when they are the "
    "same GPU, 'peer' (a direct copy, peer access enabled both ways) only when peer[src][dst] and peer[dst][src] "
    "are both True, else 'host' (staged through host memory).",
    reference=_copy_route,
    inputs={"peer": _PeerMatrix(), "src": Ints(0, 3), "dst": Ints(0, 3)},
    where=lambda peer, src, dst: src < len(peer) and dst < len(peer),
    edge_cases=(
        (((False, True), (True, False)), 0, 0),
        (((False, True), (False, False)), 0, 1),
        (((False, True), (True, False)), 1, 0),
        (((False, False), (False, False)), 1, 0),
    ),
    trials=150,
    mistakes=(
        (
            _diagonal_ignored,
            "peer[i][i] is False (a GPU is not its own peer), yet a copy within one GPU needs no route at all: "
            "check src == dst first and return 'local'.",
        ),
        (
            _one_way,
            "access one way is not enough here: the direct route needs peer[src][dst] and peer[dst][src].",
        ),
        (
            _either_way,
            "access one way is not enough here: the direct route needs peer[src][dst] and peer[dst][src].",
        ),
    ),
    hints=(
        "Three cases, in this order: the same GPU, peers both ways, everything else.",
        "if src == dst: return 'local'; if peer[src][dst] and peer[dst][src]: return 'peer'; return 'host'",
    ),
)

EXERCISES = register(__name__, globals())
