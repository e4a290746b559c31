"""Each grading child in its own Linux namespaces, where the system offers them.

Why: student code runs as the instructor. Without a sandbox it can read ``solutions/`` next to
``helpers``, the salt in ``OUT/run.json``, the grader's ``/proc/<pid>/environ``; leave a
``setsid`` process behind that rewrites ``grades.csv`` later; write anywhere; use the network.
Inside the sandbox the child sees a read-only minimal tree (system libraries, the Python
installation, ``helpers/`` of the course without the rest of the checkout), its own writable
working folder (the results file and pictures the parent reads back), a fresh ``/proc`` of a
new PID namespace (every process dies with the child), no network and no capabilities.

Mechanisms, best first, each probed by running Python inside it (``which`` proves nothing):
bubblewrap (``bwrap``); else util-linux ``unshare`` with a small Python prelude (``prelude.py``)
that builds the same tree with mount(2) and pivot_root(2); else none, said once in the summary.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = "see docs/grading.md"
# prelude.py's text, run by ``python -I -S -c`` as PID 1 of unshare's namespaces (no helpers import there)
_PRELUDE = Path(__file__).with_name("prelude.py").read_text()
# What of /etc a Python process needs (the loader's cache, names of users, fonts, time zone).
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "fonts",
    "mime.types",
)
_TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")  # symlinks into /usr on merged-/usr systems
GPU_NODES = "/dev/nvidia*"  # bound in GPU mode: nvidia0.., nvidiactl, nvidia-uvm(-tools), nvidia-modeset, nvidia-caps
PROC_SYSTEM = ("sys", "sysrq-trigger", "irq", "bus", "fs")  # read-only even where /proc is writable
TMPFS_MB = 512  # /tmp and /dev/shm live in memory: capped, or a child could take the machine's RAM
_SIGNALS = {4, 6, 7, 8, 9, 11, 25}  # SIGILL SIGABRT SIGBUS SIGFPE SIGKILL SIGSEGV SIGXFSZ: see returncode()


def _inside(p: str, q: str) -> bool:
    """p is q or below q (plain paths, no symlinks followed)."""
    return p == q or p.startswith(q.rstrip("/") + "/")


def _checkout(p: str) -> bool:
    return os.path.isdir(os.path.join(p, "solutions")) or os.path.isdir(os.path.join(p, "helpers", "grading"))


def python_paths(workdir: str, hide=()) -> list[str]:
    """Folders the child's Python needs read-only, minus any that would reveal what must stay
    hidden: the course checkout (solutions/, notebooks/), the home folder, the grader's working
    folder, OUT and the submissions (``hide``), other submissions' working folders."""
    prefix = os.path.abspath(sys.prefix)
    want = [sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix]
    want.append(os.path.dirname(os.path.realpath(sys.executable)))
    want += [p for p in sys.path if p and os.path.isabs(p)]
    want += os.environ.get("LD_LIBRARY_PATH", "").split(":")
    want += [os.environ.get(k, "") for k in ("CUDA_HOME", "CUDA_PATH")]
    if os.environ.get("NUMBA_CUDA_DRIVER"):
        want.append(os.path.dirname(os.environ["NUMBA_CUDA_DRIVER"]))
    secret = [str(ROOT), str(Path.home()), os.getcwd(), workdir, *map(str, hide)]
    secret += [os.path.realpath(s) for s in secret]
    out = []
    for p in want:
        if not p or not os.path.isabs(p) or not os.path.exists(p):
            continue
        for q in dict.fromkeys([os.path.abspath(p), os.path.realpath(p)]):
            if any(_inside(s, q) for s in secret):  # q is (an ancestor of) something secret
                continue
            if any(_inside(q, s) for s in map(str, hide)) or _checkout(q):
                continue
            if _inside(q, str(ROOT)) and not _inside(q, prefix):  # inside the checkout, not its .venv
                continue
            out.append(q)
    keep = []
    for q in sorted(set(out), key=len):
        if not any(_inside(q, k) for k in keep):
            keep.append(q)
    return keep


def plan(workdir: str, gpu: bool, hide=(), hide_problems: bool = False) -> list:
    """The sandbox's file tree as ordered operations, shared by both mechanisms. With
    ``hide_problems`` the course's exercises (references, expected values) are an empty folder:
    a judged child (judge.py) runs code only and never needs them."""
    ops = []
    for top in _TOP:
        p = "/" + top
        if os.path.islink(p):
            ops.append(("symlink", os.readlink(p), p))
        elif os.path.isdir(p):
            ops.append(("ro", p, p))
    ops.append(("ro", "/usr", "/usr"))
    ops += [("ro", f"/etc/{e}", f"/etc/{e}") for e in _ETC if os.path.exists(f"/etc/{e}")]
    ops.append(("ro", "/sys", "/sys"))  # CPU topology; the NVIDIA driver reads PCI data here
    # The empty folders first, then what is bound below them (a PYTHONPATH folder in /tmp, the workdir).
    # /proc is read-only, but in GPU mode CUDA needs it writable (on the H100/H200 hosts cuInit returned
    # 304 under a read-only /proc and 0 once it was writable): then only the system-wide parts stay read-only.
    ops += [("dev", "/dev"), ("proc", "/proc", gpu), ("tmpfs", "/tmp"), ("tmpfs", "/dev/shm")]
    ops += [("ro", p, p) for p in python_paths(workdir, hide) if not _inside(p, "/usr")]
    ops.append(("ro", str(ROOT / "helpers"), str(ROOT / "helpers")))  # the course code, not its checkout
    if hide_problems:
        ops.append(("tmpfs", str(ROOT / "helpers" / "problems")))
    if gpu:
        for node in sorted(glob.glob(GPU_NODES)):
            ops.append(("devbind", node, node))
    ops.append(("rw", workdir, workdir))
    return ops


def bwrap_args(ops: list, cwd: str) -> list[str]:
    args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    flag = {"ro": "--ro-bind", "rw": "--bind", "devbind": "--dev-bind"}
    for op in ops:
        if op[0] in flag:
            args += [flag[op[0]], op[1], op[2]]
        elif op[0] == "symlink":
            args += ["--symlink", op[1], op[2]]
        elif op[0] == "tmpfs":
            args += ["--size", str(TMPFS_MB << 20), "--tmpfs", op[1]]
        elif op[0] == "proc" and op[2]:  # writable for CUDA; the system-wide files still read-only
            args += ["--proc", op[1]]
            for sub in PROC_SYSTEM:
                if os.path.exists(f"/proc/{sub}"):
                    args += ["--ro-bind", f"/proc/{sub}", f"{op[1]}/{sub}"]
        elif op[0] == "proc":  # read-only: uid 0 without capabilities could still write /proc/sys
            args += ["--proc", op[1], "--remount-ro", op[1]]
        else:  # dev
            args += [f"--{op[0]}", op[1]]
    return [*args, "--remount-ro", "/", "--chdir", cwd]


@dataclass
class Sandbox:
    kind: str | None  # "bwrap", "unshare" or None
    reason: str = ""  # why none, when kind is None
    tool: str = ""
    gpu: bool = False
    hide: tuple = ()
    args: list = field(default_factory=list)  # the unshare flags that worked

    def describe(self) -> str:
        """One line for the summary."""
        if self.kind == "bwrap":
            return "sandbox: bubblewrap (namespaces: no network, own PID space, read-only tree without solutions/)"
        if self.kind == "unshare":
            return "sandbox: unshare namespaces (no network, own PID space, read-only tree without solutions/)"
        return f"NOT sandboxed: {self.reason}; {DOCS}"

    def env(self, env: dict, workdir: Path) -> dict:
        """The child's environment inside: home and caches in its own working folder."""
        if self.kind is None:
            return env
        mpl = workdir / "matplotlib"
        _seed_font_cache(env.get("MPLCONFIGDIR"), mpl)
        return {
            **env,
            "HOME": str(workdir),
            "TMPDIR": "/tmp",
            "MPLCONFIGDIR": str(mpl),
            "XDG_CACHE_HOME": str(workdir / "cache"),
            "CUPY_CACHE_DIR": str(workdir / "cupy"),
        }

    def wrap(self, argv: list, workdir: Path, hide_problems: bool = False) -> list:
        """argv run inside the sandbox (argv itself when there is none)."""
        if self.kind is None:
            return list(argv)
        if self.kind == "bwrap":
            return [
                self.tool,
                *bwrap_args(plan(str(workdir), self.gpu, self.hide, hide_problems), str(workdir)),
                "--",
                *argv,
            ]
        spec = json.dumps({**self.spec(workdir, hide_problems), "argv": list(argv)})
        return [self.tool, *self.args, "--", sys.executable, "-I", "-S", "-c", _PRELUDE, spec]

    def spec(self, workdir: Path, hide_problems: bool = False) -> dict:
        """What ``prelude.enter`` builds inside the ``unshare`` sandbox for ``workdir``."""
        return {
            "root": tempfile.mkdtemp(prefix=".root-", dir=workdir.parent),  # outside the writable folder
            "ops": plan(str(workdir), self.gpu, self.hide, hide_problems),
            "cwd": str(workdir),
            "mb": TMPFS_MB,
            "proc_system": PROC_SYSTEM,
        }

    def returncode(self, rc):
        """Both mechanisms report a child killed by signal N as exit status 128+N; the grader's
        messages expect -N (a student's ``os._exit(139)`` reads as a segfault: a rare confusion)."""
        if self.kind is not None and rc is not None and rc > 128 and rc - 128 in _SIGNALS:
            return -(rc - 128)
        return rc


def _seed_font_cache(src, dest: Path) -> None:
    """Matplotlib rebuilds its font list (seconds) in an empty config folder: copy the grader's."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in glob.glob(os.path.join(src or os.path.expanduser("~/.config/matplotlib"), "fontlist-*.json")):
        try:
            shutil.copyfile(f, dest / os.path.basename(f))
        except OSError:
            pass


_PROBE = "import os, sys; sys.exit(0 if os.getpid() < 10 and not os.path.exists({hidden!r}) else 5)"
# In GPU mode the driver must start inside too: on the lent H100 host CUDA failed in a user
# namespace (cuInit error 304) while nvidia-smi worked, so the next mechanism is tried.
_GPU_PROBE = (
    "import ctypes, sys\n"
    "try:\n    r = ctypes.CDLL('libcuda.so.1').cuInit(0)\nexcept OSError as e:\n    r = str(e)\n"
    "print(r, file=sys.stderr); sys.exit(0 if r == 0 else 6)"
)


def _cuda_starts() -> bool:
    """Does CUDA start outside any sandbox (so a failure inside is the sandbox's)?"""
    try:
        r = subprocess.run([sys.executable, "-I", "-S", "-c", _GPU_PROBE], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0


def _probe(box: Sandbox) -> str | None:
    """None when Python starts inside ``box`` with its own PID space and without the checkout; else why not."""
    work = Path(tempfile.mkdtemp(prefix="grade-probe-")) / "work"
    work.mkdir()
    probes = [_PROBE.format(hidden=str(ROOT / "solutions"))] + ([_GPU_PROBE] if box.gpu and _cuda_starts() else [])
    try:
        for code in probes:
            argv = [sys.executable, "-I", "-S", "-c", code]
            env = {"PATH": os.defpath}
            r = subprocess.run(box.wrap(argv, work), capture_output=True, text=True, timeout=60, env=env)
            if r.returncode != 0:
                break
    except (OSError, subprocess.SubprocessError) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
    if r.returncode == 0:
        return None
    lines = [ln.strip() for ln in r.stderr.splitlines() if ln.strip()]
    if r.returncode == 5:
        return "the checkout or the grader's processes were still visible inside"
    if r.returncode == 6:
        return f"CUDA does not start inside (cuInit: {lines[-1] if lines else '?'})"
    return lines[-1][:200] if lines else f"exit status {r.returncode}"


def detect(disabled: bool = False, gpu: bool = False, hide=(), bwrap: str | None = None, unshare: str | None = None):
    """The best mechanism that works here, probed; ``bwrap``/``unshare`` name the programs (tests)."""
    if disabled:
        return Sandbox(None, "--no-sandbox was given")
    hide = tuple(str(h) for h in hide)
    why = []
    tool = bwrap if bwrap is not None else shutil.which("bwrap")
    if tool and os.path.exists(tool):
        box = Sandbox("bwrap", tool=tool, gpu=gpu, hide=hide)
        err = _probe(box)
        if err is None:
            return box
        why.append(f"bwrap failed ({err})")
    else:
        why.append("bubblewrap (bwrap) is not installed")
    tool = unshare if unshare is not None else shutil.which("unshare")
    if not tool or not os.path.exists(tool):
        why.append("unshare (util-linux) is not installed")
    elif not sys.platform.startswith("linux"):
        why.append("unshare needs Linux")
    else:
        base = ["--pid", "--fork", "--kill-child", "--mount", "--net", "--ipc", "--uts"]
        # A user namespace first (no real root needed); as root without one when that is refused.
        variants = [["--user", "--map-root-user", *base]] + ([base] if os.geteuid() == 0 else [])
        for args in variants:
            box = Sandbox("unshare", tool=tool, gpu=gpu, hide=hide, args=args)
            err = _probe(box)
            if err is None:
                return box
        why.append(f"unshare failed ({err})")
    return Sandbox(None, " and ".join(why))
