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


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for a sentence: short, and never raising (a learner's object may break repr)."""
    try:
        text = repr(value)
    except Exception:  # any object can be passed; the sentence must still be written
        text = f"a {type(value).__name__} object"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LearnerTypeError(LearnerError, TypeError):
    """An argument of the wrong kind (a TypeError too, so code that catches TypeError still does)."""


class LearnerValueError(LearnerError, ValueError):
    """An argument of the right kind with a value that cannot be used (a ValueError too)."""


class LearnerIndexError(LearnerError, IndexError):
    """An index outside an array, found where a kernel ran (an IndexError too, as the simulator raises)."""


class LearnerAttributeError(LearnerError, AttributeError):
    """A name the course's module does not have (an AttributeError too, so hasattr() and getattr() with a
    default still work)."""
