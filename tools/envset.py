#!/usr/bin/env python3
"""Print which locked set to install: cpu, cu12 or cu13.

`auto` reads the highest CUDA version the driver supports from `nvidia-smi`
(driver >= 580 supports CUDA 13; older ones stop at 12.x). No driver: cpu.
Standard library only: it runs before any environment exists.
"""

import re
import shutil
import subprocess
import sys

SETS = ("cpu", "cu12", "cu13")


def driver_cuda_major() -> int | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", out)
    return int(m.group(1)) if m else None


def pick(wanted: str, major: int | None) -> str:
    if wanted in SETS:
        return wanted
    if wanted != "auto":
        raise SystemExit(f"CUDA_SET={wanted!r} is not one of auto, {', '.join(SETS)}.")
    if major is None:
        return "cpu"
    if major >= 13:
        return "cu13"
    if major == 12:
        return "cu12"
    print(
        f"note: the driver supports only CUDA {major}; the course needs 12 or newer, using the CPU set", file=sys.stderr
    )
    return "cpu"


if __name__ == "__main__":
    want = sys.argv[1] if len(sys.argv) > 1 else "auto"
    print(pick(want, driver_cuda_major() if want == "auto" else None))
