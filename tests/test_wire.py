"""helpers._wire: what crosses between the grader and a student's process is plain data, and
nothing decoded can carry the student's behaviour (a home-made __eq__, a pickle, an object dtype)."""

import json

import numpy as np
import pytest

from helpers import _wire


def roundtrip(x):
    return _wire.decode(json.loads(_wire.dumps(_wire.encode(x))))


@pytest.mark.parametrize(
    "value",
    [
        0,
        -(2**70),
        1.5,
        float("nan"),
        float("-inf"),
        1 + 2j,
        "text",
        b"\x00\xff",
        None,
        True,
        (1, (2, 3)),
        [1, [2]],
        {"a": 1, 2: (3,)},
        {1, 2},
        np.float32(0.1),
        np.int64(-3),
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.array([True, False]),
        np.zeros((0, 3), np.int16),
        np.array(7, np.int32),  # 0-d, as CuPy's x[i]: stays 0-d
        ...,
    ],
    ids=repr,
)
def test_plain_values_come_back_equal_and_of_the_same_type(value):
    got = roundtrip(value)
    assert type(got) is type(value)
    if isinstance(value, np.ndarray):
        assert got.dtype == value.dtype and got.shape == value.shape and np.array_equal(got, value)
    elif isinstance(value, float) and value != value:
        assert got != got
    else:
        assert got == value


def test_subclasses_cross_as_their_plain_value():
    class Liar(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    class Yes(np.int64):
        def __eq__(self, other):
            return True

    class Arr(np.ndarray):
        def __eq__(self, other):
            return True

    assert type(roundtrip(Liar(3))) is int and roundtrip(Liar(3)) != 4
    got = roundtrip(Yes(0))
    assert type(got) is np.int64 and got != 1
    arr = roundtrip(np.zeros(3).view(Arr))
    assert type(arr) is np.ndarray and not np.array_equal(arr, np.ones(3))


def test_objects_become_opaque_and_equal_nothing():
    class Thing:
        def __eq__(self, other):
            return True

    for value in (Thing(), Thing, print, np.array([object()], dtype=object)):
        got = roundtrip(value)
        assert isinstance(got, _wire.Opaque)
        assert got != got and got != 0


@pytest.mark.parametrize(
    "message",
    [
        {"$array": "|O", "shape": [1], "data": ""},  # object dtype
        {"$array": "<f4", "shape": [4], "data": "AAAA"},  # data of the wrong length
        {"$scalar": "<f8", "data": "AA=="},
        {"$module": "os"},  # only numpy/cupy travel by name
        {"$pickle": "gASVAAAAAAAAAA=="},  # unknown tag
        {},
        {"$array": [("a", "<f4")], "shape": [1], "data": "AAAAAA=="},  # a structured dtype
    ],
    ids=str,
)
def test_messages_it_did_not_write_are_refused(message):
    with pytest.raises(_wire.WireError):
        _wire.decode(message)


def test_deep_nesting_and_huge_messages_are_bounded():
    deep = []
    for _ in range(_wire.MAX_DEPTH + 10):
        deep = [deep]
    got = roundtrip(deep)
    while isinstance(got, list):
        got = got[0]
    assert isinstance(got, _wire.Opaque) and "nested" in repr(got)  # cut off, not a RecursionError
    nested = {"$tuple": []}
    for _ in range(_wire.MAX_DEPTH + 10):
        nested = {"$tuple": [nested]}
    with pytest.raises(_wire.WireError):
        _wire.decode(nested)
    with pytest.raises(_wire.WireError):
        _wire.encode(list(range(_wire.MAX_ITEMS + 1)))
    with pytest.raises(_wire.WireError):
        _wire.loads(b"{not json")


def test_an_interface_only_object_keeps_its_interface():
    from helpers.problems.nb11 import FakeDeviceArray

    got = roundtrip(FakeDeviceArray((2, 3), "<f4", (12, 4)))
    assert got.__cuda_array_interface__["strides"] == (12, 4)
    assert got.__cuda_array_interface__["shape"] == (2, 3)


def test_cuda_bindings_result_codes_cross_as_themselves():
    # notebook 10's check_result reads err.name: an enum that crossed as a bare int had none
    from cuda.bindings import driver, nvrtc

    err = driver.CUresult.CUDA_ERROR_INVALID_VALUE
    got = roundtrip((err, nvrtc.nvrtcResult.NVRTC_SUCCESS, 13))
    assert type(got[0]) is driver.CUresult and got[0].name == "CUDA_ERROR_INVALID_VALUE"
    assert type(got[1]) is nvrtc.nvrtcResult and int(got[1]) == 0
    assert got[2] == 13 and type(got[2]) is int


@pytest.mark.parametrize(
    "message",
    [
        {"$enum": "os:system", "name": "x"},  # a module outside cuda.bindings
        {"$enum": "cuda.bindings.driver:CUresult", "name": "__class__"},  # an attribute, not a member
        {"$enum": "cuda.bindings.driver:cuInit", "name": "x"},  # a function, not an enum class
        {"$enum": "cuda.bindings.driver:CUresult", "name": "NO_SUCH_CODE"},
    ],
)
def test_enum_tags_only_name_members_of_cuda_bindings_classes(message):
    with pytest.raises(_wire.WireError):
        _wire.decode(message)


def test_an_opaque_object_keeps_the_name_of_its_type():
    class ObjectCode:
        pass

    got = roundtrip(ObjectCode())
    assert _wire.type_name(got) == "ObjectCode" and _wire.type_name(b"x") == "bytes"


def test_a_cuda_core_object_crosses_without_its_repr():
    # without a driver, cuda.core's ObjectCode.__repr__ fails with cuda.bindings' driver lock held:
    # an encode that called it made the process's next compile("ptx") hang (notebook 10's to_cubin)
    import threading

    from cuda.core import Program, ProgramOptions

    src = 'extern "C" __global__ void f() {}'
    code = Program(src, code_type="c++", options=ProgramOptions(arch="sm_80")).compile("cubin")
    assert _wire.type_name(roundtrip(code)) == "ObjectCode"

    def compile_ptx():
        try:
            Program(src, code_type="c++", options=ProgramOptions(arch="sm_80")).compile("ptx")
        except Exception:  # no driver in CPU mode: an error is fine, a hang is not
            pass

    t = threading.Thread(target=compile_ptx, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive()
