"""Refresh the README's screenshots from the running app (Debian's chromium, driven by Playwright).

    python tools/screenshots.py [--out docs]

Starts ``accelkit app`` on a free port on 127.0.0.1 and saves, from the built-in catalogue:

- ``app-front-door.png``   the front door at 1440 × 900
- ``app-decision.png``     the decision tab for the 70B serving example (examples/) at 1440 × 900
- ``app-phone.png``        the decision tab on a 390 × 844 phone, with the chapter menu
- ``app-zh-decision.png``  the decision tab in Simplified Chinese (``?lang=zh_CN``)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servers import accelkit_app, free_port, serve, wait_for_port  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
EXAMPLE = ROOT / "examples" / "serve-70b-at-latency-target.yaml"


def _shoot(browser, url, path, width, height, ready, full_page=False):
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = context.new_page()
    page.goto(url, timeout=180_000)
    page.wait_for_selector(ready, timeout=180_000)
    page.wait_for_timeout(3000)
    page.screenshot(path=str(path), full_page=full_page)
    context.close()
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "docs"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    from accelkit.scenario import Scenario

    serve_70b = "?" + Scenario.load(EXAMPLE).to_query_string() + "&tab=decision"
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as tmp, serve(accelkit_app(port), Path(tmp) / "app.log") as process:
        wait_for_port(port, process=process, timeout=120)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists()
                                        else shutil.which("chromium"), args=ARGS)
            _shoot(browser, base, out / "app-front-door.png", 1440, 900, ".widget-tab")
            _shoot(browser, base + serve_70b, out / "app-decision.png", 1440, 900,
                   "#decision-summary")
            _shoot(browser, base + serve_70b, out / "app-phone.png", 390, 844,
                   "#decision-summary")
            _shoot(browser, base + serve_70b + "&lang=zh_CN", out / "app-zh-decision.png",
                   1440, 900, "#decision-summary")
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
