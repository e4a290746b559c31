"""Drive the course's JupyterLab like a learner: a server on 127.0.0.1 and a page in headless Chromium.

Everything here waits on conditions (a selector, a prompt number, the kernel's status), never on
fixed sleeps: a cold kernel and Numba's simulator are slow on a 2-core CI machine.

The selectors are JupyterLab 4's stable class names (``.jp-Notebook``, ``.jp-CodeCell``,
``.jp-InputPrompt``, ``.jp-OutputArea-output``, ``data-mime-type``, the Lumino menu classes)
and ipywidgets 8's (``.jupyter-widgets``, ``.widget-slider``, ``.noUi-handle``, ``.widget-readout``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# One cell of the simulator can take tens of seconds on a loaded 2-core machine.
SERVER_START_S = 120
KERNEL_READY_S = 120
RUN_ALL_S = 300
REDRAW_S = 90

STDERR = '[data-mime-type="application/vnd.jupyter.stderr"]'
WIDGET_ERROR = "Error displaying widget"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(home: Path, **extra: str) -> dict:
    """The server's environment: the course in CPU mode, the repo importable, and every Jupyter
    folder (config, data, runtime, lab settings, workspaces, IPython) fresh, so nothing from the
    machine's own Jupyter setup (a stale workspace, a user kernel called python3) leaks in."""
    env = dict(os.environ)
    for key in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR",
        "IPYTHONDIR",
    ):
        path = home / key.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env.pop("JUPYTER_PATH", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # helpers decides from COURSE_MODE, as for a learner
    env["COURSE_MODE"] = "cpu"
    env["COURSE_PROGRESS_FILE"] = str(home / "course-progress.json")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def quiet_lab_settings(env: dict) -> None:
    """No "get Jupyter news?" toast over the screenshots (the machine is offline anyway)."""
    folder = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )


class LabServer:
    """A JupyterLab server run as its own process group, so stopping it also stops its kernels."""

    def __init__(self, cmd: list[str], *, cwd: Path, env: dict, port: int, token: str, log: Path):
        self.cmd, self.cwd, self.env, self.port, self.token, self.log = cmd, cwd, env, port, token, log
        self.proc: subprocess.Popen | None = None
        self.base = f"http://127.0.0.1:{port}"

    @classmethod
    def course(cls, root_dir: Path, home: Path, log: Path, python: str = sys.executable) -> LabServer:
        """The venv's `jupyter lab` on a copy of notebooks/ (root_dir), with a random token."""
        port, token = free_port(), secrets.token_hex(16)
        env = isolated_env(home)
        quiet_lab_settings(env)
        cmd = [
            python,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root_dir}",
            "--ServerApp.port_retries=0",
            "--LabApp.expose_app_in_browser=True",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        return cls(cmd, cwd=root_dir, env=env, port=port, token=token, log=log)

    def start(self) -> LabServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log, "w")  # noqa: SIM115 - open for the life of the server
        self.proc = subprocess.Popen(
            self.cmd, cwd=self.cwd, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if self.api("/api/status").get("started"):
                    return self
            except (OSError, ValueError):
                pass
            time.sleep(0.3)  # polling interval for a condition, not a wait for time to pass
        self.stop()
        raise TimeoutError(f"JupyterLab did not answer /api/status in {SERVER_START_S}s:\n{self.log_tail()}")

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(self.base + path, method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """End every session (and its kernel): the next test starts as a learner would, cold."""
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM to the whole group (the server, and `make` when it started the server); the
        server then shuts its kernels down (they run in sessions of their own). SIGKILL if stuck."""
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session: the group's id is the leader's pid
        for sig, grace in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            if _group_gone(self.proc, pgid, grace):
                break
        self._log.close()
        self.proc = None


def _group_gone(proc: subprocess.Popen, pgid: int, grace: float) -> bool:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()  # reap the leader, or its zombie keeps the group alive
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def copy_course(dest: Path) -> Path:
    """A private copy of notebooks/ (the tests run and autosave notebooks: never the repo's)."""
    nbdir = dest / "notebooks"
    shutil.copytree(REPO / "notebooks", nbdir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return nbdir


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A scratch notebook of code cells, with the course notebooks' kernelspec."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nbformat.write(nb, path)
    return path


# ---------------------------------------------------------------------------------------- page


class Notebook:
    """One open notebook in the page: open it, run it, read its cells."""

    def __init__(self, page, server: LabServer | None = None):
        self.page = page
        self.server = server

    def open(self, relpath: str) -> Notebook:
        # ?reset: a fresh workspace, so tabs of earlier tests do not come back
        self.page.goto(self.server.url(f"/lab/tree/{relpath}?reset"))
        return self.wait_ready(relpath.rsplit("/", 1)[-1])

    def wait_ready(self, name: str) -> Notebook:
        """The notebook's tab is current, its cells are drawn and its kernel is idle."""
        page = self.page
        page.locator(f'.lm-TabBar-tab.lm-mod-current:has-text("{name}")').wait_for(timeout=KERNEL_READY_S * 1000)
        self.panel.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=KERNEL_READY_S * 1000)
        self.wait_kernel_idle()
        return self

    @property
    def panel(self):
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").last

    def kernel_status(self) -> str | None:
        return self.page.evaluate("""() => {
            const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
            return k ? k.status : null; }""")

    def wait_kernel_idle(self, timeout_s: float = KERNEL_READY_S) -> None:
        self.page.wait_for_function(
            """() => {
            const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            const c = w && w.sessionContext;
            return !!(c && c.isReady && c.session && c.session.kernel && c.session.kernel.status === 'idle'); }""",
            timeout=timeout_s * 1000,
            polling=250,
        )

    def kernel_display_name(self) -> str:
        """What the learner reads on the toolbar's kernel button."""
        return (
            self.panel.locator(".jp-Toolbar .jp-KernelName, .jp-Toolbar [data-jp-item-name='kernelName']")
            .first.text_content()
            .strip()
        )

    def menu(self, top: str, item: str) -> None:
        """Click a menu bar entry then one of its items, as a learner does (Run > Run All Cells)."""
        page = self.page
        page.locator(".lm-MenuBar-item", has=page.locator(f'.lm-MenuBar-itemLabel:text-is("{top}")')).click()
        page.locator(".lm-Menu-item", has=page.locator(f'.lm-Menu-itemLabel:text-is("{item}")')).first.click()

    def prompts(self) -> list[str]:
        return [t.strip() for t in self.panel.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()]

    def run_all(self, timeout_s: float = RUN_ALL_S) -> float:
        """Run > Run All Cells, then wait until no cell is queued or running, the kernel is idle,
        and every code cell has a new execution count (or a cell failed, which stops the run:
        the cells after it keep an empty prompt). Returns the seconds it took."""
        t0 = time.monotonic()
        before = self.max_execution_count()
        self.menu("Run", "Run All Cells")
        self.page.wait_for_function(
            """([before, stderr]) => {
                const panel = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden)')].pop();
                const w = window.jupyterapp.shell.currentWidget;
                const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
                if (!panel || !k || k.status !== 'idle') return false;
                const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
                if (prompts.some(p => p.includes('*'))) return false;
                const counts = prompts.map(p => parseInt((p.match(/\\d+/) || ['0'])[0]));
                if (Math.max(0, ...counts) <= before) return false;
                return counts.every(c => c > before) || !!panel.querySelector('.jp-OutputArea-output' + stderr);
            }""",
            arg=[before, STDERR],
            timeout=timeout_s * 1000,
            polling=250,
        )
        return time.monotonic() - t0

    def max_execution_count(self) -> int:
        counts = [int(m.group()) for p in self.prompts() if (m := re.search(r"\d+", p))]
        return max(counts, default=0)

    def cells(self):
        return self.panel.locator(".jp-Notebook .jp-Cell")

    def code_cell(self, contains: str):
        """The code cell whose source contains `contains`, as a locator by position (so it still
        points at the same cell after its source is edited). All cells are in the DOM: JupyterLab
        4's default windowing ('contentVisibility') only skips painting the ones out of view."""
        sources = self.cells().evaluate_all(
            "cells => cells.map(c => c.classList.contains('jp-CodeCell') ? "
            "(c.querySelector('.cm-content') || {}).textContent || '' : null)"
        )
        hits = [i for i, src in enumerate(sources) if src is not None and contains in src]
        assert len(hits) == 1, f"{len(hits)} code cells contain {contains!r}"
        return self.cells().nth(hits[0])

    def outputs_text(self, cell=None) -> str:
        scope = cell if cell is not None else self.panel
        return "\n".join(scope.locator(".jp-OutputArea-output").all_text_contents())

    def error_outputs(self) -> list[str]:
        """Text of every stderr/error output (JupyterLab renders both as stderr) in the notebook."""
        return self.panel.locator(f".jp-OutputArea-output{STDERR}").all_text_contents()

    def tidy_for_picture(self) -> None:
        """No focus ring, hover toolbar or active-cell bar on a picture: blur whatever has focus,
        move the mouse away and make the first cell the active one (the notebook's own state)."""
        self.page.evaluate("""() => {
            if (document.activeElement) document.activeElement.blur();
            const w = window.jupyterapp.shell.currentWidget;
            if (w && w.content) { w.content.activeCellIndex = 0; w.content.mode = 'command'; } }""")
        self.page.mouse.move(1, 1)

    def set_cell_source(self, cell, source: str) -> None:
        """Replace a cell's code the way a learner does: click into it, select all, paste."""
        editor = cell.locator(".jp-InputArea-editor .cm-content")
        editor.click()
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.insert_text(source)  # a paste: no auto-indent or auto-closed brackets

    def run_cell(self, cell, timeout_s: float = REDRAW_S) -> None:
        """Shift+Enter in the cell, then wait for its new execution count."""
        prompt = cell.locator(".jp-InputPrompt")
        before = prompt.text_content().strip()
        cell.locator(".jp-InputArea-editor .cm-content").click()
        self.page.keyboard.press("Shift+Enter")
        self.page.wait_for_function(
            """([el, before]) => { const t = el.textContent.trim();
                                   return /\\d/.test(t) && !t.includes('*') && t !== before; }""",
            arg=[prompt.element_handle(), before],
            timeout=timeout_s * 1000,
            polling=250,
        )
        self.wait_kernel_idle(timeout_s)


def normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
