"""Self-checking exercises: ``ex.check(answer)``, ``ex.hint()``, ``ex.solution()``, ``helpers.progress()``.

An exercise is data (see ``helpers/problems/``): a reference, how to make inputs, which
arguments are outputs, a launch rule, tolerances and hints. One job per module:

- ``results``    ``Result`` and how it is shown (one green/red line, a picture where it helps);
                 ``Graded``, what each kind's ``_grade`` finds
- ``base``       ``Exercise`` (check, hint, solution), "not attempted", ``register``
- ``executor``   where a check's work on an answer runs: the ``Executor`` operations and ``LOCAL``
- ``values``     ``ValueExercise``: a number or a tuple
- ``functions``  ``FunctionExercise``: a plain function compared with a reference on many inputs
- ``inputs``     a kernel's parameters as data (``In``, ``Out``, ``Acc``, ``Scalar``, ``Size``), fresh inputs
- ``launch``     launch rules (``per_element``, ``fixed``, ``learner_launch``, ``grid2d``) and launch validation
- ``kernels``    ``KernelExercise``: the learner's kernel run under the CPU tracer or on the GPU
- ``explain``    the sentences that say why a kernel's outputs are wrong
- ``causes``     what a learner's source shows: floor division of values, a 1-D index, a capped loop
- ``images``     ``ImageExercise``: kernel exercises on images, told in (row, col)
- ``pipeline``   ``DevicePipelineExercise``: a host function that copies and launches
- ``streams``    what a host function did with Numba's streams, events, copies and launches, in order
- ``libraries``  CuPy, PyCUDA and cuda-python exercise kinds (array API, CUDA C, custom judges)
- ``progress``   the learner's progress file and its table

``grade(answer, seed)`` is pure and never raises. The batch grader calls it in a fresh
process, so grading uses only the engine's own objects and the function it is given.
"""

from ..errors import GPURequired, KernelError, UnsupportedByTracer
from .base import PLACEHOLDER, Exercise, not_attempted, register
from .functions import ApproxFunctionExercise, Floats, FunctionExercise, Ints
from .images import ImageExercise
from .inputs import Acc, Arg, In, Out, Scalar, Size
from .kernels import KernelExercise
from .launch import LaunchRule, fixed, grid2d, learner_launch, one_block_per_row, per_element
from .libraries import ArrayExercise, CallExercise, CudaCExercise
from .pipeline import DevicePipelineExercise
from .results import Result
from .values import ValueExercise

__all__ = [
    "Result",
    "Exercise",
    "ValueExercise",
    "FunctionExercise",
    "ApproxFunctionExercise",
    "KernelExercise",
    "ImageExercise",
    "DevicePipelineExercise",
    "ArrayExercise",
    "CudaCExercise",
    "CallExercise",
    "Ints",
    "Floats",
    "Arg",
    "In",
    "Out",
    "Acc",
    "Scalar",
    "Size",
    "LaunchRule",
    "per_element",
    "fixed",
    "learner_launch",
    "grid2d",
    "one_block_per_row",
    "register",
    "not_attempted",
    "PLACEHOLDER",
    "GPURequired",
    "KernelError",
    "UnsupportedByTracer",
]
