"""What a corpus entry holds."""

from dataclasses import dataclass, field


@dataclass
class Case:
    name: str
    kernel: object
    griddim: object
    blockdim: object
    make_args: object  # () -> tuple of fresh arguments
    expect: frozenset = frozenset()  # verdict kinds
    outputs: tuple = ()
    reference: object = None  # (args) -> expected value of args[out]
    out: int = -1  # which argument `reference` describes
    raises: object = None  # exception class the tracer must raise instead
    configured: bool = False  # launch as trace(kernel[g, b, 0, sharedmem], *args)
    sharedmem: int = 0
    note: str = field(default="")

    def launch_args(self):
        """(kernel-or-configured, *args) for trace()."""
        args = self.make_args()
        if self.configured:
            return (self.kernel[self.griddim, self.blockdim, 0, self.sharedmem],) + tuple(args), args
        return (self.kernel, self.griddim, self.blockdim) + tuple(args), args
