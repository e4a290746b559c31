"""A corpus of learner-style kernels, each with its launch, inputs and the verdicts it deserves.

`CASES` holds every case; correct kernels expect no verdict at all (zero false positives is the
point), buggy ones expect exactly the listed verdict kinds.  Sizes are small on purpose: the
whole corpus must trace in a few seconds.
"""

from . import buggy, correct
from .case import Case

CASES = correct.CASES + buggy.CASES
CORRECT = correct.CASES
BUGGY = buggy.CASES

__all__ = ["Case", "CASES", "CORRECT", "BUGGY"]
