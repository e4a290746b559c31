"""The course as a learner sees it: JupyterLab in headless Chromium (make test-browser).

Collected only with ``--browser``:  ``python -m pytest tests/browser --browser``.
Without it this folder is ignored (pytest_ignore_collect below), so ``pytest tests`` and
``make test`` / ``make test-fast`` neither import Playwright nor start a browser, even though
pyproject's ``testpaths`` is ``tests``. A conftest hook is used rather than an entry in the
lead-owned pytest config so the rule lives with the suite it guards.

One JupyterLab server (the venv's ``jupyter lab`` on a temp copy of notebooks/, a random token,
127.0.0.1, a free port, COURSE_MODE=cpu) and one Chromium serve the whole session; every test
gets its own page and leaves no kernel running. Screenshots land in build/browser/ (a failing
test also saves what the page looked like); ``--screenshots DIR`` also writes the README
pictures there (make screenshots: docs/img).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # jlab.py

import jlab  # noqa: E402 - found through the sys.path line above

ARTIFACTS = jlab.REPO / "build" / "browser"


def pytest_addoption(parser):
    group = parser.getgroup("browser", "browser tests (tests/browser)")
    group.addoption(
        "--browser",
        action="store_true",
        default=False,
        help="run the JupyterLab-in-Chromium tests in tests/browser (make test-browser)",
    )
    group.addoption(
        "--screenshots",
        metavar="DIR",
        default=None,
        help="also save the README pictures (grid-explorer.png, tracer.png) to DIR",
    )


def pytest_ignore_collect(collection_path, config):
    # Called for every entry of this folder: without --browser none of it is collected.
    if not config.getoption("browser", default=False) and collection_path.name != "conftest.py":
        return True
    return None


def pytest_terminal_summary(terminalreporter, config):
    if not config.getoption("browser", default=False) and any(
        "browser" in str(a) for a in config.invocation_params.args
    ):
        terminalreporter.write_line(
            "tests/browser runs only with --browser: make test-browser (or python -m pytest tests/browser --browser)",
            yellow=True,
        )


def pytest_configure(config):
    if config.getoption("browser", default=False):
        config.addinivalue_line("markers", "browser: drives JupyterLab in headless Chromium")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.browser_failed = report.failed


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def artifacts() -> Path:
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def doc_images(pytestconfig):
    """Where README pictures go besides build/browser/: --screenshots DIR, else nowhere."""
    dest = pytestconfig.getoption("screenshots")
    if dest:
        dest = Path(dest)
        if not dest.is_absolute():
            dest = Path(pytestconfig.invocation_params.dir) / dest
        dest.mkdir(parents=True, exist_ok=True)
    return dest


@pytest.fixture(scope="session")
def save_picture(artifacts, doc_images):
    """save_picture(locator, "grid-explorer.png", doc=True): screenshot one element."""

    def save(locator, name: str, doc: bool = False) -> Path:
        path = artifacts / name
        page = locator.page
        size = page.viewport_size
        box = locator.bounding_box()
        # JupyterLab scrolls the notebook inside a fixed frame, which would clip a tall element:
        # grow the window for the picture, then give the learner's size back.
        tall = box is not None and box["height"] + 250 > size["height"]
        if tall:
            page.set_viewport_size({"width": size["width"], "height": int(box["height"]) + 300})
        try:
            locator.scroll_into_view_if_needed()
            locator.screenshot(path=str(path), animations="disabled", caret="hide")
        finally:
            if tall:
                page.set_viewport_size(size)
        if doc and doc_images:
            shutil.copyfile(path, doc_images / name)
        return path

    return save


@pytest.fixture(scope="session")
def course_dir(tmp_path_factory) -> Path:
    """A private copy of notebooks/: the server's root; tests may run, edit and save in it."""
    return jlab.copy_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def lab(course_dir, tmp_path_factory, artifacts):
    server = jlab.LabServer.course(course_dir, tmp_path_factory.mktemp("jupyter-home"), artifacts / "jupyterlab.log")
    server.start()
    yield server
    server.stop()


def _need_chromium() -> str:
    if not (os.path.isfile(jlab.CHROMIUM) and os.access(jlab.CHROMIUM, os.X_OK)):
        pytest.exit(
            f"No Chromium at {jlab.CHROMIUM}: install it (Debian/Ubuntu: "
            "sudo apt-get install -y chromium) or set COURSE_CHROMIUM=/path/to/chromium.",
            2,
        )
    return jlab.CHROMIUM


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    """Debian's Chromium, headless, a fresh profile; Playwright's own browser download is never used."""
    chromium = _need_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.exit(
            "Playwright is not installed in this environment: run `make test-browser` "
            "(it installs requirements/browser.lock).",
            2,
        )
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=chromium,
            headless=True,
            args=jlab.CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
            device_scale_factor=1,
            locale="en-US",
            timezone_id="UTC",
        )
        context.set_default_timeout(jlab.KERNEL_READY_S * 1000)
        yield context
        context.close()


@pytest.fixture
def page(request, browser_context, artifacts):
    """A new tab. Console errors are collected in page.console_errors; on failure the page is
    saved as build/browser/FAILED-<test>.png."""
    pg = browser_context.new_page()
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(f"uncaught: {e}"))
    yield pg
    if getattr(request.node, "browser_failed", False):
        try:
            pg.screenshot(path=str(artifacts / f"FAILED-{request.node.name}.png"), full_page=True)
        except Exception as e:  # a broken page must not hide the test's own failure
            print(f"could not save the failure screenshot: {e}")
    pg.close()


@pytest.fixture
def notebook(page, lab):
    """A jlab.Notebook on this test's page; every kernel is shut down afterwards, so each test
    starts from a fresh kernel like a learner opening the notebook."""
    yield jlab.Notebook(page, lab)
    lab.shutdown_kernels()
