"""Run a command while other processes keep every CPU busy, as on a shared CI machine.

    python tools/busy.py [--spinners N] -- make test

N spinning processes (default: one per CPU) run at the same priority as the command for as
long as it runs; they are stopped however the command ends. Prints the command's wall time and
exits with its status. `make test-busy` runs `make test` this way: the suite must pass on a
machine whose cores are taken, because CI runs on one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SPIN = "while True:\n    pass\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spinners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.spinners)]
    started = time.monotonic()
    try:
        rc = subprocess.call(command)
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()
    minutes, seconds = divmod(time.monotonic() - started, 60)
    print(
        f"busy.py: {' '.join(command)} exited {rc} after {int(minutes)} min {seconds:.0f} s "
        f"with {args.spinners} spinning process(es) on {os.cpu_count()} CPU(s)"
    )
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
