"""The app under a team's load: N visitors arriving together, then leaving.

``python -m benchmarks app-load`` (or ``python -m benchmarks.app_load --visitors 10``)
starts ``accelkit app`` on a free port of 127.0.0.1 with short culling settings,
opens N chromium pages at once (Playwright, Debian's chromium) and prints

- time to interactive per visitor (page requested -> first control usable): p50, p95;
- blank pages (no usable control within the limit);
- requests that tried to leave 127.0.0.1 (blocked and counted);
- kernels alive while the pages are open, and their memory (RSS);
- kernels alive after the tabs close, until they are back to the pool size.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def kernels_of(pid):
    """The ipykernel processes under the server process ``pid``."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        try:
            if "ipykernel_launcher" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def _rss_mb(processes):
    import psutil

    sizes = []
    for proc in processes:
        try:
            sizes.append(proc.memory_info().rss / 2**20)
        except psutil.NoSuchProcess:
            continue
    return sizes


# Runs in each page: the moment the first control is usable, on the page's own clock
# (epoch ms), so a slow test driver cannot delay the figure.
_USABLE_PROBE = """
(() => {
  const timer = setInterval(() => {
    const s = document.querySelector('.widget-dropdown select');
    if (s && !s.disabled && s.offsetParent) {
      window.__usableAt = performance.timeOrigin + performance.now();
      const n = performance.getEntriesByType('navigation')[0] || {};
      window.__phases = {first_byte: n.responseStart, html_done: n.responseEnd, scripts_loaded: n.loadEventEnd,
                         usable: performance.now()};
      clearInterval(timer);
    }
  }, 50);
})();
"""


async def _visit(browser, url, limit_s, outside, phases):
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(_USABLE_PROBE)

    async def guard(route):
        request_url = route.request.url
        if (urlparse(request_url).hostname or "") in LOCAL_HOSTS or request_url.startswith(("data:", "blob:")):
            await route.continue_()
        else:
            outside.append(request_url)
            await route.abort()

    await context.route("**/*", guard)
    page = await context.new_page()
    start_epoch_ms = time.time() * 1000  # the visitor's request, not the browser's set-up
    try:
        await page.goto(url, wait_until="commit", timeout=limit_s * 1000)
        await page.wait_for_function("window.__usableAt", timeout=limit_s * 1000, polling=250)
        usable_at = await page.evaluate("window.__usableAt")
        elapsed = (usable_at - start_epoch_ms) / 1000
        phases.append(await page.evaluate("window.__phases"))
    except Exception:  # a page not usable within the limit is what is being counted
        elapsed = None
    return context, elapsed


async def _arrive_and_leave(url, visitors, limit_s, outside, server_pid, pool_size):
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        phases = []
        results = await asyncio.gather(*[_visit(browser, url, limit_s, outside, phases)
                                         for _ in range(visitors)])
        alive_open = kernels_of(server_pid)
        memory = _rss_mb(alive_open)
        for context, _ in results:
            await context.close()
        closed_at = time.perf_counter()
        back_after = None
        # back to the pool: the visitors' kernels shut down (those beyond the pool's spare ones) and the
        # pool refilled to its size
        served = {k.pid for k in alive_open}
        spare = max(pool_size - visitors, 0)
        while time.perf_counter() - closed_at < 240:
            now = kernels_of(server_pid)
            if len(served & {k.pid for k in now}) <= spare and len(now) == pool_size:
                back_after = time.perf_counter() - closed_at
                break
            await asyncio.sleep(1)
        alive_after = len(kernels_of(server_pid))
        await browser.close()
    return [t for _, t in results], alive_open, memory, back_after, alive_after, phases


def run(visitors=10, pool_size=2, cull_idle_s=60, cull_interval_s=5, limit_s=120, settle_s=30, query="",
        refill_delay_s=60):
    """Measure one arrival of ``visitors`` pages; a dict of the figures."""
    sys.path.insert(0, str(ROOT / "tests"))
    from servers import free_port, serve, wait_for_port

    port = free_port()
    cmd = [sys.executable, "-m", "accelkit.cli", "app", "--port", str(port), "--pool-size", str(pool_size),
           "--cull-idle", str(cull_idle_s), "--cull-interval", str(cull_interval_s),
           "--refill-delay", str(refill_delay_s)]
    url = f"http://127.0.0.1:{port}/{query}"
    log = Path("/tmp") / f"accelkit-bench-app-load-{port}.log"
    with serve(cmd, log) as process:
        wait_for_port(port, process=process)
        # the pool fills before the visitors arrive, as on a server that has been up a while
        deadline = time.time() + 120
        while len(kernels_of(process.pid)) < pool_size and time.time() < deadline:
            time.sleep(0.5)
        time.sleep(settle_s if pool_size else 0)
        outside = []
        times, alive_open, memory, back_after, alive_after, phases = asyncio.run(
            _arrive_and_leave(url, visitors, limit_s, outside, process.pid, pool_size))
    ok = sorted(t for t in times if t is not None)

    def pct(q):
        if not ok:
            return float("nan")
        return ok[min(len(ok) - 1, max(0, round(q * (len(ok) - 1))))]

    return {"visitors": visitors, "pool_size": pool_size, "refill_delay_s": refill_delay_s, "usable": len(ok),
            "blank": visitors - len(ok),
            "p50_s": statistics.median(ok) if ok else float("nan"), "p95_s": pct(0.95),
            "times_s": [None if t is None else round(t, 2) for t in times],
            "requests_off_machine": len(outside), "off_machine_urls": sorted(set(outside))[:5],
            "kernels_while_open": len(alive_open), "kernel_rss_mb_median": statistics.median(memory) if memory else 0,
            "kernels_after_close": alive_after, "back_to_pool_s": back_after, "cull_idle_s": cull_idle_s,
            # median seconds from the request to: first byte, whole page, scripts loaded, usable
            "phases_s": {k: round(statistics.median(ph[k] for ph in phases if ph.get(k)) / 1000, 2)
                         for k in ("first_byte", "html_done", "scripts_loaded", "usable")} if phases else {}}


def describe(figures):
    f = figures
    back = "never within 240 s" if f["back_to_pool_s"] is None else f"{f['back_to_pool_s']:.0f} s"
    return (f"{f['visitors']} visitor(s), pool {f['pool_size']} (refill after {f['refill_delay_s']:g} s): "
            f"{f['usable']} usable, {f['blank']} blank; "
            f"time to interactive p50 {f['p50_s']:.1f} s, p95 {f['p95_s']:.1f} s; "
            f"{f['requests_off_machine']} request(s) off the machine; {f['kernels_while_open']} kernels open, "
            f"{f['kernel_rss_mb_median']:.0f} MB each (median); after the tabs closed: back to the pool in {back} "
            f"(cull after {f['cull_idle_s']:g} s idle), {f['kernels_after_close']} left; median phases {f['phases_s']}; "
            f"each visitor [s]: {sorted(t for t in f['times_s'] if t is not None)}")


def main(visitors=(1, 10)):
    """One visitor on the default pool of 2; a team arriving together on a pool sized for it
    (``accelkit app --pool-size N``, about 170 MB a kernel), as the README advises."""
    results = []
    for n in visitors:
        figures = run(visitors=n, pool_size=max(2, n))
        target = 3.0 if n == 1 else 30.0
        verdict = "OK" if figures["blank"] == 0 and figures["p95_s"] <= target else "SLOW"
        print(f"  {describe(figures)}   target p95 <= {target:g} s, none blank  {verdict}", flush=True)
        results.append({"name": f"app-load {n}", "target_s": target, **figures})
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--pool-size", type=int, default=2)
    parser.add_argument("--cull-idle", type=float, default=60)
    parser.add_argument("--refill-delay", type=float, default=60)
    options = parser.parse_args()
    for n in options.visitors:
        print(describe(run(visitors=n, pool_size=options.pool_size, cull_idle_s=options.cull_idle,
                           refill_delay_s=options.refill_delay)), flush=True)
