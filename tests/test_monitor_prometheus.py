"""accelkit monitor --prometheus against a real Prometheus server.

Debian's ``prometheus`` is started on 127.0.0.1 with a temporary configuration and
storage, scraping (every second) a local HTTP server that serves the shipped,
recorded DCGM-exporter ``/metrics`` page. ``accelkit monitor --prometheus`` must
then report the recorded figures. Under ``make test`` (ACCELKIT_REQUIRE_ALL=1) a
missing ``prometheus`` binary fails the test; elsewhere it skips.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accelkit import monitor as M
from accelkit.cli import main
from helpers import require
from servers import free_port, serve, wait_for_port

PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)


def _recorded(text):
    """{metric: {gpu: value}} from the recorded /metrics text."""
    out = {}
    for line in text.splitlines():
        match = re.match(r'^(\w+)\{.*?gpu="(\d+)".*\}\s+(\S+)$', line)
        if match:
            out.setdefault(match.group(1), {})[int(match.group(2))] = float(match.group(3))
    return out


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    require(PROMETHEUS is not None, "Debian's prometheus (apt-get install -y prometheus; `make prometheus`)")
    body = M.example_metrics().encode()

    class Exporter(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    exporter = ThreadingHTTPServer(("127.0.0.1", 0), Exporter)
    thread = threading.Thread(target=exporter.serve_forever, daemon=True)
    thread.start()
    tmp = tmp_path_factory.mktemp("prometheus")
    config = tmp / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: dcgm\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter.server_address[1]}']\n")
    port = free_port()
    args = [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]
    url = f"http://127.0.0.1:{port}"
    try:
        with serve(args, tmp / "prometheus.log") as process:
            try:
                wait_for_port(port, timeout=60, process=process)
                _wait_for_samples(url, process)
            except Exception as exc:
                log = (tmp / "prometheus.log").read_text()[-2000:]
                pytest.fail(f"the Prometheus server did not start or scrape the recorded metrics ({exc}); "
                            f"its log ends:\n{log}")
            yield url
    finally:
        exporter.shutdown()
        exporter.server_close()


def _instant(url, query):
    with urllib.request.urlopen(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": query}), timeout=5) as r:
        return json.loads(r.read())["data"]["result"]


def _wait_for_samples(url, process, timeout=60):
    """Until every GPU series has at least 5 scraped samples."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited with status {process.returncode}")
        try:
            result = _instant(url, "count_over_time(DCGM_FI_DEV_GPU_UTIL[1m])")
            if len(result) == 8 and min(float(r["value"][1]) for r in result) >= 5:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("no 5 samples of DCGM_FI_DEV_GPU_UTIL for 8 GPUs within a minute")


def test_monitor_reads_the_recorded_dcgm_figures_back_from_prometheus(prometheus, tmp_path, capsys):
    recorded = _recorded(M.example_metrics())
    target = tmp_path / "out.json"
    assert main(["monitor", "--prometheus", prometheus, "--since", "1m", "--json", str(target)]) == 0, \
        capsys.readouterr().err
    data = json.loads(target.read_text())
    assert data["device"] == "A100 80GB SXM", "the modelName label must match the catalogue"
    assert data["n_gpus"] == 8
    assert data["effective_devices"] == pytest.approx(sum(recorded["DCGM_FI_DEV_GPU_UTIL"].values()) / 100), \
        "effective devices must equal the recorded utilisations' sum (2.4)"
    assert data["effective_devices"] == pytest.approx(2.4)
    devices = {d["gpu"]: d for d in data["devices"]}
    for gpu in range(8):
        d = devices[gpu]
        assert d["host"] == "node1", "the Hostname label names the host"
        checks = {
            "util_mean": recorded["DCGM_FI_DEV_GPU_UTIL"][gpu] / 100,
            "sm_active_mean": recorded["DCGM_FI_PROF_SM_ACTIVE"][gpu],
            "tensor_active_mean": recorded["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"][gpu],
            "dram_active_mean": recorded["DCGM_FI_PROF_DRAM_ACTIVE"][gpu],
            "memory_used_max_bytes": recorded["DCGM_FI_DEV_FB_USED"][gpu] * 2**20,
            "memory_total_bytes": (recorded["DCGM_FI_DEV_FB_USED"][gpu] + recorded["DCGM_FI_DEV_FB_FREE"][gpu]) * 2**20,
            "power_mean_w": recorded["DCGM_FI_DEV_POWER_USAGE"][gpu],
            "temperature_max_c": recorded["DCGM_FI_DEV_GPU_TEMP"][gpu],
            "sm_clock_max_hz": recorded["DCGM_FI_DEV_SM_CLOCK"][gpu] * 1e6,
        }
        for key, want in checks.items():
            assert d[key] == pytest.approx(want, rel=1e-6), f"GPU{gpu} {key}: Prometheus gave {d[key]}, recorded {want}"
    assert data["verdict"] == "under-used", data["verdict_reason"]
    assert any(t["gpu"] == "node1/GPU5" and t["cause"] == "temperature" for t in data["throttling"]), \
        "the hot GPU5 (86 °C, thermal slowdown bit) must be reported"
    out = capsys.readouterr().out
    assert "no samples for DCGM_FI_DEV_POWER_MGMT_LIMIT" in out, "a metric the exporter does not publish is named"
    assert "1 H200 SXM would do it" in out


def test_monitor_match_selects_a_host_and_an_empty_answer_names_the_query(prometheus, capsys):
    assert main(["monitor", "--prometheus", prometheus, "--since", "1m", "--match", 'Hostname="node1"']) == 0
    capsys.readouterr()
    assert main(["monitor", "--prometheus", prometheus, "--since", "1m", "--match", 'Hostname="node2"']) == 2
    err = capsys.readouterr().err
    assert 'DCGM_FI_DEV_GPU_UTIL{Hostname="node2"}' in err and "returned nothing" in err, err
    assert main(["monitor", "--prometheus", prometheus, "--since", "1m", "--match", "Hostname=="]) == 2
    assert "label matchers" in capsys.readouterr().err, "a bad match is refused before any query"
    assert main(["monitor", "--prometheus", prometheus, "--since", "1m", "--match", 'Hostname=~"("']) == 2
    assert "rejected the query" in capsys.readouterr().err, "Prometheus' own error (a bad RE2) is passed on"
