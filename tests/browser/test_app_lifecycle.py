"""The app holds a team: warm kernels, closed pages' kernels reclaimed, nothing fetched off the machine, clean stop."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from urllib.parse import urlparse

import pytest

from servers import ROOT, free_port, serve, wait_for_port

sys.path.insert(0, str(ROOT))
from benchmarks.app_load import kernels_of  # noqa: E402  (the benchmark's own kernel count, shared)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOCAL = {"127.0.0.1", "localhost", "::1"}


def _app(port, *options):
    return [sys.executable, "-m", "accelkit.cli", "app", "--port", str(port), *options]


def _wait_for_kernels(pid, count, timeout_s, compare=lambda n, c: n == c):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        n = len(kernels_of(pid))
        if compare(n, count):
            return n
        time.sleep(0.5)
    return len(kernels_of(pid))


def test_closed_pages_kernels_are_reclaimed_and_no_request_leaves_the_machine(browser, tmp_path):
    port = free_port()
    with serve(_app(port, "--pool-size", "1", "--cull-idle", "15", "--cull-interval", "3", "--refill-delay", "5"),
               tmp_path / "app.log") as proc:
        wait_for_port(port, process=proc)
        assert _wait_for_kernels(proc.pid, 1, 90) == 1, "the app did not start its one warm kernel within 90 s"
        outside = []
        context = browser.new_context(viewport={"width": 1400, "height": 1000})

        def guard(route):
            url = route.request.url
            if (urlparse(url).hostname or "") in LOCAL or url.startswith(("data:", "blob:")):
                route.continue_()
            else:
                outside.append(url)
                route.abort()

        context.route("**/*", guard)
        pages = [context.new_page() for _ in range(2)]
        for pg in pages:
            pg.goto(f"http://127.0.0.1:{port}/?model=Llama-3.1+70B&workload=inference", timeout=120_000)
        for pg in pages:
            pg.locator(".widget-dropdown select").first.wait_for(state="visible", timeout=120_000)
        # the warm kernel read the visitor's link: the page's own link shows the linked model
        for pg in pages:
            try:
                pg.wait_for_function("document.body.innerText.includes('model=Llama-3.1')", timeout=30_000)
            except Exception:
                raise AssertionError("a warm kernel did not apply the link's ?model= setting") from None
        assert not outside, f"the page fetched from outside this machine: {outside[:3]}"
        open_now = len(kernels_of(proc.pid))
        assert open_now >= 2, f"two open pages should hold two kernels, found {open_now}"
        context.close()
        # both visitors' kernels are culled; the pool refills to its size of one
        left = _wait_for_kernels(proc.pid, 1, 120)
        assert left == 1, (f"{left} kernels still run 2 minutes after the pages closed "
                           "(expected only the one warm kernel of the pool)")


def test_sigterm_stops_the_server_and_every_kernel(tmp_path):
    import psutil

    port = free_port()
    with serve(_app(port, "--pool-size", "2"), tmp_path / "app.log") as proc:
        wait_for_port(port, process=proc)
        assert _wait_for_kernels(proc.pid, 2, 90) == 2, "the app did not start its two warm kernels within 90 s"
        family = [proc.pid] + [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        # to the app's process alone, as systemd or docker stop sends it
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.time() + 15
        while time.time() < deadline and any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                                             for p in family):
            time.sleep(0.3)
        alive = [p for p in family if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
        assert not alive, f"{len(alive)} process(es) of the app still run after SIGTERM: {alive}"
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} is still served after SIGTERM"
