"""Each submission in its own namespaces (issue 15, item 2): with the sandbox, a hostile notebook
cannot read solutions/ or the course's notebooks, leave a detached process that rewrites
grades.csv, read the grader's /proc or OUT/run.json, write into the grader's working folder, or
reach the network; a correct notebook still gets full marks and a crashing one its record.

The same hostile notebook graded where no mechanism is found shows each attack succeeding, so
every sandboxed assertion here can fail; it also shows the grader's one "NOT sandboxed" line.
The direct tests run a tiny script under each mechanism (bwrap, unshare) that works here, and
skip, naming what is missing, where one does not. The batch uses the best mechanism found;
``SANDBOX_TEST_MODE=unshare`` grades it under unshare where bwrap is installed too.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from helpers.grading import sandbox
from submission_sets import fixtures as fx
from submission_sets.graded import SALT
from submission_sets.graded import records as read_records
from submission_sets.isolated import run_cli

ROOT = Path(__file__).resolve().parents[2]
SECRET = fx.SECRET
SECRET_VALUE = "instructor-" + uuid.uuid4().hex[:8]
OPTS = ["--course", None, "-j2", "--mode", "cpu", "--cell-timeout", 30, "--timeout", 300, "--salt", SALT]


def _grade(tmp: Path, mode: str, names: dict, hostile=True) -> dict:
    course = fx.make_course(tmp / "course")
    subs, out, cwd = tmp / "subs", tmp / "out", tmp / "grader_cwd"
    cwd.mkdir(parents=True)
    victim = subs / "victim" / "notes.txt"
    victim.parent.mkdir(parents=True)
    victim.write_text("mine\n")
    marker = f"sleeper-{uuid.uuid4().hex}"
    for name, nb_cells in names.items():
        (subs / name).mkdir()
        (subs / name / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(nb_cells)))
    if hostile:
        (subs / "hostile").mkdir()
        text = json.dumps(fx.notebook(fx.cells(extra=fx.hostile_cells(out, victim, cwd, marker))))
        (subs / "hostile" / f"{fx.STEM}.ipynb").write_text(text)
    argv = [subs, "--out", out, *[course if a is None else a for a in OPTS]]
    rc, _, err, stdout = run_cli(mode, argv, cwd=cwd, env={SECRET: SECRET_VALUE}, stdout=True)
    time.sleep(1.5)  # a sleeper that survived has written by now
    return {
        "rc": rc,
        "stderr": err,
        "stdout": stdout,
        "out": out,
        "cwd": cwd,
        "victim": victim,
        "alive": fx.alive(marker),
        "records": read_records(out),
    }


def _kill(pids):
    for pid in pids:  # only the sleepers this test's notebook started
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


BATCH_MODE = os.environ.get("SANDBOX_TEST_MODE", "none")  # "unshare": as if bwrap were missing
FOUND = sandbox.detect(bwrap="/nonexistent/bwrap") if BATCH_MODE == "unshare" else sandbox.detect()
needs_sandbox = pytest.mark.skipif(FOUND.kind is None, reason=f"no sandbox on this machine: {FOUND.describe()}")


@pytest.fixture(scope="module")
def boxed(tmp_path_factory):
    names = {"perfect": fx.perfect_cells(), "crasher": fx.perfect_cells(extra=[fx.SEGFAULT], extra_at=6)}
    run = _grade(tmp_path_factory.mktemp("boxed"), BATCH_MODE, names)
    yield run
    _kill(run["alive"])


@pytest.fixture(scope="module")
def open_run(tmp_path_factory):
    run = _grade(tmp_path_factory.mktemp("open"), "unsandboxed", {})
    yield run
    _kill(run["alive"])


def _output(run) -> str:
    return run["records"]["hostile"]["output"]


@needs_sandbox
def test_sandboxed_batch_says_which_sandbox_once(boxed):
    assert boxed["rc"] == 0, boxed["stderr"][-3000:]
    lines = [ln for ln in boxed["stdout"].splitlines() if ln.startswith("sandbox: ")]
    assert lines == [FOUND.describe()], boxed["stdout"]
    assert json.loads((boxed["out"] / "run.json").read_text())["sandbox"] == FOUND.describe()


@needs_sandbox
def test_correct_notebook_gets_full_marks_and_a_crash_its_record(boxed):
    recs = boxed["records"]
    assert {e["status"] for e in recs["perfect"]["exercises"]} == {"passed"}, recs["perfect"]["exercises"]
    crasher = recs["crasher"]
    assert {e["status"] for e in crasher["exercises"]} == {"passed"}, crasher["runs"]
    assert "segmentation fault" in crasher["skipped_cells"][0]["why"], crasher["skipped_cells"]


@needs_sandbox
@pytest.mark.parametrize("attack", "acde")
def test_each_attack_is_blocked_in_the_sandbox(boxed, open_run, attack):
    assert f"BLOCKED:{attack}" in _output(boxed), _output(boxed)
    assert f"LEAK:{attack}" in _output(open_run), _output(open_run)  # the attack is real


@needs_sandbox
def test_no_secret_reaches_the_student_in_the_sandbox(boxed, open_run):
    assert SECRET_VALUE not in _output(boxed) and SALT not in _output(boxed)
    assert SECRET_VALUE in _output(open_run) and SALT in _output(open_run)


@needs_sandbox
def test_a_detached_process_dies_with_its_submission(boxed, open_run):
    assert "spawned:b" in _output(boxed) and boxed["alive"] == []
    assert "PWNED" not in (boxed["out"] / "grades.csv").read_text()
    assert boxed["victim"].read_text() == "mine\n"
    assert open_run["alive"], "without a sandbox the sleeper should have outlived the grader"
    assert "PWNED" in (open_run["out"] / "grades.csv").read_text()
    assert "PWNED" in open_run["victim"].read_text()


@needs_sandbox
def test_the_graders_folder_stays_untouched(boxed, open_run):
    assert not (boxed["cwd"] / "pwned.txt").exists()
    assert (open_run["cwd"] / "pwned.txt").exists()


def test_without_a_mechanism_the_grader_says_so_once(open_run):
    both = open_run["stdout"] + open_run["stderr"]
    assert both.count("NOT sandboxed") == 1, both
    line = next(ln for ln in both.splitlines() if "NOT sandboxed" in ln)
    assert "bwrap" in line and "unshare" in line and line.endswith("see docs/grading.md"), line
    assert {e["status"] for e in open_run["records"]["hostile"]["exercises"]} == {"not_attempted"}


def test_no_sandbox_flag_is_said_plainly():
    assert sandbox.detect(disabled=True).describe() == "NOT sandboxed: --no-sandbox was given; see docs/grading.md"


# -- each mechanism directly: a small script inside, its findings as JSON
PROBE = r"""
import json, os, socket, subprocess, sys
root = sys.argv[1]
facts = {"pid": os.getpid(), "procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
facts["seen"] = {p: os.path.exists(os.path.join(root, p)) for p in ("solutions", "notebooks", "helpers/grading")}
facts["home"] = sorted(os.listdir(sys.argv[4])) if os.path.isdir(sys.argv[4]) else []
try:
    open(os.path.join(root, "helpers", "sandbox-probe.txt"), "w").close()
    facts["helpers_writable"] = True
except OSError:
    facts["helpers_writable"] = False
open("mine.txt", "w").write("ok")
facts["cap_eff"] = open("/proc/self/status").read().split("CapEff:")[1].split()[0]
facts["net"] = [n for _, n in socket.if_nameindex()]
facts["tmp_mb"] = [os.statvfs(p).f_blocks * os.statvfs(p).f_frsize >> 20 for p in ("/tmp", "/dev/shm")]
facts["env"] = sorted(os.environ)
facts["no_new_privs"] = open("/proc/self/status").read().split("NoNewPrivs:")[1].split()[0]
try:
    os.kill(int(sys.argv[5]), 0)
    facts["grader_signalled"] = True
except OSError:
    facts["grader_signalled"] = False
try:
    open("/proc/sys/kernel/hostname", "w").write("x")
    facts["proc_sys_writable"] = True
except OSError:
    facts["proc_sys_writable"] = False
try:
    open("/proc/self/comm", "w").write("probe")  # what CUDA needs writable (GPU mode)
    facts["proc_self_writable"] = True
except OSError:
    facts["proc_self_writable"] = False
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", sys.argv[2]], start_new_session=True)
print(json.dumps(facts))
sys.stdout.flush()
os.kill(os.getpid(), 11) if sys.argv[3] == "segv" else None
"""


def _box(kind, gpu=False):
    if kind == "unshare":
        box = sandbox.detect(gpu=gpu, bwrap="/nonexistent/bwrap")
    else:
        box = sandbox.detect(gpu=gpu, unshare="/x/unshare")
    if box.kind != kind:
        pytest.skip(f"{kind} is not usable here: {box.describe()}")
    return box


@pytest.fixture(scope="module", params=["bwrap", "unshare", "bwrap-gpu", "unshare-gpu"])
def inside(request, tmp_path_factory):
    box = _box(request.param.split("-")[0], gpu=request.param.endswith("-gpu"))
    work = tmp_path_factory.mktemp(request.param) / "work"
    work.mkdir()
    marker = f"inside-{uuid.uuid4().hex}"
    args = [str(ROOT), marker, "segv", str(Path.home()), str(os.getpid())]
    argv = box.wrap([sys.executable, "-I", "-c", PROBE, *args], work)
    env = box.env({"PATH": os.environ.get("PATH", "")}, work)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=work)
    time.sleep(0.3)
    left = fx.alive(marker)
    _kill(left)
    (ROOT / "helpers" / "sandbox-probe.txt").unlink(missing_ok=True)  # only there if the sandbox failed
    assert r.stdout.strip(), r.stderr[-2000:]
    return {"box": box, "facts": json.loads(r.stdout), "rc": r.returncode, "left": left, "work": work, "env": env}


def test_own_pid_space_and_nothing_outlives_it(inside):
    facts = inside["facts"]
    assert facts["pid"] < 10 and max(facts["procs"]) < 10, facts["procs"]
    assert inside["left"] == []


def test_checkout_hidden_and_course_code_read_only(inside):
    assert inside["facts"]["seen"] == {"solutions": False, "notebooks": False, "helpers/grading": True}
    assert inside["facts"]["helpers_writable"] is False
    home = str(Path.home())  # only the folders on the way to the bound Python installation show
    bound = [p for p in sandbox.python_paths("/x") if p.startswith(home + "/")]
    on_the_way = {p[len(home) :].strip("/").split("/")[0] for p in bound}
    assert set(inside["facts"]["home"]) <= on_the_way, inside["facts"]["home"]


def test_only_its_working_folder_is_writable_and_kept(inside):
    assert (inside["work"] / "mine.txt").read_text() == "ok"


def test_no_capabilities_no_network_no_secrets(inside):
    facts = inside["facts"]
    assert int(facts["cap_eff"], 16) == 0 and facts["no_new_privs"] == "1"
    assert facts["net"] == ["lo"]
    assert set(facts["env"]) - {"LC_CTYPE", "PWD"} == set(inside["env"])  # what the grader passes, no more


def test_the_grader_cannot_be_signalled_and_proc_is_read_only(inside):
    assert inside["facts"]["grader_signalled"] is False
    assert inside["facts"]["proc_sys_writable"] is False
    # GPU mode: CUDA needs /proc writable (cuInit returned 304 on the H100/H200 hosts otherwise), but
    # not what acts on the whole machine
    assert inside["facts"]["proc_self_writable"] is inside["box"].gpu


def test_in_memory_folders_are_capped(inside):
    assert inside["facts"]["tmp_mb"] == [sandbox.TMPFS_MB] * 2


def test_a_crash_inside_reads_as_the_signal(inside):
    assert inside["box"].returncode(inside["rc"]) == -signal.SIGSEGV, inside["rc"]


def test_probe_names_what_is_missing():
    box = sandbox.detect(bwrap="/nonexistent/bwrap", unshare="/nonexistent/unshare")
    assert box.kind is None
    assert box.describe() == (
        "NOT sandboxed: bubblewrap (bwrap) is not installed and unshare (util-linux) is not installed; "
        "see docs/grading.md"
    )


def test_nothing_secret_is_bound(tmp_path):
    out = tmp_path / "out"
    ops = sandbox.plan(str(tmp_path / "w"), gpu=False, hide=(out,))
    bound = [op[1] for op in ops if op[0] in ("ro", "rw")]
    for p in bound:
        assert not sandbox._inside(str(ROOT), p) or p == str(ROOT / "helpers"), p
        assert not sandbox._inside(str(out), p) and p != str(Path.home()), p
        assert not sandbox._checkout(p), p


@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_gpu_mode_binds_device_nodes_that_stay_usable(kind, tmp_path, monkeypatch):
    """No GPU here: a character device made like /dev/null stands in for /dev/nvidia0 (a device node
    bound from a user namespace must keep working, as the GPU's must)."""
    box = _box(kind)
    node = tmp_path / "nvidia0"
    try:
        os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))
    except OSError as e:
        pytest.skip(f"cannot make a device node here ({e})")
    monkeypatch.setattr(sandbox, "GPU_NODES", str(tmp_path / "nvidia*"))
    work = tmp_path / "work"
    work.mkdir()
    code = f"import os, stat\np = {str(node)!r}\nif os.path.exists(p) and stat.S_ISCHR(os.stat(p).st_mode):\n"
    code += "    open(p, 'r+').write('x')\n    print('usable')"  # r+: never creates a plain file
    for gpu, expected in ((True, "usable"), (False, "")):
        box.gpu = gpu
        r = subprocess.run(box.wrap([sys.executable, "-I", "-S", "-c", code], work), capture_output=True, text=True)
        assert r.stdout.strip() == expected, r.stderr[-1000:]


def test_a_picture_linked_out_of_the_working_folder_is_not_copied(tmp_path):
    from helpers.grading import records

    where, secret = tmp_path / "scratch", tmp_path / "run.json"
    (where / "run0" / "pictures").mkdir(parents=True)
    secret.write_text("salt")
    (where / "run0" / "pictures" / "a.png").symlink_to(secret)
    (where / "run0" / "pictures" / "b.png").write_bytes(b"png")
    rec = {"exercises": [{"exercise": x, "picture": str(where / "run0" / "pictures" / f"{x}.png")} for x in "ab"]}
    records.copy_pictures(rec, tmp_path / "feedback", where)
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == ["b.png"]


@needs_sandbox
def test_in_gpu_mode_a_sandbox_where_cuda_does_not_start_is_not_used(monkeypatch):
    """The H100 host ran nvidia-smi inside the user-namespace sandbox but cuInit returned 304 there:
    detection must try the next mechanism, and say why when none starts CUDA."""
    monkeypatch.setattr(sandbox, "_cuda_starts", lambda: True)
    monkeypatch.setattr(sandbox, "_GPU_PROBE", "import sys; print(304, file=sys.stderr); sys.exit(6)")
    box = sandbox.detect(gpu=True)
    assert box.kind is None and "CUDA does not start inside (cuInit: 304)" in box.describe(), box.describe()
    assert sandbox.detect(gpu=False).kind is not None  # CPU grading keeps its sandbox
    monkeypatch.setattr(sandbox, "_GPU_PROBE", "import sys; sys.exit(0)")
    assert sandbox.detect(gpu=True).kind is not None
