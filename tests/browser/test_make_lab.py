"""`make lab` opens the course on notebook 00, with the kernel of the environment make built.

The test runs the repo's real Makefile recipe (`make -f <repo>/Makefile lab`) from a temp folder
holding a copy of notebooks/, so nothing in the repo is opened for writing. It passes
COURSE_ENV=current PYTHON=<this venv's python>: the recipe then runs the very interpreter that
`make env` built, without re-running tools/build-env.sh (which, started from another folder,
would rewrite the venv's path file). The browser make lab would start is captured through
$BROWSER (Python's webbrowser honours it) and Chromium is sent to that exact address.
"""

from __future__ import annotations

import secrets
import shutil
import sys
import time
from pathlib import Path

import jlab
import pytest

REDIRECT_WAIT_S = 60


def _browser_recorder(folder: Path) -> Path:
    """A stand-in for the learner's browser: it writes down the address make lab opens."""
    script = folder / "record-url"
    script.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$(dirname "$0")/opened-urls"\n')
    script.chmod(0o755)
    return script


def test_make_lab_opens_notebook_00_on_the_course_kernel(page, tmp_path, artifacts):
    make = shutil.which("make")
    if make is None:
        pytest.fail("`make` is not installed")
    jlab.copy_course(tmp_path)
    recorder = _browser_recorder(tmp_path)
    port, token = jlab.free_port(), secrets.token_hex(16)
    env = jlab.isolated_env(tmp_path / "home", BROWSER=f"{recorder} %s")
    env.pop("MAKEFLAGS", None)
    env.pop("MFLAGS", None)
    lab_args = f"--IdentityProvider.token={token} --LabApp.expose_app_in_browser=True --ServerApp.port_retries=0"
    cmd = [
        make,
        "--no-print-directory",
        "-f",
        str(jlab.REPO / "Makefile"),
        "lab",
        "COURSE_ENV=current",
        f"PYTHON={sys.executable}",
        f"PORT={port}",
        f"LAB_ARGS={lab_args}",
    ]
    server = jlab.LabServer(cmd, cwd=tmp_path, env=env, port=port, token=token, log=artifacts / "make-lab.log").start()
    try:
        urls = tmp_path / "opened-urls"
        deadline = time.monotonic() + REDIRECT_WAIT_S
        while not urls.exists() and time.monotonic() < deadline:
            time.sleep(0.2)  # polling for the file, not a fixed wait
        assert urls.exists(), f"make lab did not open a browser:\n{server.log_tail()}"
        opened = urls.read_text().split()[0]

        page.goto(opened)  # what the learner's browser gets: a redirect page with the token
        nb = jlab.Notebook(page, server).wait_ready("00_setup.ipynb")
        assert "/lab/tree/notebooks/00_setup.ipynb" in page.url or "/tree/notebooks/00_setup.ipynb" in page.url, (
            page.url
        )
        assert page.locator(".jp-Dialog").count() == 0, "a dialog (kernel selection?) opened over the notebook"
        assert nb.kernel_display_name() == "Python 3 (ipykernel)"

        sessions = server.api("/api/sessions")
        assert [(s["path"], s["kernel"]["name"]) for s in sessions] == [("notebooks/00_setup.ipynb", "python3")]
        prefix = page.evaluate("""async () => {
            const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            const f = k.requestExecute({code: 'import sys; print(sys.prefix)', store_history: false});
            let out = '';
            f.onIOPub = msg => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
            await f.done;
            return out.trim(); }""")
        assert Path(prefix).resolve() == Path(sys.prefix).resolve(), (
            f"the notebook's kernel runs in {prefix}, not in the course environment {sys.prefix}"
        )
        page.screenshot(path=str(artifacts / "make-lab.png"))
    finally:
        server.stop()
