"""What the browser tests share: Debian's Chromium driven by Playwright (the system executable,
never a downloaded browser), the official MCP Apps `App` class from npm, and where
screenshots go.

Without Chromium, Playwright or npm the tests skip with one line saying what is missing,
unless MCPKIT_BROWSER_TESTS=required (as `.ci/run` sets), where they fail instead;
MCPKIT_BROWSER_TESTS=skip skips them (`.ci/run` runs them as a step of their own).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from support import ROOT, cache_lock, free_port, scaled

CHROMIUM = os.environ.get("MCPKIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXT_APPS = "@modelcontextprotocol/ext-apps@2.0.4"
NPM_CACHE = ROOT / ".cache" / "npm"
APP_BUNDLE = NPM_CACHE / "node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"


def need(condition: bool, reason: str) -> None:
    """Skip (or fail, where browser tests are required) when `condition` does not hold."""
    if condition:
        return
    if os.environ.get("MCPKIT_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required here, but {reason}")
    pytest.skip(reason)


def need_browser() -> None:
    if os.environ.get("MCPKIT_BROWSER_TESTS") == "skip":
        pytest.skip("browser tests run separately here (MCPKIT_BROWSER_TESTS=skip)")
    need(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    need(
        importlib.util.find_spec("playwright") is not None,
        "Playwright for Python is not installed (pip install -e '.[dev]')",
    )


def screenshot_dir() -> Path:
    """build/screenshots, or MCPKIT_SCREENSHOTS (`make screenshots` sets docs/)."""
    path = Path(os.environ.get("MCPKIT_SCREENSHOTS") or ROOT / "build" / "screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.asynccontextmanager
async def browser_page(**context: Any) -> AsyncIterator[Any]:
    """A fresh Chromium page (its own profile); console errors are collected on `page.errors`."""
    need_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = await browser.new_context(viewport={"width": 1440, "height": 940}, **context)
            page = await ctx.new_page()
            page.errors = []  # type: ignore[attr-defined]
            page.on("pageerror", lambda exc: page.errors.append(str(exc)))  # type: ignore[attr-defined]
            yield page
        finally:
            await browser.close()


def ext_apps_bundle() -> Path:
    """The official `App` class (ext-apps' self-contained ES module), installed from npm into
    .cache/npm the first time (the registry is the one thing fetched at test time)."""
    with cache_lock(NPM_CACHE):  # one npm install at a time (pytest -n)
        if not APP_BUNDLE.exists():
            _install_ext_apps()
    return APP_BUNDLE


def _install_ext_apps() -> None:
    npm = shutil.which("npm")
    need(npm is not None, "npm is not installed (needed for the official MCP Apps App class)")
    assert npm is not None
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(NPM_CACHE),
            "--no-save",
            "--legacy-peer-deps",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            EXT_APPS,
        ],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    need(
        done.returncode == 0 and APP_BUNDLE.exists(),
        f"npm install {EXT_APPS} failed: {(done.stderr or done.stdout).strip()[-300:]}",
    )


@contextlib.asynccontextmanager
async def static_origin(files: dict[str, Path]) -> AsyncIterator[str]:
    """A loopback origin serving `files` with CORS (an app's declared resource domain)."""

    async def serve(request: web.Request) -> web.StreamResponse:
        path = files.get(request.match_info["name"])
        if path is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=path.read_bytes(),
            content_type="text/javascript",
            headers={"Access-Control-Allow-Origin": "*"},
        )

    app = web.Application()
    app.router.add_get("/{name}", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def open_ui(page: Any, web: Any) -> None:
    """Open the address `mcpkit ui` prints (with its token) and wait for the page to start."""
    from playwright.async_api import expect

    await page.goto(web.url)
    wait = scaled(15) * 1000  # ms
    await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=wait)


async def say(page: Any, text: str) -> None:
    """Send the agent a message, as the user types it."""
    await page.fill("#prompt", text)
    await page.click("#send")
