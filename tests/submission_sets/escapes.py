"""What a sandbox must stop (tests/grading/test_sandbox.py and check_gpu_sandbox.py): a cell that
crashes its process, the grader's secret, the attack cells, and the processes a submission left."""

from __future__ import annotations

from pathlib import Path

SEGFAULT = "import ctypes\nctypes.string_at(0)"  # a cell that crashes its process
SECRET = "GRADER_TEST_SECRET"  # set in the grader's environment by the tests; must not reach a child


def hostile_cells(out: Path, victim: Path, grader_cwd: Path, marker: str) -> list:
    """The attacks a sandbox must stop (tests/grading/test_sandbox.py), one per cell; each prints
    LEAK:<x> when it got through and BLOCKED:<x> when not. a: read solutions/ or notebooks/ next
    to helpers; b: a detached sleeper (argv holds ``marker``) appending to OUT/grades.csv and
    ``victim``; c: the grader's environment or --salt through /proc, and OUT/run.json; d: a file in
    the grader's working folder; e: the network."""
    sleeper = (
        "import time\nfor _ in range(150):\n    time.sleep(0.2)\n"
        f"    for p in {[str(out / 'grades.csv'), str(victim)]!r}:\n"
        "        try:\n            with open(p, 'a') as f:\n                f.write('PWNED\\n')\n"
        "        except OSError:\n            pass\n"
    )
    return [
        "import glob, os, helpers\nroot = os.path.dirname(os.path.dirname(os.path.abspath(helpers.__file__)))\n"
        "found = sorted(glob.glob(root + '/solutions/*.ipynb')) + sorted(glob.glob(root + '/notebooks/*.ipynb'))\n"
        "try:\n    print('LEAK:a', found[0], len(open(found[0]).read()))\n"
        "except (IndexError, OSError) as e:\n    print('BLOCKED:a', type(e).__name__)",
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
        f"{sleeper!r}, {marker!r}], start_new_session=True, stdin=subprocess.DEVNULL, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nprint('spawned:b')",
        "import glob\nhits = []\nfor p in glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/cmdline'):\n"
        "    try:\n        words = open(p, 'rb').read().decode(errors='replace').replace('\"', ' ').split('\\0')\n"
        "    except OSError:\n        continue\n"
        f"    hits += [w[-200:] for w in words if w.startswith('{SECRET}=') or '--salt' in w]\n"
        f"try:\n    hits.append(open({str(out / 'run.json')!r}).read()[:300])\nexcept OSError:\n    pass\n"
        "print('LEAK:c' if hits else 'BLOCKED:c', hits)",
        f"try:\n    open({str(grader_cwd / 'pwned.txt')!r}, 'w').write('x')\n    print('LEAK:d')\n"
        "except OSError as e:\n    print('BLOCKED:d', type(e).__name__)",
        "import socket\nnames = [n for _, n in socket.if_nameindex()]\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=1).close()\n    ok = True\n"
        "except OSError:\n    ok = False\nprint('LEAK:e' if ok or names != ['lo'] else 'BLOCKED:e', names)",
    ]


def alive(marker: str) -> list[int]:
    """Processes on this machine whose command line holds ``marker``."""
    pids = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and marker.encode() in (p / "cmdline").read_bytes():
                pids.append(int(p.name))
        except OSError:
            pass
    return pids
