"""Headless Chromium (Debian's packages, via selenium 4) to look at pages as a person would.

Both binaries come from ``scripts/install_chromium.sh``; the driver path is passed explicitly so
selenium-manager never tries to download a browser or driver (no network here but registries).

Usage (the fixture is registered by tests/conftest.py)::

    from support.browser import save_screenshot, wait_for_text

    def test_page(browser):
        browser.get(url)
        wait_for_text(browser, "wgangp")
        save_screenshot(browser, "experiment-page")   # -> <repo>/test-artifacts/experiment-page.png
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WINDOW_SIZE = (1400, 1000)
#: Screenshots land here (gitignored) so a person or CI can look at what the test saw.
ARTIFACTS_DIR = Path(__file__).resolve().parents[2] / "test-artifacts"


def chromium_missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        return f"{' and '.join(missing)} missing: run scripts/install_chromium.sh (needs root/apt)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: bash scripts/bootstrap.sh --dev"
    return None


def chrome_driver(user_data_dir: Path | None = None):  # -> selenium.webdriver.Chrome
    """A headless Chromium driver with a private profile; the caller must ``quit()`` it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = user_data_dir or Path(tempfile.mkdtemp(prefix="wgangp-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW_SIZE[0]},{WINDOW_SIZE[1]}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_window_size(*WINDOW_SIZE)
    driver.set_page_load_timeout(60)
    return driver


def page_text(driver) -> str:
    """The visible text of the page body (what a person can read)."""
    try:
        return driver.execute_script("return document.body ? document.body.innerText : ''") or ""
    except Exception:  # noqa: BLE001 (page mid-navigation: treat as empty, keep polling)
        return ""


def wait_for_texts(driver, texts: Iterable[str], timeout: float = 60.0) -> str:
    """Block until every one of ``texts`` is visible; return the page text.

    On timeout the AssertionError names what is missing and shows the start of the page text.
    """
    wanted = list(texts)
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = page_text(driver)
        if all(item in text for item in wanted):
            return text
        time.sleep(0.5)
    missing = [item for item in wanted if item not in text]
    raise AssertionError(
        f"after {timeout:.0f} s {driver.current_url} still lacks {missing}; "
        f"page text starts: {text[:600]!r}"
    )


def wait_for_text(driver, text: str, timeout: float = 60.0) -> str:
    return wait_for_texts(driver, [text], timeout)


def wait_for_css(driver, selector: str, timeout: float = 60.0, minimum: int = 1) -> list:
    """Block until at least ``minimum`` elements match ``selector``; return them."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        if len(found) >= minimum:
            return found
        time.sleep(0.5)
    raise AssertionError(
        f"after {timeout:.0f} s {driver.current_url} has fewer than {minimum} "
        f"elements matching {selector!r}"
    )


def save_screenshot(driver, name: str, directory: Path = ARTIFACTS_DIR) -> Path:
    """Save a PNG of the current viewport as ``<directory>/<name>.png``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    if not driver.save_screenshot(str(path)):
        raise AssertionError(f"chromium could not save a screenshot to {path}")
    return path


@pytest.fixture
def browser(tmp_path: Path) -> Iterator:
    """A headless Chromium driver for one test (skips when chromium is not installed)."""
    reason = chromium_missing_reason()
    if reason:
        pytest.skip(reason)
    profile = tmp_path / "chromium-profile"
    driver = chrome_driver(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
