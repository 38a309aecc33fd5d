"""The app's kernel cap holds when visitors arrive together and counts report kernels; a warm kernel never times out.

Issue 26, findings 4 and 5: ``--max-kernels 4`` with eight simultaneous requests started
eight kernels (the check counted started kernels, then started one), a "Download report"
started three kernels outside the cap, and the first visitors after five idle minutes got
"Cell execution timed out" (the warm kernel's waiting cell ran into Voilà's executor timeout).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from servers import ROOT, accelkit_app, free_port, serve, wait_for_port

sys.path.insert(0, str(ROOT))
from benchmarks.app_load import kernels_of  # noqa: E402  (the benchmark's own kernel count, shared)

FULL = "The app is full right now"
TIMED_OUT = "Cell execution timed out"
WIDGETS = "application/vnd.jupyter.widget-view+json"


def _wait_for_kernels(pid, count, timeout_s):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if len(kernels_of(pid)) >= count:
            return True
        time.sleep(0.3)
    return False


def _get(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")


# --- the cap holds under simultaneous arrivals (finding 4) ------------------------------


@pytest.mark.slow
def test_eight_simultaneous_visitors_never_start_more_kernels_than_the_cap(tmp_path):
    """Cap 3, a warm pool of 1, eight GETs at the same instant: at most 3 kernels; the others get the full page."""
    port, cap, visitors = free_port(), 3, 8
    cmd = accelkit_app(port) + ["--pool-size", "1", "--max-kernels", str(cap), "--cull-idle", "0",
                                "--refill-delay", "1"]
    with serve(cmd, tmp_path / "app.log") as proc:
        wait_for_port(port, process=proc)
        assert _wait_for_kernels(proc.pid, 1, 90), "the app did not start its warm kernel within 90 s"
        time.sleep(2)  # the warm kernel is registered with the pool
        # a visitor's kernel finds the app's places, so its report's kernels take theirs from the same cap
        from pathlib import Path

        from accelkit.kernelcap import SLOTS_ENV

        places = Path(kernels_of(proc.pid)[0].environ().get(SLOTS_ENV, "/nonexistent"))
        assert len(list(places.glob("slot-*"))) == cap, f"the kernels see no folder of {cap} places ({places})"

        most, stop = [0], threading.Event()

        def watch():
            while not stop.is_set():
                most[0] = max(most[0], len(kernels_of(proc.pid)))
                time.sleep(0.1)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        start = threading.Barrier(visitors)
        results = [None] * visitors

        def visit(i):
            start.wait()
            results[i] = _get(f"http://127.0.0.1:{port}/", timeout=240)

        threads = [threading.Thread(target=visit, args=(i,)) for i in range(visitors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        time.sleep(5)  # the pool's refill (1 s delay) must wait for room, not start a fourth kernel
        stop.set()
        watcher.join()
        alive = len(kernels_of(proc.pid))
    assert not places.exists(), f"the places' folder {places} outlived the server"
    codes = [r[0] if r else None for r in results]
    assert most[0] <= cap, f"{most[0]} kernels ran at once under --max-kernels {cap} (answers: {codes})"
    assert alive <= cap
    served = [body for code, body in results if code == 200]
    refused = [body for code, body in results if code == 503]
    assert len(served) + len(refused) == visitors, f"every visitor gets the app or the full page, got {codes}"
    assert 1 <= len(served) <= cap, codes
    assert all("accelkit: choose an AI accelerator" in body and WIDGETS in body for body in served)
    assert all(FULL in body and f"All {cap} places are in use" in body for body in refused), refused[:1]


def test_a_kernel_start_reserves_its_place_before_it_waits(monkeypatch):
    """Five starts at once under a cap of 2: two start, three are refused, before any start finishes."""
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

    from accelkit.kernelcap import SLOTS_ENV, AppFull, CappedKernelManager

    monkeypatch.setenv(SLOTS_ENV, "")  # the manager publishes its places here; restored afterwards

    started = []

    async def slow_start(self, *args, **kwargs):  # a kernel takes a while to start
        await asyncio.sleep(0.2)
        kernel_id = f"k{len(started)}"
        started.append(kernel_id)
        self._kernels[kernel_id] = object()
        return kernel_id

    async def scenario():
        manager = CappedKernelManager(max_kernels=2)
        original = AsyncMappingKernelManager.start_kernel
        AsyncMappingKernelManager.start_kernel = slow_start
        try:
            outcomes = await asyncio.gather(*(manager.start_kernel(env={}) for _ in range(5)),
                                            return_exceptions=True)
        finally:
            AsyncMappingKernelManager.start_kernel = original
            manager._kernels.clear()
            manager._release_all()
            manager._slots.remove()
        return outcomes

    # in a thread of its own: an earlier test in the same session (the browser's sync API) may
    # leave an event loop running in this one, and asyncio.run refuses to nest
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        outcomes = pool.submit(asyncio.run, scenario()).result()
    refused = [o for o in outcomes if isinstance(o, AppFull)]
    assert len(started) == 2 and len(refused) == 3, outcomes


def test_places_are_shared_with_other_processes_and_freed_when_a_holder_dies(tmp_path):
    """The cap's places are lock files: a report's kernels (in a visitor's kernel process) take them too."""
    from accelkit.kernelcap import KernelSlots

    slots = KernelSlots.create(2, parent=tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from accelkit.kernelcap import KernelSlots; "
         f"s = KernelSlots({str(slots.folder)!r}).try_acquire(); print('held' if s else 'none', flush=True); "
         "time.sleep(60)"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = slots.try_acquire()
        assert mine is not None, "one of two places should be free"
        assert slots.try_acquire() is None, "both places are held (one by another process), yet a third was given"
    finally:
        holder.kill()
        holder.wait()
    again = slots.try_acquire()
    assert again is not None, "a place held by a process that died was not freed"
    mine.release()
    again.release()
    slots.remove()


def test_a_report_takes_its_kernels_from_the_apps_cap(tmp_path, monkeypatch):
    """Download report runs as many chapter kernels at once as the cap has free places, and none when it is full."""
    import accelkit.report as report
    from accelkit.kernelcap import SLOTS_ENV, KernelSlots
    from accelkit.ui.app import App

    slots = KernelSlots.create(4, parent=tmp_path)
    monkeypatch.setenv(SLOTS_ENV, str(slots.folder))
    seen = []

    def fake_build_report(scenario, out_dir=None, workers=3, **kwargs):
        # the report's kernels are counted: while it runs, its places are held
        seen.append((workers, slots.try_acquire()))
        raise report.ReportError("stop here")

    monkeypatch.setattr(report, "build_report", fake_build_report)
    held = [slots.try_acquire(), slots.try_acquire()]  # two visitors' kernels (held by the server)
    app = App()
    app.download_report()
    workers, extra = seen[-1]
    assert workers == 2 and extra is None, f"with 2 of 4 places free the report should run 2 kernels, got {workers}"
    held.append(slots.try_acquire())
    held.append(slots.try_acquire())  # now the app is full
    monkeypatch.setattr("accelkit.kernelcap.REPORT_WAIT_S", 1.0)
    app.download_report()
    assert len(seen) == 1, "a report started kernels while the app was full"
    assert "full" in app.report_status.value, app.report_status.value
    for slot in held:
        slot.release()
    slots.remove()


def test_the_app_command_takes_a_cell_timeout():
    from accelkit.appserver import voila_command, AppSettings
    from accelkit.cli import build_parser

    args = build_parser().parse_args(["app", "--cell-timeout", "45"])
    assert args.cell_timeout == 45
    cmd = voila_command("app.ipynb", "127.0.0.1", 8866, AppSettings(cell_timeout_s=args.cell_timeout))
    assert "--VoilaExecutor.timeout=45" in cmd


# --- a warm kernel waits for its visitor without a time limit (finding 5) ----------------


def _idle(process, quiet_s=3.0, timeout_s=120.0):
    """Wait until ``process`` uses (almost) no CPU for ``quiet_s``: a warm kernel waiting for a visitor."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        before = sum(process.cpu_times()[:2])
        time.sleep(quiet_s)
        if sum(process.cpu_times()[:2]) - before < 0.1:
            return True
    return False


@pytest.mark.slow
def test_a_visitor_after_an_idle_period_longer_than_the_cell_timeout_gets_the_app(tmp_path):
    """Cell timeout 30 s; the warm kernel waits 40 s for its visitor: the page is the app, not a timeout.

    (30 s, not less: the warm-up cell before the wait keeps the limit, and takes up to ~10 s on a busy 2-core machine.)
    """
    from accelkit.appserver import AppSettings, voila_command, voila_environment
    from accelkit.cli import notebooks_dir

    port, timeout_s = free_port(), 30
    settings = AppSettings(pool_size=1, cull_idle_s=0, cell_timeout_s=timeout_s)
    cmd = voila_command(notebooks_dir() / "app.ipynb", "127.0.0.1", port, settings)
    with serve(cmd, tmp_path / "app.log", env=voila_environment()) as proc:
        wait_for_port(port, process=proc)
        assert _wait_for_kernels(proc.pid, 1, 90), "the app did not start its warm kernel within 90 s"
        kernel = kernels_of(proc.pid)[0]
        assert _idle(kernel), "the warm kernel never settled into waiting for a visitor"
        time.sleep(timeout_s + 10)  # nobody visits for longer than the cell timeout
        code, page = _get(f"http://127.0.0.1:{port}/?model=Llama-3.1+70B", timeout=120)
    assert code == 200
    assert TIMED_OUT not in page, "the first visitor after an idle period got Voilà's cell timeout"
    assert "accelkit: choose an AI accelerator" in page and WIDGETS in page, "the page holds no app"


@pytest.mark.slow
def test_a_place_frees_when_its_kernel_is_reclaimed(tmp_path):
    """Cap 2, no pool: two visitors fill the app, a third is refused; once their kernels are culled, a visitor gets in."""
    port = free_port()
    cmd = accelkit_app(port) + ["--pool-size", "0", "--max-kernels", "2", "--cull-idle", "5", "--cull-interval", "2"]
    with serve(cmd, tmp_path / "app.log") as proc:
        wait_for_port(port, process=proc)
        url = f"http://127.0.0.1:{port}/"
        first, second = _get(url, 120), _get(url, 120)
        third = _get(url, 60)
        assert (first[0], second[0], third[0]) == (200, 200, 503), (first[0], second[0], third[0])
        deadline = time.time() + 90  # no page is connected: both kernels are culled after 5 s idle
        while time.time() < deadline and kernels_of(proc.pid):
            time.sleep(1)
        assert not kernels_of(proc.pid), "the idle kernels were not culled"
        code, page = _get(url, 120)
    assert code == 200 and WIDGETS in page, f"a culled kernel's place was not freed (got {code})"
