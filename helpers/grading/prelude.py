"""The ``unshare`` sandbox's tree, built from inside the new namespaces (standard library only).

Two callers, one code path, so the tree cannot differ between them:

- ``python -I -S -c <this file> SPEC`` started by util-linux ``unshare`` (``sandbox.py``): runs as
  PID 1 of the new namespaces, builds the tree of ``sandbox.plan()`` on a tmpfs, pivots into it,
  drops every capability, then runs the child and reaps what it leaves; when it exits, the kernel
  kills everything else in the PID namespace;
- a process forked from one of the grader's templates (``serve`` below, run by ``template.py`` and by
  the compile server's ``--template``): ``unshare_now`` makes the same namespaces as ``unshare``
  does, and its PID 1 calls ``enter`` before it runs anything.

Standard library only, and loadable by path: the compile server must not import ``helpers``.
"""

import ctypes
import fcntl
import json
import os
import platform
import select
import signal
import socket
import sys

B, RO, REC, REM, PRIV, NOSUID, NODEV, NOEXEC = 4096, 1, 16384, 32, 1 << 18, 2, 4, 8
# unshare(2) flags: the mount, PID, network, IPC and UTS namespaces always (enter() must never act on
# the grader's own tree), a user namespace with --user
NAMESPACES = 0x20000 | 0x20000000 | 0x40000000 | 0x8000000 | 0x4000000
NEWUSER = 0x10000000
_libc = ctypes.CDLL(None, use_errno=True)


def fail(what):
    e = ctypes.get_errno()
    sys.stderr.write("sandbox: %s: %s\n" % (what, os.strerror(e)))
    os._exit(126)


def mount(src, dst, fs, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if _libc.mount(enc(src), enc(dst), enc(fs), ctypes.c_ulong(flags), enc(data)) != 0:
        fail("mount %s" % dst)


def readonly(dst):
    st = os.statvfs(dst).f_flag
    keep = (st & (NOSUID | NODEV | NOEXEC)) | (1024 if st & 1024 else 0) | (2048 if st & 2048 else 0)
    keep |= (1 << 21) if st & 4096 else 0
    mount(None, dst, None, B | REM | RO | keep)


def spot(dst, like_dir):
    if os.path.lexists(dst):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if like_dir:
        os.mkdir(dst)
    else:
        open(dst, "a").close()


def unshare_now(args):
    """What ``unshare ARGS`` does before it forks: the new namespaces of this process (its next child
    is PID 1 of the new PID namespace) and, with ``--map-root-user``, root inside mapped to us."""
    uid, gid = os.getuid(), os.getgid()
    flags = NAMESPACES | (NEWUSER if "--user" in args else 0)
    if _libc.unshare(ctypes.c_int(flags)) != 0:
        fail("unshare")
    if "--map-root-user" in args:
        for name, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid), ("gid_map", "0 %d 1" % gid)):
            with open("/proc/self/" + name, "w") as f:
                f.write(text)


def die_with_parent():
    """As ``unshare --kill-child``: this process is killed when its parent ends."""
    _libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL


def enter(spec):
    """Build the tree of ``spec["ops"]``, pivot into it and drop every capability (PID 1 only)."""
    new = spec["root"]
    mount(None, "/", None, REC | PRIV)
    mount("tmpfs", new, "tmpfs", NOSUID | NODEV, "mode=0755")

    def bind(src, dst, ro):
        d = new + dst
        spot(d, os.path.isdir(src))
        mount(src, d, None, B | REC)
        if ro:
            readonly(d)

    for op in spec["ops"]:
        kind = op[0]
        if kind in ("ro", "rw", "devbind"):
            if os.path.exists(op[1]):
                bind(op[1], op[2], kind == "ro")
        elif kind == "symlink":
            os.makedirs(os.path.dirname(new + op[2]), exist_ok=True)
            os.symlink(op[1], new + op[2])
        elif kind == "tmpfs":
            spot(new + op[1], True)
            mount("tmpfs", new + op[1], "tmpfs", NOSUID | NODEV, "mode=1777,size=%dm" % spec["mb"])
        elif kind == "proc":
            spot(new + "/proc", True)
            mount("proc", new + "/proc", "proc", NOSUID | NODEV | NOEXEC | (0 if op[2] else RO))
            if op[2]:  # writable for CUDA: keep what acts on the whole machine read-only
                for sub in spec["proc_system"]:
                    d = new + "/proc/" + sub
                    if os.path.exists(d):
                        mount(d, d, None, B)
                        readonly(d)
        elif kind == "dev":
            spot(new + "/dev", True)
            mount("tmpfs", new + "/dev", "tmpfs", NOSUID, "mode=0755")
            for n in ("null", "zero", "full", "random", "urandom", "tty"):
                if os.path.exists("/dev/" + n):
                    bind("/dev/" + n, "/dev/" + n, False)
            for n, t in (
                ("fd", "/proc/self/fd"),
                ("stdin", "/proc/self/fd/0"),
                ("stdout", "/proc/self/fd/1"),
                ("stderr", "/proc/self/fd/2"),
            ):
                os.symlink(t, new + "/dev/" + n)
    os.chdir(new)
    nr = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}.get(platform.machine())
    if nr is None or _libc.syscall(nr, b".", b".") != 0:
        fail("pivot_root")
    if _libc.umount2(b".", 2) != 0:
        fail("umount old root")
    os.chdir("/")
    readonly("/")
    drop()


def drop():
    _libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    for cap in range(64):
        _libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    _libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    _libc.prctl(28, 0xEF, 0, 0, 0)  # SECBIT_NOROOT... locked: uid 0 gains nothing at exec
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
    if _libc.capset(hdr, (ctypes.c_uint32 * 6)()) != 0:
        fail("capset")


def reap(pid):
    """PID 1's loop: reap whatever ends; exit with ``pid``'s status (128+N for signal N), as unshare does."""
    while True:
        try:
            got, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if got == pid:
            os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def serve(fd, run):
    """A template's loop (template.py): fork for each request, reap, report each exit status. In each
    fork, ``run(target)`` inside the sandbox the request names; never returns."""
    if len(os.listdir("/proc/self/task")) != 1:  # a fork keeps one thread: a lock another held stays held
        raise SystemExit("a template must have one thread when it forks")
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    statuses = {}  # pid -> the write end of its status pipe
    while True:
        ready = select.select([sock, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(statuses)
        if sock not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 8)
        if not msg:
            os._exit(0)  # the grader is gone
        request = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            _forked(request, fds, run)
        pidfd = os.pidfd_open(pid)  # before any reaping: the grader's handle cannot name another process
        for f in fds[:3] + fds[4:]:
            os.close(f)
        statuses[pid] = fds[3]
        socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
        os.close(pidfd)


def _reap(statuses):
    while statuses:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = statuses.pop(pid, None)
        if fd is not None:
            os.write(fd, str(os.waitstatus_to_exitcode(status)).encode())
            os.close(fd)


def _place(fds, targets):
    """stdin, stdout, stderr and ``targets`` from the received descriptors; every other one closed."""
    moved = [fcntl.fcntl(f, fcntl.F_DUPFD, 512) for f in fds]
    stdin, out, err, _status, *extra = moved
    for f, n in zip((stdin, out, err, *extra), (0, 1, 2, *targets)):
        os.dup2(f, n)
    keep = {0, 1, 2, *targets}
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:  # the listing's own descriptor, already closed
                pass


def _forked(request, fds, run):
    """In the forked process: its own session, descriptors and environment, the sandbox's namespaces
    and tree (as unshare and main() make them), then ``run(target)``; never returns."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        _place(fds, request["fds"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        if request["spec"] is not None:
            unshare_now(request["unshare"])
            pid = os.fork()
            if pid:  # as unshare: wait for PID 1, exit as it did
                _, status = os.waitpid(pid, 0)
                os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
            die_with_parent()
            enter(request["spec"])
            pid = os.fork()
            if pid:
                reap(pid)
            os.chdir(request["cwd"])
        run(request["target"])
    except BaseException as e:  # said on the captured output; the grader sees a child that never got ready
        os.write(2, ("template: %s: %s\n" % (type(e).__name__, e)).encode())
        os._exit(126)
    os._exit(0)


def facts():
    """What a template's first fork says of itself (template.Template._check and the tests read it)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {
        "pid": os.getpid(),
        "checkout": os.path.exists(os.path.join(root, "solutions")),
        "problems": sorted(m for m in sys.modules if m.startswith("helpers.problems")),
        "numba_cuda": "numba.cuda" in sys.modules,
        "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
    }


def say(obj):
    os.write(1, (json.dumps(obj) + "\n").encode())


def main():
    spec = json.loads(sys.argv[1])
    enter(spec)
    argv = spec["argv"]
    pid = os.fork()
    if pid == 0:
        os.chdir(spec["cwd"])
        try:
            os.execv(argv[0], argv)
        except OSError as e:
            sys.stderr.write("sandbox: cannot start %s: %s\n" % (argv[0], e))
            os._exit(127)
    reap(pid)


if __name__ == "__main__":
    main()
