"""Wrong answers for helpers/problems/nb13.py (several GPUs)."""

from . import Wrong


def chunk_ceil(n, k, d):
    size = (n + k - 1) // k
    return (min(d * size, n), min((d + 1) * size, n))


def chunk_remainder_last(n, k, d):
    q = n // k
    return (d * q, n if d == k - 1 else (d + 1) * q)


def chunk_drops_tail(n, k, d):
    q = n // k
    return (d * q, (d + 1) * q)


def chunk_linspace(n, k, d):
    """Balanced and covering, but the extra elements go to the later chunks (not np.array_split's way)."""
    return (d * n // k, (d + 1) * n // k)


def chunk_stop_inclusive(n, k, d):
    q, r = divmod(n, k)
    start = d * q + min(d, r)
    return (start, start + q + (1 if d < r else 0) - 1)


def argmax_local(parts):
    best = None
    for _, i, value in parts:
        if best is None or value > best[1]:
            best = (i, value)
    return best


def argmax_last_tie(parts):
    best = None
    for start, i, value in parts:
        if best is None or value >= best[1]:
            best = (start + i, value)
    return best


def argmax_first_device(parts):
    start, i, value = parts[0]
    return (start + i, value)


def argmax_stop_as_offset(parts):
    """Adds the device number instead of the chunk's start."""
    best = None
    for d, (_, i, value) in enumerate(parts):
        if best is None or value > best[1]:
            best = (d + i, value)
    return best


def route_no_local(peer, src, dst):
    return "peer" if peer[src][dst] and peer[dst][src] else "host"


def route_one_way(peer, src, dst):
    if src == dst:
        return "local"
    return "peer" if peer[src][dst] else "host"


def route_always_peer(peer, src, dst):
    return "local" if src == dst else "peer"


def route_transposed_or(peer, src, dst):
    if src == dst:
        return "local"
    return "peer" if peer[src][dst] or peer[dst][src] else "host"


WRONG = {
    "chunk_range": [
        Wrong("ceil chunks", chunk_ceil, "differ by at most one"),
        Wrong("remainder on the last device", chunk_remainder_last, "leftover elements"),
        Wrong("tail dropped", chunk_drops_tail, "belong to no device"),
        Wrong("extra elements at the end", chunk_linspace, "longer chunks last"),
        Wrong("stop inclusive", chunk_stop_inclusive, "returned"),
    ],
    "combine_argmax": [
        Wrong("local index", argmax_local, "add that chunk's start"),
        Wrong("last on a tie", argmax_last_tie, "first occurrence"),
        Wrong("first device only", argmax_first_device, "returned"),
        Wrong("device number as offset", argmax_stop_as_offset, "returned"),
    ],
    "copy_route": [
        Wrong("diagonal taken literally", route_no_local, "not its own peer"),
        Wrong("one direction", route_one_way, "one way is not enough"),
        Wrong("always peer", route_always_peer, "returned"),
        Wrong("either direction", route_transposed_or, "one way is not enough"),
    ],
}
WRONG_GPU = {}
