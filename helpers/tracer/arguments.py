"""A traced launch's arguments: arrays become traced arrays, one per piece of memory.

Accesses are logged by array id and element, so two arguments that are views of the same memory
(`x` and `x[:]`, `a[:-1]` and `a[1:]`, a device array and a slice of it) must share one id, each
element of a view logged as the element of memory it is: otherwise a thread writing `y[i]` and
another reading `x[i]` of the same bytes would never be seen as a race. The same object passed
twice is the simplest case.
"""

import numpy as np

from .. import _numba
from ..accesses import ArrayInfo
from ..errors import LearnerError
from .arrays import TracedArray


def signature_refusal(kernel, params, kargs):
    """One sentence when the kernel's `@cuda.jit("void(...)")` signature does not take these arrays
    (dtype or dimensions), else None: a GPU launch of it does not run the kernel as written (see
    helpers._numba.declared_signatures), so neither does trace()."""
    declared = _numba.declared_signatures(kernel)
    if declared is None:
        return None
    sigs, specialized = declared
    wrong = [_first_mismatch(sig, params, kargs) for sig in sigs]
    if not all(wrong):
        return None
    name, want, value = wrong[0]
    fn = _numba.python_function(kernel).__name__
    got = _described(value)
    want_text = _described_type(want)
    if not specialized:
        return (
            f"Your kernel {fn} was compiled for the signatures in its @cuda.jit([...]), and none takes {name} "
            f"as {got}: on a GPU Numba refuses this launch (no matching definition): pass {name} as {want_text} "
            "or add a signature for these arrays."
        )
    fix = f"pass {name} as {want_text}"
    if _is_array_type(want) and getattr(value, "ndim", None) == want.ndim:
        fix += f" ({name}.astype(np.{want.dtype}))"
    return (
        f"Your kernel {fn} is declared with a signature whose parameter {name} is {want_text}, but {name} is "
        f"{got}: on a GPU Numba launches it anyway and reads the memory as the signature says (wrong numbers, or "
        f"a crash), so trace() refuses it: {fix}, or change the signature to match (or drop it: plain @cuda.jit)."
    )


def _first_mismatch(sig, params, kargs):
    """(parameter, declared type, value) of the first array argument `sig` does not take, else None."""
    if len(sig) != len(kargs):
        return (params[0] if params else "?", sig[0] if sig else None, kargs[0] if kargs else None)
    for name, want, value in zip(params, sig, kargs):
        is_array = hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic)
        if _is_array_type(want) != is_array:
            return name, want, value
        if is_array and (np.dtype(value.dtype) != np.dtype(str(want.dtype)) or len(value.shape) != want.ndim):
            return name, want, value
    return None


def _is_array_type(t):
    return type(t).__name__ == "Array" and hasattr(t, "ndim")  # numba.core.types.Array, without importing numba here


def _described(value):
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        return f"a {len(value.shape)}-D {np.dtype(value.dtype)} array"
    return f"a number ({type(value).__name__})"


def _described_type(t):
    if _is_array_type(t):
        return f"a {t.ndim}-D {t.dtype} array"
    return f"a number ({t})"


class _Arg:
    """One array argument: its host array (what the kernel reads and writes here) and its memory."""

    def __init__(self, pos, name, value, host):
        self.pos, self.name, self.value, self.host = pos, name, value, host
        self.memory = _memory(value)
        self.write_back = False  # a device array whose host copy is a view into a buffer of the tracer's

    def addresses(self):
        space, ptr, shape, strides, _ = self.memory
        return ptr + _offsets(shape, strides)


def bind(params, kargs, rec):
    """(arguments as the traced kernel sees them, [(device array, host copy)] to copy back, {parameter
    position: the elements of its array id it covers, for a view that covers only part of it})."""
    traced = list(kargs)
    write_back, arrays = [], []
    for pos, (name, value) in enumerate(zip(params, kargs)):
        if isinstance(value, list):  # Numba refuses a list argument on a GPU; here it would fail inside the kernel
            raise LearnerError(
                f"{name} is a Python list: a kernel takes NumPy arrays (and numbers), so pass "
                f"np.array({name}, dtype=np.float32) (or the dtype you need)."
            )
        if isinstance(value, np.ndarray):  # a 0-d array too: x[()] is one element of memory all threads see
            arrays.append(_Arg(pos, name, value, value))
        elif hasattr(value, "copy_to_host"):
            arrays.append(_Arg(pos, name, value, None))
    covers = {}
    for group in _overlapping(arrays):
        owner, maps = _owner(group)
        if owner is None:
            owner, maps = _owner_below(group)
        if owner is None:  # no one array holds all their elements: traced apart, as before
            for arg in group:
                _host_copy(arg, write_back)
                traced[arg.pos] = TracedArray(arg.host, _add(rec, arg, arg.name, arg.name), rec)
            continue
        _host_copy(owner, write_back)
        names = [owner.name] + [a.name for a in group if a is not owner] if owner in group else [owner.name]
        aid = _add(rec, owner, "/".join(dict.fromkeys(names)), owner.name)
        for arg in group:
            if arg is owner:
                traced[arg.pos] = TracedArray(owner.host, aid, rec)
                continue
            if arg.host is None:  # a device array: its host copy is a view into the owner's
                arg.host = _view_of(owner, arg)
            if arg.write_back:
                write_back.append((arg.value, arg.host))
            index_map = maps[id(arg)]  # None: the owner's very layout (the same array, or x[:])
            bad = None
            if index_map is not None:  # its out-of-bounds indices are said in its own shape
                bad = _add(rec, arg, arg.name, arg.name)
                covers[arg.pos] = np.unique(index_map)
            traced[arg.pos] = TracedArray(arg.host, aid, rec, index_map=index_map, bad_aid=bad)
    return traced, write_back, covers


def _add(rec, arg, name, var):
    host = arg.host
    return rec.add_array(ArrayInfo(name, "global", host.shape, host.dtype, host.strides, arg.pos, var=var))


def _host_copy(arg, write_back):
    if arg.host is None:
        arg.host = arg.value.copy_to_host()
        if hasattr(arg.value, "copy_to_device"):
            write_back.append((arg.value, arg.host))


def _memory(value):
    """(space, address, shape, strides, itemsize) of an array's memory, or None when it cannot be had."""
    try:
        cai = getattr(value, "__cuda_array_interface__", None)
        if isinstance(cai, dict):
            space, ptr = "device", int(cai["data"][0])
        else:
            space, ptr = "host", int(value.__array_interface__["data"][0])
        shape, strides = tuple(int(n) for n in value.shape), tuple(int(s) for s in value.strides)
        itemsize = int(np.dtype(value.dtype).itemsize)
    except Exception:  # an object that only looks like an array: traced on its own
        return None
    if len(shape) != len(strides):
        return None
    return space, ptr, shape, strides, itemsize


def _offsets(shape, strides):
    """Byte offset of every element from the start, in the array's own (row-major) order."""
    off = np.zeros(shape, np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        off += (np.arange(n, dtype=np.int64) * s).reshape([n if j == k else 1 for j in range(len(shape))])
    return off


def _span(arg):
    space, ptr, shape, strides, itemsize = arg.memory
    lo = ptr + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = ptr + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
    return space, lo, hi


def _overlapping(arrays):
    """The arguments in groups whose byte ranges overlap (one group per piece of memory), in order."""
    groups = []
    for arg in arrays:
        if arg.memory is None or 0 in arg.memory[2]:
            groups.append([arg])
            continue
        space, lo, hi = _span(arg)
        joined = [g for g in groups if any(_touches(b, space, lo, hi) for b in g)]
        merged = [a for g in joined for a in g] + [arg]
        groups = [g for g in groups if not any(g is j for j in joined)] + [merged]
    return sorted(groups, key=lambda g: min(a.pos for a in g))


def _touches(b, space, lo, hi):
    if b.memory is None or 0 in b.memory[2]:
        return False
    s2, lo2, hi2 = _span(b)
    return s2 == space and lo < hi2 and lo2 < hi


def _owner(group):
    """The argument whose elements hold every element of the group, with each other member's map
    (its element -> the owner's flat index); (None, None) when no member holds them all."""
    if len(group) == 1:
        return group[0], {}
    for cand in sorted(group, key=lambda a: -int(np.prod(a.memory[2]))):
        if any(a.memory[4] != cand.memory[4] for a in group):
            break
        if cand.host is None and not _c_contiguous(cand):
            continue  # its host copy would not lie in memory as it does on the device
        ranked = order = None
        maps = {}
        for arg in group:
            if arg is cand:
                continue
            if arg.memory[1:] == cand.memory[1:]:
                maps[id(arg)] = None
                continue
            if ranked is None:
                mine = cand.addresses().reshape(-1)
                order = np.argsort(mine, kind="stable")
                ranked = mine[order]
            want = arg.addresses()
            at = np.minimum(np.searchsorted(ranked, want), len(ranked) - 1)
            if not np.array_equal(ranked[at], want):
                break
            maps[id(arg)] = order[at]
        else:
            return cand, maps
    return None, None


def _owner_below(group):
    """Views that overlap without one holding the other (`a[:6]` and `a[4:]`): NumPy arrays are traced
    as the array they are all views of, device arrays as one host buffer over the bytes they span
    (each copied into it, and copied back from it); (None, None) where neither can be had."""
    names = "/".join(a.name for a in group)
    pos = min(a.pos for a in group)
    if all(isinstance(a.host, np.ndarray) for a in group):
        roots = {id(_root(a.host)): _root(a.host) for a in group}
        if len(roots) != 1:
            return None, None
        (root,) = roots.values()
        below = _Arg(pos, names, root, root)
    elif all(a.host is None and _c_contiguous(a) for a in group):
        itemsize = group[0].memory[4]
        spans = [_span(a) for a in group]
        lo, hi = min(s[1] for s in spans), max(s[2] for s in spans)
        if any(a.memory[4] != itemsize or (a.memory[1] - lo) % itemsize for a in group):
            return None, None
        buffer = np.zeros((hi - lo) // itemsize, group[0].value.dtype)
        below = _Arg(pos, names, buffer, buffer)
        below.memory = (group[0].memory[0], lo, buffer.shape, buffer.strides, itemsize)
        for a in group:
            a.host = _view_of(below, a)
            a.host[...] = a.value.copy_to_host()
            a.write_back = True
    else:
        return None, None
    owner, maps = _owner([below, *group]) if below.memory is not None else (None, None)
    if owner is below:
        return owner, maps
    for a in group:  # traced apart after all: each is copied on its own
        if a.write_back:
            a.host, a.write_back = None, False
    return None, None


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _c_contiguous(arg):
    _, _, shape, strides, itemsize = arg.memory
    want, step = [], itemsize
    for n in reversed(shape):
        want.append(step)
        step *= n
    return strides == tuple(reversed(want))


def _view_of(owner, arg):
    """A device array's host copy as a view into the owner's host copy, at the same byte offset."""
    offset = arg.memory[1] - owner.memory[1]
    dtype = np.dtype(arg.value.dtype)
    return np.ndarray(arg.memory[2], dtype, buffer=owner.host, offset=offset, strides=arg.memory[3])
