"""Wrong answers for helpers/problems/nb09.py (PyCUDA). CUDA C runs in CPU mode too: see nb08.py."""

import numpy as np

from . import Wrong

AXPBY_OK = r"""
__global__ void axpby(float* out, const float* x, const float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + b * y[i];
}
"""


def pointee_letters(params):
    letters = {"float": "f", "double": "d", "int": "i", "unsigned int": "I", "long long": "q"}
    out = ""
    for p in params.split(","):
        ctype = " ".join(w for w in p.replace("*", " ").split()[:-1] if w != "const")
        out += letters[ctype]
    return out


def float_as_double(params):
    letters = {"float": "d", "double": "d", "int": "i", "unsigned int": "I", "long long": "q"}
    out = ""
    for p in params.split(","):
        ctype = " ".join(w for w in p.replace("*", " * ").split()[:-1] if w != "const")
        out += "P" if "*" in ctype else letters[ctype]
    return out


def ignores_unsigned(params):
    out = ""
    for p in params.split(","):
        words = p.replace("*", " * ").split()[:-1]
        out += "P" if "*" in words else {"float": "f", "double": "d"}.get(words[-1], "i")
    return out


WRONG = {
    "context_import": [
        Wrong("autoinit", "pycuda.autoinit", "non-primary"),
        Wrong("driver", "pycuda.driver", "creates no context"),
        Wrong("unknown", "numba", "not right"),
    ],
    "prepare_format": [
        Wrong("pointer by pointee", pointee_letters, "every pointer is 'P'"),
        Wrong("float as double", float_as_double, "4 bytes"),
        Wrong("unsigned and long long as int", ignores_unsigned, "returned"),
        Wrong("hard-coded", lambda params: "PPfi", "hard-coded"),
    ],
    "axpby": [
        Wrong("wrong signature", AXPBY_OK.replace("float a, float b", "double a, double b"), "parameters are wrong"),
        Wrong("syntax error", AXPBY_OK.replace("b * y[i];", "b * y[i]"), "NVRTC rejects it"),
        Wrong("wrong name", AXPBY_OK.replace("void axpby", "void axpy"), "no kernel named axpby"),
        Wrong("not a string", 3, "as a string"),
        Wrong("missing guard", AXPBY_OK.replace("if (i < n) ", ""), "past the end"),
        Wrong("swapped scalars", AXPBY_OK.replace("a * x[i] + b * y[i]", "b * x[i] + a * y[i]"), "swapped"),
        Wrong(
            "a literal block size",
            AXPBY_OK.replace("blockIdx.x * blockDim.x", "blockIdx.x * 128"),
            "use blockDim.x (the launch's own)",
        ),
        Wrong(
            "swapped pointers",
            AXPBY_OK.replace("float* out, const float* x", "const float* x, float* out"),
            "parameters are wrong",
        ),
        Wrong(
            "negative index", AXPBY_OK.replace("b * y[i]", "b * y[i - 1]"), "negative: in CUDA C that is out of bounds"
        ),
    ],
    "lincomb": [
        Wrong("cupy style", "z = a * x + b * y", "NVRTC rejects it"),
        Wrong("undefined name", "z[i] = a * x[i] + c * y[i]", 'identifier "c" is undefined'),
        Wrong("syntax error", "z[i] = a * x[i] + b * y[i", "NVRTC rejects it"),
        Wrong("forgot b", "z[i] = a * x[i] + y[i]", "multiplied by b"),
        Wrong("wrong formula", "z[i] = a * x[i] - b * y[i]", "results are wrong: element"),
    ],
}

WRONG_GPU: dict = {}


def _drv():
    from helpers.problems.nb09 import _pycuda

    return _pycuda()[0]


def _in_only(twice, x):
    twice(_drv().In(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))


def _out_only(twice, x):
    twice(_drv().Out(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))


def _floor_grid(twice, x):
    twice(_drv().InOut(x), np.int32(x.size), block=(256, 1, 1), grid=(max(1, x.size // 256), 1))


WRONG["in_out"] = [
    Wrong("drv.In", _in_only, "never back"),
    Wrong("drv.Out", _out_only, "never held x"),
    Wrong("floor grid", _floor_grid, "were not doubled"),
]


def _on_the_host(twice, x):  # the numbers without the GPU
    x *= 2


def _launched_on_a_copy(twice, x):
    twice(_drv().InOut(x.copy()), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))


def _launched_twice_halving(twice, x):  # two launches, the right numbers: the second undoes half the first
    x /= 2
    for _ in range(2):
        twice(_drv().InOut(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))
    x /= 2


def _blocks_of_128(twice, x):
    twice(_drv().InOut(x), np.int32(x.size), block=(128, 1, 1), grid=((x.size + 127) // 128, 1))


def _grid_and_block_swapped(twice, x):
    twice(_drv().InOut(x), np.int32(x.size), block=((x.size + 255) // 256, 1, 1), grid=(256, 1))


def _one_block_too_many(twice, x):
    twice(_drv().InOut(x), np.int32(x.size), block=(256, 1, 1), grid=(x.size // 256 + 1, 1))


WRONG["in_out"] += [
    Wrong("computed on the host", _on_the_host, "no kernel was launched"),
    Wrong("drv.InOut of a copy", _launched_on_a_copy, "got a copy of x"),
    Wrong("launched twice", _launched_twice_halving, "launched 2 times"),
    Wrong("blocks of 128", _blocks_of_128, "asks for 256"),
    Wrong("grid and block swapped", _grid_and_block_swapped, "grid and block are swapped"),
    Wrong("a spare block", _one_block_too_many, "enough and no more"),
]


def star_on_the_type(params):  # 'float* x' only: 'float *x' and 'float * x' are the same declaration
    from helpers.problems.nb09 import _STRUCT

    out = ""
    for p in params.split(","):
        t = p.strip().rsplit(" ", 1)[0].replace("const ", "")
        out += "P" if t.endswith("*") else _STRUCT[t]
    return out


WRONG["prepare_format"].append(Wrong("the star only on the type", star_on_the_type, "but should return"))
