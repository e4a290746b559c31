"""Arrays as a traced kernel sees them: bounds-checked, every element access recorded."""

import numbers
import sys

import numpy as np

from ..accesses import ATOMIC, READ, WRITE
from .records import FLUSH_EVERY, KIND_BITS, VectorFallback

_INTS = frozenset({int, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8, np.intp})
_getframe = sys._getframe


class TracedArray:
    """A NumPy array that records each element access and refuses out-of-bounds ones.

    Reads return NumPy scalars of the array's dtype, so float32 arithmetic matches a launch.
    An out-of-bounds read returns 0 and an out-of-bounds write is dropped (and both are
    recorded), so the kernel keeps running and we can report every mistake at once.
    A negative index wraps once, as numba-cuda does on a GPU, and is logged for its own verdict.
    Elements of a structured dtype come back as `TracedRecord`s, so field reads and writes are
    recorded too. `readonly` (captured globals, constant memory) turns a write into an error.
    """

    __slots__ = (
        "_data",
        "_map",
        "_aid",
        "_rec",
        "_record",
        "_n0",
        "_n1",
        "shape",
        "size",
        "ndim",
        "dtype",
        "_fullmap",
        "_fields",
        "_readonly",
        "_bad",
        "_rkey",
        "_wkey",
        "_buf",
        "_plain_read",
        "_plain_write",
    )

    def __init__(self, data, aid, rec, record=True, index_map=None, readonly=False, bad_aid=None):
        self._data = data
        self._map = index_map  # for views: base-array flat index of each view element
        self._aid = aid
        self._rkey, self._wkey = aid << KIND_BITS | READ, aid << KIND_BITS | WRITE  # the log's packed (array, kind)
        self._bad = aid if bad_aid is None else bad_aid  # out-of-bounds and negative indices: in whose shape
        self._rec = rec
        self._record = record
        self.shape = data.shape
        self.size = data.size
        self.ndim = data.ndim
        self.dtype = data.dtype
        self._n0 = data.shape[0] if data.ndim >= 1 else 0
        self._n1 = data.shape[1] if data.ndim >= 2 else 0
        self._fullmap = None
        self._fields = data.dtype.names is not None
        self._readonly = readonly
        # The fastest path, taken by most accesses: a recorded 1-D array of numbers, no view, an index in bounds.
        self._buf = rec.buf  # the recorder's one buffer list (flush empties it in place)
        self._plain_read = record and data.ndim == 1 and not self._fields and index_map is None
        self._plain_write = self._plain_read and not readonly

    # -- element access: a fast path for the common 1-D / 2-D integer index, else _locate ------
    def __getitem__(self, idx):
        if self._plain_read and idx.__class__ in _INTS and 0 <= idx < self._n0:
            f = _getframe(1)
            buf = self._buf
            buf.append((self._rkey, idx, f.f_code, f.f_lineno))
            if len(buf) >= FLUSH_EVERY:
                self._rec.flush()
            return self._data[idx]
        if idx.__class__ in _INTS and self.ndim == 1 and 0 <= idx < self._n0:
            flat = idx
        elif (
            idx.__class__ is tuple
            and self.ndim == 2
            and len(idx) == 2
            and idx[0].__class__ in _INTS
            and idx[1].__class__ in _INTS
            and 0 <= idx[0] < self._n0
            and 0 <= idx[1] < self._n1
        ):
            flat = idx[0] * self._n1 + idx[1]
        else:
            if self._rec.vector is not None:  # threads running as NumPy lanes (helpers.tracer.vector)
                return self._rec.vector.read(self, idx, _getframe(1))
            flat = self._locate(idx)
            if flat is None:
                return self._view(idx)
            if flat < 0:
                return self._out_of_bounds(idx, READ, _getframe(1))
            if _negative(idx):
                self._rec.log_negative(self._bad, idx if isinstance(idx, tuple) else (idx,), READ, _getframe(1))
        if self._fields:
            if self._rec.vector is not None:  # a record's fields are read and written one thread at a time
                raise VectorFallback("a structured array")
            return TracedRecord(self, idx, flat, _getframe(1))
        if self._record:
            rec = self._rec
            f = _getframe(1)
            if self._map is not None:
                flat = int(self._map.flat[flat])
            buf = rec.buf
            buf.append((self._rkey, flat, f.f_code, f.f_lineno))
            if len(buf) >= FLUSH_EVERY:
                rec.flush()
        return self._data[idx]

    def __setitem__(self, idx, value):
        if self._plain_write and idx.__class__ in _INTS and 0 <= idx < self._n0:
            f = _getframe(1)
            buf = self._buf
            buf.append((self._wkey, idx, f.f_code, f.f_lineno))
            if len(buf) >= FLUSH_EVERY:
                self._rec.flush()
            return self._store(idx, value)
        if idx.__class__ in _INTS and self.ndim == 1 and 0 <= idx < self._n0:
            flat = idx
        elif (
            idx.__class__ is tuple
            and self.ndim == 2
            and len(idx) == 2
            and idx[0].__class__ in _INTS
            and idx[1].__class__ in _INTS
            and 0 <= idx[0] < self._n0
            and 0 <= idx[1] < self._n1
        ):
            flat = idx[0] * self._n1 + idx[1]
        else:
            if self._rec.vector is not None:
                return self._rec.vector.write(self, idx, value, _getframe(1))
            flat = self._locate(idx)
            if flat is None:
                raise TypeError("cannot assign to a slice of an array inside a kernel; write one element at a time")
            if flat < 0:
                return self._out_of_bounds(idx, WRITE, _getframe(1))
            if _negative(idx):
                self._rec.log_negative(self._bad, idx if isinstance(idx, tuple) else (idx,), WRITE, _getframe(1))
        if self._readonly:
            var = self._rec.arrays[self._aid].var
            raise TypeError(f"{var} is read-only inside a kernel (a captured global or constant)")
        if self._record:
            rec = self._rec
            f = _getframe(1)
            if self._map is not None:
                flat = int(self._map.flat[flat])
            buf = rec.buf
            buf.append((self._wkey, flat, f.f_code, f.f_lineno))
            if len(buf) >= FLUSH_EVERY:
                rec.flush()
        self._store(idx, value)

    def _store(self, idx, value):
        if self._rec.vector is not None:  # lanes writing one element: the per-thread order decides what stays
            raise VectorFallback("every lane writes one element")
        try:
            self._data[idx] = value
        except OverflowError:  # NumPy refuses an integer that does not fit; a GPU's store keeps its low bits
            wrapped = _wrapped(value, self.dtype)
            if wrapped is None:
                raise
            self._data[idx] = wrapped

    def _locate(self, idx):
        """Flat (row-major) index of `idx`, negative indices wrapped once as numba-cuda does;
        -1 when out of bounds even so; None for a partial index."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) > self.ndim:
            if self.ndim == 0:
                var = self._rec.arrays[self._aid].var
                raise IndexError(f"{var} is 0-dimensional (one element, {var}[()]) but was indexed with {len(idx)}")
            raise IndexError(
                f"too many indices: the array has {self.ndim} dimension(s) but was indexed with {len(idx)}"
            )
        for i in idx:
            if not isinstance(i, numbers.Integral):
                if isinstance(i, slice) or i is Ellipsis:
                    return None
                raise TypeError(
                    f"array indices must be integers, not {type(i).__name__} ({i!r}); use int(...) or // for the index"
                )
        if len(idx) < self.ndim:
            return None
        flat = 0
        inside = True
        for i, n in zip(idx, self.shape):
            i = int(i)
            if i < 0:
                i += n
            if not 0 <= i < n:
                inside = False
            flat = flat * n + i
        return flat if inside else -1

    def _out_of_bounds(self, idx, kind, frame):
        self._rec.log_oob(self._bad, idx if isinstance(idx, tuple) else (idx,), kind, frame)
        if kind == READ:
            return self.dtype.type(0)
        return None

    def _view(self, idx):
        """`A[i]` of a 2-D array (or a slice): a traced view that records base-array indices."""
        if self._map is not None:
            base = self._map
        else:
            if self._fullmap is None:
                self._fullmap = np.arange(self.size, dtype=np.int64).reshape(self.shape)
            base = self._fullmap
        if _negative(idx):
            self._rec.log_negative(self._bad, idx if isinstance(idx, tuple) else (idx,), READ, _getframe(2))
        try:
            data, index_map = self._data[idx], base[idx]
        except IndexError:
            raise IndexError(f"index {idx!r} is out of bounds for an array of shape {self.shape}") from None
        return TracedArray(data, self._aid, self._rec, self._record, index_map, self._readonly)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        """`np.sin(x, r)` on whole arrays inside a kernel: every element read and written is recorded."""
        if method != "__call__":
            return NotImplemented
        if self._rec.vector is not None:
            raise VectorFallback("a ufunc on a whole array")
        frame = _getframe(1)
        args = [a._whole(READ, frame) if isinstance(a, TracedArray) else a for a in inputs]
        outs = out if out is not None else ()
        result = ufunc(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for o, r in zip(outs, results):
            if isinstance(o, TracedArray):
                o._whole(WRITE, frame)
                o._data[...] = r
            else:
                o[...] = r
        if outs:
            return outs[0] if len(outs) == 1 else tuple(outs)
        return result

    def _whole(self, kind, frame):
        """Record an access to every element (a ufunc on the whole array); the data for reads."""
        if kind == WRITE and self._readonly:
            raise TypeError(f"{self._rec.arrays[self._aid].var} is read-only inside a kernel")
        if self._record:
            rec = self._rec
            flats = self._map.reshape(-1) if self._map is not None else range(self.size)
            key = self._aid << KIND_BITS | kind
            for flat in flats:
                rec.buf.append((key, int(flat), frame.f_code, frame.f_lineno))
            if len(rec.buf) >= FLUSH_EVERY:
                rec.flush()
        return self._data.copy() if kind == READ else None

    # -- the rest of the array interface a kernel may use ------------------------------------
    def __len__(self):
        return self._n0

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def strides(self):
        return self._data.strides

    def __iter__(self):
        for i in range(self._n0):
            yield self[i]

    def __repr__(self):
        return f"<traced array {self._rec.arrays[self._aid].name} shape={self.shape}>"


def element_op(ary, idx, frame, op, cas=False):
    """Read-modify-write of one element for the atomics; returns the old value. ``cas``: a
    compare-and-swap, whose line the race verdict needs (a CAS loop's first plain read is a guess)."""
    if not isinstance(ary, TracedArray):
        old = ary[idx]
        ary[idx] = op(old)
        return old
    if ary._rec.vector is not None:  # atomics return old values in the threads' own order
        raise VectorFallback("an atomic")
    flat = ary._locate(idx)
    if flat is None:
        raise TypeError("an atomic needs the index of one element, not a slice")
    if flat < 0:
        ary._rec.log_oob(ary._bad, idx if isinstance(idx, tuple) else (idx,), ATOMIC, frame)
        return ary.dtype.type(0)
    if _negative(idx):
        ary._rec.log_negative(ary._bad, idx if isinstance(idx, tuple) else (idx,), ATOMIC, frame)
    if ary._readonly:
        raise TypeError("an atomic cannot update a read-only array (a captured global or constant)")
    if ary._record:
        rec = ary._rec
        if ary._map is not None:
            flat = int(ary._map.flat[flat])
        rec.buf.append((ary._aid << KIND_BITS | ATOMIC, flat, frame.f_code, frame.f_lineno))
        if len(rec.buf) >= FLUSH_EVERY:  # a loop of atomics alone reaches the launch's limit too
            rec.flush()
        if cas:
            rec.cas_sites.add((frame.f_code, frame.f_lineno))
    data = ary._data
    old = data[idx]
    data[idx] = op(old)
    return old


def _wrapped(value, dtype):
    """`value` cut to the bits of an integer dtype, as a GPU stores it (-16 into a uint32 is
    0xFFFFFFF0, 1 << 31 into an int32 is -2147483648); None for anything else (NumPy's refusal stands)."""
    if dtype.kind not in "iu" or not isinstance(value, numbers.Integral):
        return None
    bits = dtype.itemsize * 8
    v = int(value) & ((1 << bits) - 1)
    return v - (1 << bits) if dtype.kind == "i" and v >> (bits - 1) else v


def _negative(idx):
    """Does the index hold a negative integer (which Numba wraps, and CUDA C does not)?"""
    if isinstance(idx, tuple):
        return any(isinstance(i, numbers.Integral) and i < 0 for i in idx)
    return isinstance(idx, numbers.Integral) and idx < 0


class TracedRecord:
    """One element of a structured array (`pts[i]`, `states[i]`): `.x` / `["s0"]` reads and writes
    are recorded on that element, so two threads sharing one RNG state are seen as a race."""

    __slots__ = ("_arr", "_idx", "_flat")

    def __init__(self, arr, idx, flat, frame):
        object.__setattr__(self, "_arr", arr)
        object.__setattr__(self, "_idx", idx)
        if arr._map is not None:
            flat = int(arr._map.flat[flat])
        object.__setattr__(self, "_flat", flat)

    def _log(self, kind, frame, name):
        arr = self._arr
        if arr._record:
            rec = arr._rec
            aid = rec.field_array(arr._aid, name)
            rec.buf.append((aid << KIND_BITS | kind, self._flat, frame.f_code, frame.f_lineno))
            if len(rec.buf) >= FLUSH_EVERY:
                rec.flush()

    def _get(self, name, frame):
        arr = self._arr
        if name not in arr.dtype.names:
            raise AttributeError(f"{arr._rec.arrays[arr._aid].var} has no field {name!r} (fields: {arr.dtype.names})")
        self._log(READ, frame, name)
        return arr._data[self._idx][name]

    def _set(self, name, value, frame):
        arr = self._arr
        if name not in arr.dtype.names:
            raise AttributeError(f"{arr._rec.arrays[arr._aid].var} has no field {name!r} (fields: {arr.dtype.names})")
        if arr._readonly:
            raise TypeError(f"{arr._rec.arrays[arr._aid].var} is read-only inside a kernel")
        self._log(WRITE, frame, name)
        arr._data[self._idx][name] = value

    def __getitem__(self, name):
        return self._get(name, _getframe(1))

    def __setitem__(self, name, value):
        self._set(name, value, _getframe(1))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._get(name, _getframe(1))

    def __setattr__(self, name, value):
        self._set(name, value, _getframe(1))

    def __repr__(self):
        return f"<traced record {self._arr._rec.arrays[self._arr._aid].var}[{self._flat}]>"
