"""The app for an organisation: a real JupyterHub with the shipped ``deploy/jupyterhub_config.py``.

JupyterHub on 127.0.0.1 (free ports, its database and cookie secret in a temporary
folder), with the config's test defaults -- DummyAuthenticator, SimpleLocalProcessSpawner --
and npm's configurable-http-proxy (``make proxy``). A person logs in on the hub's login page
in chromium, lands on their own single-user server's default URL, the front door, and uses
it (a control reaches a chart); a /hub/user-redirect link opens a linked view. Then the hub stops, and with it that server, its kernel and
the proxy: no process is left.

Under ``make test`` (ACCELKIT_REQUIRE_ALL=1) a missing jupyterhub or configurable-http-proxy
fails this test; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from helpers import require
from servers import ROOT, free_port, serve, wait_for_port

from .conftest import no_error_output, type_number

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFIG = ROOT / "deploy" / "jupyterhub_config.py"
LOCAL_PROXY = ROOT / ".hub" / "node_modules" / ".bin" / "configurable-http-proxy"
LOCAL = {"127.0.0.1", "localhost", "::1"}
USER = "alice"


def _proxy():
    """The configurable-http-proxy the config will use: ``make proxy``'s, else one on PATH."""
    return str(LOCAL_PROXY) if LOCAL_PROXY.exists() else shutil.which("configurable-http-proxy")


def _alive(proc):
    try:
        return proc.status() != "zombie"
    except Exception:  # psutil.NoSuchProcess, AccessDenied
        return False


def _describe(proc):
    try:
        return f"{proc.pid} {' '.join(proc.cmdline())[:160]}"
    except Exception:
        return f"{proc.pid} (gone)"


def _marked(markers):
    """Processes (not this one) whose command line or folder names one of ``markers``."""
    import psutil

    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        if proc.pid == os.getpid():
            continue
        text = " ".join(proc.info.get("cmdline") or []) + " " + (proc.info.get("cwd") or "")
        if any(m in text for m in markers) and _alive(proc):
            found.append(proc)
    return found


class Hub:
    """A running JupyterHub and what identifies every process it starts."""

    def __init__(self, process, port, api_port, proxy_api_port, state):
        self.process, self.port, self.state = process, port, state
        self.url = f"http://127.0.0.1:{port}"
        self.ports = (port, api_port, proxy_api_port)
        # the state folder (the person's home, the kernels' connection files) and the hub's
        # API address (the proxy's error target, every server's hub URL) mark its processes
        self.markers = (str(state), f"127.0.0.1:{api_port}")
        self.seen = {}

    def family(self):
        """The hub and every process under it (proxy, single-user servers, kernels), remembered."""
        import psutil

        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.process.pid)
            for proc in [root, *root.children(recursive=True)]:
                self.seen[proc.pid] = proc
        return [p for p in self.seen.values() if _alive(p)]

    def left(self):
        procs = {p.pid: p for p in [*self.family(), *_marked(self.markers)]}
        return [p for p in procs.values() if _alive(p)]

    def kill_all(self):
        for proc in self.left():
            with contextlib.suppress(Exception):
                proc.kill()


@pytest.fixture
def hub(tmp_path):
    require(importlib.util.find_spec("jupyterhub") is not None, "jupyterhub (pip install -e '.[test]')")
    proxy = _proxy()
    require(proxy, "configurable-http-proxy (make proxy: npm's configurable-http-proxy into .hub/)")
    require(shutil.which("node") or shutil.which("nodejs"), "node, which runs configurable-http-proxy (apt-get install npm)")
    require(importlib.util.find_spec("psutil") is not None, "psutil (pip install psutil)")
    state = tmp_path / "hub"
    state.mkdir()
    port, api_port, proxy_api_port = free_port(), free_port(), free_port()
    env = dict(os.environ,
               ACCELKIT_HUB_STATE=str(state), ACCELKIT_HUB_IP="127.0.0.1", ACCELKIT_HUB_PORT=str(port),
               ACCELKIT_HUB_API_PORT=str(api_port), ACCELKIT_HUB_PROXY_API_PORT=str(proxy_api_port),
               ACCELKIT_HUB_PROXY=proxy,
               # the config's test defaults, named here so the test says what it runs
               ACCELKIT_HUB_AUTHENTICATOR="jupyterhub.auth.DummyAuthenticator", ACCELKIT_HUB_SPAWNER="simple",
               # the hub and each person's server run this interpreter and see this checkout's accelkit
               PYTHONPATH=os.pathsep.join([str(ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    cmd = [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)]
    log = tmp_path / "jupyterhub.log"
    running = None
    try:
        with serve(cmd, log, env=env) as process:
            running = Hub(process, port, api_port, proxy_api_port, state)
            try:
                wait_for_port(port, timeout=120, process=process)
                wait_for_port(api_port, timeout=120, process=process)
            except Exception as exc:
                raise AssertionError(f"JupyterHub did not start: {exc}\n{log.read_text()[-4000:]}") from None
            running.log = log
            yield running
            running.family()
    finally:
        # whatever happened, nothing the hub started outlives the test: the servers and the
        # proxy run in sessions of their own, so the process group alone does not reach them
        if running is not None:
            running.kill_all()


def _log_tail(hub, n=4000):
    return hub.log.read_text(errors="replace")[-n:]


def test_hub_login_opens_the_front_door_on_the_persons_own_server_and_stop_leaves_nothing(browser, hub):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside = []
    context.on("request", lambda r: outside.append(r.url) if (urlparse(r.url).hostname or "") not in LOCAL
               and not r.url.startswith(("data:", "blob:")) else None)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        # the hub's own login page (DummyAuthenticator: any password)
        page.goto(f"{hub.url}/hub/login", timeout=120_000)
        page.fill("#username_input", USER)
        page.fill("#password_input", "any password")
        page.click("#login_submit")
        app_path = f"/user/{USER}/voila/render/app.ipynb"
        try:
            # spawn-pending, then the person's own server, which redirects to its default URL
            page.wait_for_url(f"**{app_path}*", timeout=180_000)
        except Exception:
            raise AssertionError(f"the login did not lead to {app_path} (at {page.url})\n{_log_tail(hub)}") from None

        # the front door works: its controls render, a control reaches a chapter and its chart
        try:
            page.wait_for_selector("text=choose an AI accelerator", timeout=120_000)
            page.locator(".widget-dropdown select").first.wait_for(state="visible", timeout=120_000)
        except Exception:
            raise AssertionError(f"the front door did not render on {page.url}\n{_log_tail(hub)}") from None
        no_error_output(page)
        type_number(page, "finish within [days]", 5)
        page.wait_for_function("document.body.innerText.includes('time_target_days=5')", timeout=60_000)
        page.get_by_role("tab", name="1 Demand").click()
        page.wait_for_function("document.body.innerText.includes('Finishing in 5 days')", timeout=90_000)
        page.locator(".js-plotly-plot .main-svg").first.wait_for(state="visible", timeout=90_000)
        assert not errors, f"the page raised: {errors[:3]}"

        # a link anyone can follow opens the linked view on their own server
        linked = context.new_page()
        linked.goto(f"{hub.url}/hub/user-redirect/voila/render/app.ipynb?model=Llama-3.1+70B&workload=inference",
                    timeout=120_000)
        try:
            linked.wait_for_function("document.body.innerText.includes('model=Llama-3.1')", timeout=120_000)
        except Exception:
            raise AssertionError(f"the user-redirect link did not open the linked model (at {linked.url})") from None
        assert f"/user/{USER}/voila/render/app.ipynb" in linked.url
        # the accelkit template (no Font Awesome CDN) and no CDN MathJax reached the server extension
        assert not outside, f"the page fetched from outside this machine: {outside[:3]}"

        family = hub.family()
        commands = [_describe(p) for p in family]
        assert any("jupyterhub.singleuser" in c for c in commands), f"no single-user server under the hub: {commands}"
        assert any("ipykernel" in c for c in commands), f"no kernel under the person's server: {commands}"
        assert any("configurable-http-proxy" in c for c in commands), f"no proxy under the hub: {commands}"
    finally:
        context.close()

    # stop the hub as systemd or docker stop does: SIGTERM to the hub alone
    os.kill(hub.process.pid, signal.SIGTERM)
    try:
        hub.process.wait(timeout=60)
    except Exception:
        raise AssertionError(f"JupyterHub did not exit within 60 s of SIGTERM\n{_log_tail(hub)}") from None
    deadline = time.time() + 30
    while time.time() < deadline and hub.left():
        time.sleep(0.5)
    left = [_describe(p) for p in hub.left()]
    assert not left, f"{len(left)} process(es) still run after the hub stopped: {left}"
    for port in hub.ports:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} is still served after the hub stopped"
