"""The official MCP Apps example servers (npm `@modelcontextprotocol/server-*`, pinned below)
driven in Debian's Chromium through `mcpkit dev`: each app renders, one interaction works (one
that calls the app's own server wherever the app makes such calls: the budget allocator makes
none), mcpkit's own documents log no error, and no document throws one uncaught.

The servers are the published packages, each run as its README says (the package's command,
as `npx` runs it, with `--stdio`), installed from npm into .cache/npm-apps the first time. Source
and licence of every package: https://github.com/modelcontextprotocol/ext-apps (examples/*),
MIT. `-map` is not run: its globe loads CesiumJS from a CDN and its tiles from OpenStreetMap,
and Chromium here reaches nothing beyond loopback. Screenshots go to build/screenshots (`make screenshots`:
docs/).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from browser_support import browser_page, need, need_browser, screenshot_dir
from dev_support import mcpkit
from npm_support import npm_install
from support import ROOT, scaled

WAIT = scaled(20) * 1000  # ms: the longest any step may take before the test fails
BUDGET = scaled(90)  # s: one app, start to finish
APPS_CACHE = ROOT / ".cache" / "npm-apps"
#: Exact versions; each app's page is prebuilt into its package (dist/mcp-app.html), so these
#: pins fix what the browser runs.
PACKAGES = {
    "basic-vanillajs": "@modelcontextprotocol/server-basic-vanillajs@2.0.3",
    "basic-react": "@modelcontextprotocol/server-basic-react@2.0.3",
    "budget-allocator": "@modelcontextprotocol/server-budget-allocator@2.0.3",
    "cohort-heatmap": "@modelcontextprotocol/server-cohort-heatmap@2.0.3",
    "customer-segmentation": "@modelcontextprotocol/server-customer-segmentation@2.0.3",
    "pdf": "@modelcontextprotocol/server-pdf@2.0.4",
}
SERVER = "app"  # the config key each example server runs under


def example_servers() -> Path:
    """Where the pinned packages' commands are, installed once (`.ci/run` requires them:
    MCPKIT_REQUIRE_NPM_APPS)."""
    need_browser()
    need(shutil.which("node") is not None, "Node.js is not installed (apt-get install nodejs)")
    npm_install(
        APPS_CACHE,
        list(PACKAGES.values()),
        "the MCP Apps example servers",
        "MCPKIT_REQUIRE_NPM_APPS",
    )
    return APPS_CACHE / "node_modules" / ".bin"


@dataclass
class Shown:
    """An app rendered by mcpkit: the page, the app's own document (a frame locator), the
    inspector's outcome holding it, and every console error with the address it came from."""

    page: Any
    frame: Any
    outcome: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    host_origins: tuple[str, ...] = ()

    def host_errors(self) -> list[str]:
        """Errors logged by mcpkit's own documents (the UI page and the sandbox proxy); what
        the app's document logs is the app's business."""
        return [text for url, text in self.console if url.startswith(self.host_origins)]


@contextlib.asynccontextmanager
async def open_app(
    argv: list[str], tool: str, fields: dict[str, str], tmp_path: Path
) -> AsyncIterator[Shown]:
    """`mcpkit dev -- ARGV` (a real subprocess, no model key), the tool called from the
    inspector's form with `fields`, its app rendered beside the result: the one place that
    knows how an app is opened."""
    from playwright.async_api import expect

    async with (
        mcpkit("--no-open", "--", *argv, tmp_path=tmp_path) as dev,
        browser_page() as page,
    ):
        shown = Shown(page, None, page.locator("#inspect-detail .outcome"))
        page.on(
            "console",
            lambda msg: (
                msg.type == "error"
                and shown.console.append((str(msg.location.get("url", "")), msg.text))
            ),
        )
        await page.goto(dev.url)
        await expect(page.locator("body")).to_have_attribute("data-ready", "true", timeout=WAIT)
        sandbox = await page.locator('meta[name="mcpkit-sandbox"]').get_attribute("content")
        shown.host_origins = (dev.base, str(sandbox))
        await page.click(f'#inspect-list button[data-item="{tool}"]', timeout=WAIT)
        detail = page.locator("#inspect-detail")
        for name, value in fields.items():
            await detail.locator(f'input[name="{name}"]').fill(value)
        await detail.locator('[data-role="call"]').click()
        await expect(shown.outcome.locator('[data-role="took"]')).to_be_visible(timeout=WAIT)
        app = '[data-role="app"] iframe.app-frame'
        await expect(shown.outcome.locator(app)).to_have_count(1)
        shown.frame = shown.outcome.frame_locator(app).frame_locator("iframe")
        yield shown


def tiny_pdf(path: Path, title: str, pages: list[str]) -> Path:
    """A valid PDF written by hand: one line of Helvetica text per page, with its xref."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        f"<< /Title ({title}) /Producer (mcpkit tests) >>".encode(),
    ]
    font = 4 + 2 * count
    for n, text in enumerate(pages):
        stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * n} 0 R"
            f" /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 3 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


def app_calls(shown: Shown, tool: str) -> Any:
    """The audit rows of the app's own calls to `tool` (the server really answered them)."""
    rows = shown.page.locator("#audit tbody tr", has_text="app:")
    return rows.filter(has_text=tool)


async def basic(shown: Shown) -> None:
    """Both basic apps: the time comes with the tool result; the button calls `get-time`."""
    from playwright.async_api import expect

    app = shown.frame
    time = app.locator("code").first
    await expect(time).to_have_text(ISO, timeout=WAIT)  # the result the host sent
    first = await time.inner_text()
    await app.get_by_role("button", name="Get Server Time").click()
    await expect(time).not_to_have_text(first, timeout=WAIT)
    await expect(time).to_have_text(ISO)
    await expect(app_calls(shown, "get-time")).to_have_count(1)


async def budget(shown: Shown) -> None:
    """The allocator draws its chart and sliders from the tool result; it has no call of its
    own to make, so the interaction is its budget selector (the status bar follows)."""
    from playwright.async_api import expect

    app = shown.frame
    await expect(app.locator(".slider-row")).to_have_count(5, timeout=WAIT)
    status = app.locator("#status-bar")
    await expect(status).to_contain_text("Allocated: $100,000 / $100,000")
    await app.locator("#budget-selector").select_option("250000")
    await expect(status).to_contain_text("Allocated: $250,000 / $250,000")


async def cohort(shown: Shown) -> None:
    """The heatmap fetches its data with its own call; a new metric fetches again."""
    from playwright.async_api import expect

    app = shown.frame
    await expect(app.get_by_text("Cohort Retention Analysis")).to_be_visible(timeout=WAIT)
    await expect(app.get_by_text("Jan 2026", exact=False).first).to_be_visible(timeout=WAIT)
    calls = app_calls(shown, "get-cohort-data")
    await expect(calls).to_have_count(1, timeout=WAIT)
    await app.get_by_label("Metric:").select_option("revenue")
    await expect(calls).to_have_count(2, timeout=WAIT)
    await expect(calls.first).to_contain_text("ok")


async def segments(shown: Shown) -> None:
    """The explorer loads its customers with its own call; a legend entry hides a segment."""
    from playwright.async_api import expect

    app = shown.frame
    await expect(app_calls(shown, "get-customer-data")).to_have_count(1, timeout=WAIT)
    legend = app.locator('.legend-item[data-segment="Enterprise"]')
    await expect(legend).to_contain_text("Enterprise (", timeout=WAIT)
    await legend.click()
    await expect(legend).to_have_class("legend-item hidden")


async def pdf(shown: Shown) -> None:
    """The viewer reads the file in chunks through its app-only `read_pdf_bytes` and renders
    it with pdf.js (a worker started from a blob:); its buttons turn the pages."""
    from playwright.async_api import expect

    app = shown.frame
    await expect(app.locator("#total-pages")).to_have_text("of 2", timeout=WAIT)
    await expect(app.locator("#viewer")).to_be_visible()
    await expect(app_calls(shown, "read_pdf_bytes").first).to_contain_text("ok")
    await app.locator("#next-btn").click()
    await expect(app.locator("#page-input")).to_have_value("2", timeout=WAIT)
    await app.locator("#prev-btn").click()  # back to the first page, for the screenshot
    await expect(app.locator("#page-input")).to_have_value("1", timeout=WAIT)


ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


@dataclass(frozen=True)
class Example:
    package: str  # the key in PACKAGES
    command: str  # its executable (package.json `bin`), as `npx PACKAGE` runs it
    tool: str  # the tool whose UI is the app
    check: Callable[[Shown], Awaitable[None]]
    shot: str  # the screenshot's file name


EXAMPLES = [
    Example(
        "basic-vanillajs",
        "mcp-server-basic-vanillajs",
        "get-time",
        basic,
        "app-basic-vanillajs.png",
    ),
    Example("basic-react", "mcp-server-basic-react", "get-time", basic, "app-basic-react.png"),
    Example(
        "budget-allocator",
        "mcp-budget-allocator-server",
        "get-budget-data",
        budget,
        "app-budget-allocator.png",
    ),
    Example(
        "cohort-heatmap",
        "mcp-cohort-heatmap-server",
        "get-cohort-data",
        cohort,
        "app-cohort-heatmap.png",
    ),
    Example(
        "customer-segmentation",
        "mcp-customer-segmentation-server",
        "get-customer-data",
        segments,
        "app-segmentation.png",
    ),
    Example("pdf", "mcp-pdf-server", "display_pdf", pdf, "app-pdf.png"),
]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.package)
async def test_official_example_app(example: Example, tmp_path: Path) -> None:
    argv = [str(example_servers() / example.command), "--stdio"]
    fields: dict[str, str] = {}
    if example.package == "pdf":
        document = tiny_pdf(
            tmp_path / "sample.pdf",
            "A PDF in mcpkit",
            ["The official PDF viewer, rendered by mcpkit", "Page two"],
        )
        argv.append(str(document))  # the server reads only the files it is given
        fields["url"] = str(document)
    async with asyncio.timeout(BUDGET), open_app(argv, example.tool, fields, tmp_path) as shown:
        await example.check(shown)
        # The page as a person sees it: the inspector, the call's result and its app.
        await shown.outcome.locator('[data-role="app"]').scroll_into_view_if_needed()
        await shown.page.screenshot(path=str(screenshot_dir() / example.shot))
        assert not shown.host_errors(), shown.host_errors()
        # Nothing thrown uncaught in any document, the apps' included: with these apps, one
        # means the host refused or broke something they rely on.
        assert not shown.page.errors, shown.page.errors


def test_map_needs_the_internet() -> None:
    pytest.skip(
        "@modelcontextprotocol/server-map is not run: its globe loads CesiumJS from a CDN and"
        " its tiles from OpenStreetMap (geocoding from Nominatim), and this Chromium reaches"
        " nothing beyond loopback"
    )
