"""Start and stop a Voilà server on a free port on 127.0.0.1 for tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port, timeout=60.0, process=None):
    """Wait for a TCP listener (a GET would start a kernel, so connect only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited early with status {process.returncode}")
        with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout:.0f} s")


@contextlib.contextmanager
def serve(args, log_path, env=None):
    """Run ``args`` (a server command) in its own process group; yield the process.

    ``env`` replaces the inherited environment (``os.environ`` by default).
    """
    log = open(log_path, "w")
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        log.close()


def accelkit_app(port):
    """The README's app command, as `accelkit app` runs it."""
    return [sys.executable, "-m", "accelkit.cli", "app", "--port", str(port)]
