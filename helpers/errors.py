"""Exceptions a learner sees as one plain sentence, never as a traceback from inside helpers.

`helpers` installs an IPython handler that prints any `CourseError` as its message alone;
outside IPython they are ordinary exceptions with the same message.
"""


class CourseError(Exception):
    """Base class: the message names the cause and the fix in plain words."""


class LearnerError(CourseError):
    """The learner's code cannot be run as asked (not a @cuda.jit kernel, wrong argument count, bad launch)."""


class KernelError(CourseError):
    """The learner's kernel raised while running on the CPU tracer (message names block, thread and line)."""


class UnsupportedByTracer(CourseError):
    """The kernel uses a CUDA feature the CPU tracer does not model (warp shuffles, cooperative groups...)."""


class GPURequired(CourseError):
    """This needs a real NVIDIA GPU and the course is running in CPU (simulator) mode."""


class TookTooLong(CourseError):
    """Learner code ran past the watchdog's budget (message names the block, thread and line running)."""
