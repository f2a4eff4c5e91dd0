"""The brief's page in a real browser: Debian's Chromium driven by Playwright (its own browser
builds are never downloaded: `executable_path` is the system's). Screenshots at 360 px (a
phone) and 1280 px, light and dark, each checked on what a reader sees: no sideways scroll,
a dark background in dark mode, text that contrasts with it.

In CI (CI=true) a missing browser fails these tests; on a laptop they skip with one line."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import invoke, offline_model
from tests.test_page import _hostile_run

pytestmark = pytest.mark.slow

WIDTHS = (360, 1280)
SCHEMES = ("light", "dark")


def _chromium() -> str | None:
    return os.environ.get("DAYFLOW_TEST_CHROMIUM") or shutil.which("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        why = "no Chromium with Playwright (apt-get install chromium; pip install playwright)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser tests: {why}")
        pytest.skip(why)
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def _luminance(rgb: str) -> float:
    values = [float(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    lin = [c / 255 / 12.92 if c <= 10.3 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in values]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two CSS rgb() colours."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _look(browser: Any, page_file: Path, width: int, scheme: str, shots: Path) -> dict[str, Any]:
    tab = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    try:
        tab.goto(page_file.as_uri())
        tab.screenshot(path=str(shots / f"{page_file.stem}-{width}-{scheme}.png"), full_page=True)
        return dict(
            tab.evaluate(
                """() => {
                const style = (sel) => {
                    const el = document.querySelector(sel);
                    return el && getComputedStyle(el);
                };
                return {
                    scroll: document.documentElement.scrollWidth,
                    background: getComputedStyle(document.body).backgroundColor,
                    text: style("li").color,
                    detail: style(".detail") ? style(".detail").color : null,
                    link: style("a.ev") ? style("a.ev").color : null,
                    scripts: document.scripts.length,
                    images: document.images.length,
                };
            }"""
            )
        )
    finally:
        tab.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: DAYFLOW_TEST_SHOTS to keep and look at them."""
    kept = os.environ.get("DAYFLOW_TEST_SHOTS")
    where = Path(kept) if kept else tmp_path / "shots"
    where.mkdir(parents=True, exist_ok=True)
    return where


def test_the_page_reads_at_360_and_1280_px_in_light_and_dark(
    browser: Any, db_path: Path, tmp_path: Path, shots: Path
) -> None:
    page_file = tmp_path / "brief.html"
    result = invoke(db_path, offline_model, "brief", "--format", "html")
    assert result.code == 0, result.err
    page_file.write_text(result.out)
    seen = {(w, s): _look(browser, page_file, w, s, shots) for w in WIDTHS for s in SCHEMES}
    for (width, _), look in seen.items():
        assert look["scroll"] <= width  # no sideways scroll, a phone's width included
        assert look["scripts"] == 0 and look["images"] == 0
        for colour in (look["text"], look["detail"], look["link"]):
            assert colour is not None and contrast(colour, look["background"]) >= 4.5
    for width in WIDTHS:
        light, dark = seen[(width, "light")], seen[(width, "dark")]
        assert light["background"] != dark["background"]
        assert _luminance(dark["background"]) < 0.05 < _luminance(light["background"])
    assert len(list(shots.glob("brief-*.png"))) == 4


def test_a_hostile_page_neither_runs_nor_scrolls_sideways_on_a_phone(
    browser: Any, db_path: Path, tmp_path: Path, shots: Path
) -> None:
    result = _hostile_run(db_path, tmp_path, "--format", "html")
    assert result.code == 0, result.err
    page_file = tmp_path / "hostile.html"
    page_file.write_text(result.out)
    for scheme in SCHEMES:
        look = _look(browser, page_file, 360, scheme, shots)
        assert look["scroll"] <= 360 and look["scripts"] == 0 and look["images"] == 0
