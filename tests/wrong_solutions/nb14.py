"""Wrong answers for helpers/problems/nb14.py (cuda.compute), run against the CPU stand-in in CPU mode."""

import numpy as np

from helpers.standins import library

from . import Wrong

cp, cc = library("cupy"), library("cuda.compute")


def inclusive_offsets(flags):
    n = flags.size
    out = cp.empty(n, dtype=np.int32)
    cc.inclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=None, num_items=n)
    return out, int(out[n - 1])


def count_misses_last(flags):
    n = flags.size
    out = cp.empty(n, dtype=np.int32)
    cc.exclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return out, int(out[n - 1])


def host_cumsum(flags):
    f = cp.asnumpy(flags)
    offsets = np.concatenate(([0], np.cumsum(f)[:-1])).astype(np.int32)
    return cp.asarray(offsets), int(f.sum())


def count_left_on_device(flags):
    n = flags.size
    out = cp.empty(n, dtype=np.int32)
    cc.exclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return out, out[n - 1] + flags[n - 1]  # a 0-d CuPy array, as on a GPU


def host_offsets(flags):
    n = flags.size
    out = np.empty(n, dtype=np.int32)  # host memory: cuda.compute refuses it
    cc.exclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return out, int(out[n - 1]) + int(flags[n - 1])


def int64_offsets(flags):
    n = flags.size
    out = cp.empty(n, dtype=np.int64)  # the exercise asks for int32
    cc.exclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return out, int(out[n - 1]) + int(flags[n - 1])


def offsets_copied_to_host(flags):
    n = flags.size
    out = cp.empty(n, dtype=np.int32)
    cc.exclusive_scan(d_in=flags, d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return cp.asnumpy(out), int(out[n - 1]) + int(flags[n - 1])


def sorted_then_copied_to_host(keys):
    out = cp.empty_like(keys)
    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return out.get()


def offsets_only(flags):
    return count_misses_last(flags)[0]


def ascending(keys):
    out = cp.empty_like(keys)
    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.ASCENDING)
    return out


def float64_output(keys):
    out = cp.empty(keys.size)  # float64: radix_sort writes the keys' bytes into it unconverted
    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return out


def host_output(keys):
    out = np.empty(keys.size, keys.dtype)
    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return out


def reversed_copy(keys):
    return cp.asarray(np.sort(cp.asnumpy(keys))[::-1].copy())


def in_place(keys):
    cc.radix_sort(d_in_keys=keys, d_out_keys=keys, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return keys


WRONG = {
    "scan_offset": [
        Wrong("inclusive scan", 3, "inclusive scan"),
        Wrong("input position", 4, "position in the input"),
        Wrong("unknown", 7, "not right"),
    ],
    "compaction_offsets": [
        Wrong("inclusive scan", inclusive_offsets, "inclusive-scan offsets"),
        Wrong("count forgets the last flag", count_misses_last, "last offset plus the"),
        Wrong("on the host with NumPy", host_cumsum, "something other than cuda.compute"),
        Wrong("offsets only", offsets_only, "return a pair"),
        Wrong("count left a 0-d device array", count_left_on_device, "convert the count with int(...)"),
        Wrong("offsets in host memory", host_offsets, "NumPy array in host memory", status="error"),
        Wrong("int64 offsets", int64_offsets, "the offsets are int64, and the exercise asks for int32"),
        Wrong("offsets copied to the host", offsets_copied_to_host, "offsets came back as a NumPy array"),
    ],
    "sort_descending": [
        Wrong("ascending", ascending, "smallest first"),
        Wrong("reversed NumPy sort", reversed_copy, "not with cc.radix_sort"),
        Wrong("sorted in place", in_place, "input keys changed"),
        Wrong("float64 output", float64_output, "without converting"),
        Wrong("output in host memory", host_output, "NumPy array in host memory", status="error"),
        Wrong("sorted, then copied to the host", sorted_then_copied_to_host, "sorted keys came back as a NumPy"),
    ],
}
WRONG_GPU = {}


def flags_cleared(flags):  # right offsets and count, then the input is gone
    n = flags.size
    offsets = cp.empty(n, dtype=np.int32)
    cc.exclusive_scan(d_in=flags, d_out=offsets, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    count = int(offsets[n - 1]) + int(flags[n - 1])
    flags[...] = 0
    return offsets, count


def scanned_twice(flags):
    n = flags.size
    offsets = cp.empty(n, dtype=np.int32)
    for _ in range(2):
        cc.exclusive_scan(d_in=flags, d_out=offsets, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    return offsets, int(offsets[n - 1]) + int(flags[n - 1])


def sorted_twice(keys):
    out = cp.empty_like(keys)
    for _ in range(2):
        cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return out


WRONG["compaction_offsets"] += [
    Wrong("flags cleared after use", flags_cleared, "the flags changed"),
    Wrong("scanned twice", scanned_twice, "ran 2 times"),
]
WRONG["sort_descending"] += [Wrong("sorted twice", sorted_twice, "ran 2 times")]
