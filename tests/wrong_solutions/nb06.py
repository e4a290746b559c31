"""Wrong kernels for helpers/problems/nb06.py: atomics, barriers and scans done wrong."""

import numba
from numba import cuda

from helpers.problems.nb06 import BINS, SCAN, SUM_THREADS, P

from . import Wrong

# -- histogram_shared


@cuda.jit
def hist_shared_plain_increment(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        local[data[i]] += 1  # read, add, write: threads of the block overwrite each other
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def hist_shared_not_zeroed(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def hist_shared_no_barrier(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    if t < BINS:  # flushes before the block has finished counting
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def hist_shared_plain_flush(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < BINS:
        hist[t] += local[t]  # blocks overwrite each other's totals


@cuda.jit
def hist_shared_every_thread_flushes(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    cuda.atomic.add(hist, t % BINS, local[t % BINS])  # 4 threads per bin: counted 4 times


# -- sum_atomic


@cuda.jit
def sum_plain_add(x, total):
    buf = cuda.shared.array(SUM_THREADS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = SUM_THREADS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        total[0] += buf[0]  # blocks race on total[0]


@cuda.jit
def sum_no_barrier(x, total):
    buf = cuda.shared.array(SUM_THREADS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = SUM_THREADS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


@cuda.jit
def sum_every_thread_atomic(x, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])  # right, but every thread queues on one address


@cuda.jit
def sum_barrier_in_if(x, total):
    buf = cuda.shared.array(SUM_THREADS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = SUM_THREADS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
            cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


# -- scan


@cuda.jit
def scan_in_place(x, out):
    buf = cuda.shared.array(SCAN, numba.int32)
    t = cuda.threadIdx.x
    n = x.size
    buf[t] = x[t] if t < n else 0
    cuda.syncthreads()
    d = 1
    while d < SCAN:
        if t >= d:
            buf[t] += buf[t - d]  # t - d may already hold this step's value
        cuda.syncthreads()
        d *= 2
    if t < n:
        out[t] = buf[t]


@cuda.jit
def scan_exclusive(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t - 1] if 0 < t <= n else 0  # shifted by one: exclusive
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
        else:
            buf[1 - src, t] = buf[src, t]
        cuda.syncthreads()
        src = 1 - src
        d *= 2
    if t < n:
        out[t] = buf[src, t]


@cuda.jit
def scan_no_guard(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)
    t = cuda.threadIdx.x
    buf[0, t] = x[t]
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
        else:
            buf[1 - src, t] = buf[src, t]
        cuda.syncthreads()
        src = 1 - src
        d *= 2
    if t < x.size:
        out[t] = buf[src, t]


@cuda.jit
def scan_barrier_in_if(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t] if t < n else 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
            cuda.syncthreads()
        else:
            buf[1 - src, t] = buf[src, t]
        src = 1 - src
        d *= 2
    if t < n:
        out[t] = buf[src, t]


@cuda.jit
def hist_global_atomics(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)  # right numbers, but every thread hits global memory


@cuda.jit
def scan_own_prefix(x, out):
    t = cuda.threadIdx.x
    if t < x.size:  # right numbers, parallel, but thread t adds t + 1 elements: O(n) span, O(n^2) work
        acc = 0
        for j in range(t + 1):
            acc += x[j]
        out[t] = acc


@cuda.jit
def scan_serial_thread0(x, out):
    if cuda.threadIdx.x == 0:  # right numbers, but one thread does all the work in a loop
        acc = 0
        for i in range(x.size):
            acc += x[i]
            out[i] = acc


# -- the block's work serialized in thread 0 (issue 27): right numbers, no tree and no privatization


@cuda.jit
def sum_serial_in_thread0(x, total):
    if cuda.threadIdx.x == 0:  # thread 0 adds the block's elements in a loop
        acc = numba.float32(0.0)
        start = cuda.blockIdx.x * cuda.blockDim.x
        for i in range(start, min(start + cuda.blockDim.x, x.size)):
            acc += x[i]
        cuda.atomic.add(total, 0, acc)


@cuda.jit
def hist_shared_serial_in_thread0(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    if cuda.threadIdx.x == 0:  # thread 0 counts the block's elements and flushes them alone
        for b in range(BINS):
            local[b] = 0
        start = cuda.blockIdx.x * cuda.blockDim.x
        for i in range(start, min(start + cuda.blockDim.x, data.size)):
            local[data[i]] += 1
        for b in range(BINS):
            cuda.atomic.add(hist, b, local[b])


WRONG = {
    "histogram_shared": [
        Wrong("over budget (global atomics only)", hist_global_atomics, "global atomics per block"),
        Wrong("race", hist_shared_plain_increment, "race"),
        Wrong("uninitialised shared", hist_shared_not_zeroed, "uninitialised shared memory"),
        Wrong("race (no barrier)", hist_shared_no_barrier, "the CPU tracer found"),
        Wrong("plain write where an atomic is needed", hist_shared_plain_flush, "race"),
        Wrong("known mistake", hist_shared_every_thread_flushes, "only threads 0..BINS-1"),
        Wrong("the block's histogram counted by thread 0", hist_shared_serial_in_thread0, "threads touched memory"),
    ],
    "sum_atomic": [
        Wrong("plain write where an atomic is needed", sum_plain_add, "race"),
        Wrong("race", sum_no_barrier, "race"),
        Wrong("over budget", sum_every_thread_atomic, "budget"),
        Wrong("divergent barrier", sum_barrier_in_if, "divergent barrier"),
        Wrong("the block's sum in thread 0's loop", sum_serial_in_thread0, "threads touched memory"),
    ],
    "scan": [
        Wrong("over budget (every thread its own prefix)", scan_own_prefix, "every thread summing its own prefix"),
        Wrong("over budget (serial in one thread)", scan_serial_thread0, "thread t owns element t"),
        Wrong("race", scan_in_place, "race"),
        Wrong("known mistake", scan_exclusive, "exclusive scan"),
        Wrong("missing guard", scan_no_guard, "an out-of-bounds access"),
        Wrong("divergent barrier", scan_barrier_in_if, "divergent barrier"),
    ],
}


# -- warp_sum


@cuda.jit
def warp_sum_guarded_shuffle(x, total):
    i = cuda.grid(1)
    if i < x.size:  # lanes past the end never reach the shuffle the full mask names
        v = x[i]
        delta = 16
        while delta > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
            delta //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(total, 0, v)


@cuda.jit
def warp_sum_every_lane_adds(x, total):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.float32(0.0)
    delta = 16
    while delta > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
        delta //= 2
    cuda.atomic.add(total, 0, v)  # every lane adds its partial sum, not just lane 0


@cuda.jit
def warp_sum_shared_tree(x, total):
    buf = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


@cuda.jit
def warp_sum_shfl_up(x, total):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.float32(0.0)
    delta = 16
    while delta > 0:
        v += cuda.shfl_up_sync(0xFFFFFFFF, v, delta)  # sums flow up to lane 31, not down to lane 0
        delta //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(total, 0, v)


WRONG["warp_sum"] = [
    Wrong("warp misuse (shuffle behind the bounds guard)", warp_sum_guarded_shuffle, "misused warp call"),
    Wrong("wrong numbers (every lane adds)", warp_sum_every_lane_adds, "should be"),
    Wrong("over budget (shared-memory tree)", warp_sum_shared_tree, "shfl_down_sync"),
    Wrong("wrong shuffle direction", warp_sum_shfl_up, "should be"),
]


# -- atomic_mul


@cuda.jit
def mul_plain(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        prod[0] = prod[0] * x[i] % P  # read, multiply, write: another thread's factor can be overwritten


@cuda.jit
def mul_one_try(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        cuda.atomic.cas(prod, 0, old, old * x[i] % P)  # gives up when another thread got there first


@cuda.jit
def mul_stale_guess(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        assumed = prod[0]
        while cuda.atomic.cas(prod, 0, assumed, assumed * x[i] % P) != assumed:
            pass  # retries with the same guess, not the value the CAS returned: fails forever


@cuda.jit
def mul_exch(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        cuda.atomic.exch(prod, 0, old * x[i] % P)  # atomic write of a value computed from a stale read


@cuda.jit
def mul_no_modulo(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        while True:
            assumed = old
            old = cuda.atomic.cas(prod, 0, assumed, assumed * x[i])  # overflows int64 after a few factors
            if old == assumed:
                break


WRONG["atomic_mul"] = [
    Wrong("plain write where an atomic is needed", mul_plain, "race"),
    Wrong("CAS that does not retry", mul_one_try, "retrying with the value it returned"),
    Wrong("CAS retried with a stale guess", mul_stale_guess, "can never reach its exit", status="error"),
    Wrong("race (atomic exchange of a stale value)", mul_exch, "or a cuda.atomic.cas loop"),
    Wrong("wrong numbers (no modulo)", mul_no_modulo, "should be"),
]
