"""Four neighbouring float32 in one 128-bit load, from Numba.

Numba's indexing compiles every element read to its own 32-bit ``ld.shared.f32``/``ld.global.f32``,
even four neighbours packed into a ``cuda.float32x4`` (tests/notebooks/test_claims_2026.py). The
``@intrinsic`` below emits LLVM's vector load of ``<4 x float>`` with 16-byte alignment, which the
NVPTX backend turns into one ``ld.shared.v4.f32`` (or ``ld.global.v4.f32``): a quarter of the load
instructions of a register-blocked SGEMM's inner loop. The caller guarantees the alignment: the
array's data 16-byte aligned (``cuda.shared.array(..., alignment=16)``) and the index a multiple of 4;
a misaligned address is a GPU fault (``CUDA_ERROR_MISALIGNED_ADDRESS``), not a wrong answer.

Numba's simulator cannot run an intrinsic, nor take ``alignment=``: ``load4`` there is four plain
reads and ``ALIGN`` is None, so the same generated kernel runs in CPU mode.
"""

from __future__ import annotations

from numba import config

if config.ENABLE_CUDASIM:
    ALIGN = None

    def load4(a, i):
        return a[i], a[i + 1], a[i + 2], a[i + 3]

else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    ALIGN = 16

    @intrinsic
    def load4(typingctx, arr, i):
        """(a[i], a[i+1], a[i+2], a[i+3]) of a contiguous 1-D float32 array, in one 128-bit load."""
        if not (isinstance(arr, types.Array) and arr.dtype == types.float32 and isinstance(i, types.Integer)):
            return None
        sig = types.UniTuple(types.float32, 4)(arr, i)

        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            ptr = builder.gep(data, [args[1]])
            vec = builder.load(builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer()), align=16)
            parts = [builder.extract_element(vec, ir.Constant(ir.IntType(32), k)) for k in range(4)]
            return context.make_tuple(builder, sig.return_type, parts)

        return sig, codegen
