"""The Prometheus client against hostile or broken servers (issue 26, findings 6, 8 and 9).

A small threaded HTTP server on 127.0.0.1 plays the server: it records every query
it receives and answers by the first part of the path (the client keeps a base URL's
path), so one server covers a slow drip, a huge answer, a JSON list, a non-number and
an exporter without the profiling and power fields. Every handler is bounded in time
and bytes, and the server stops at the end of the module.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accelkit.cli import main
from accelkit.monitor import prometheus as P
from accelkit.monitor.samples import MonitorError

NOW = 1_700_000_000.0


def _matrix(result):
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()


def _util_series(query):
    """GPU utilisation of two GPUs over the last minute; every other metric: nothing."""
    if not query.startswith("DCGM_FI_DEV_GPU_UTIL"):
        return _matrix([])
    return _matrix([{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": str(g), "Hostname": "node1",
                                "modelName": "NVIDIA A100-SXM4-80GB", "UUID": f"GPU-{g}"},
                     "values": [[NOW - 60 + i, str(30 + 10 * g)] for i in range(0, 60, 5)]} for g in (0, 1)])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's name)
        parts = urllib.parse.urlsplit(self.path)
        mode = parts.path.strip("/").split("/")[0]
        query = urllib.parse.parse_qs(parts.query).get("query", [""])[0]
        self.server.queries.append(query)
        stop = self.server.stop
        if mode == "drip-body":  # headers at once, then one byte every 0.3 s (bounded: 60 bytes)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(60):
                if stop.wait(0.3):
                    return
                self.wfile.write(b" ")
                self.wfile.flush()
            return
        if mode == "drip-head":  # the status line, then one header byte every 0.3 s
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for _ in range(60):
                if stop.wait(0.3):
                    return
                self.wfile.write(b"X")
                self.wfile.flush()
            return
        if mode == "big-chunked":  # 4 MiB, no Content-Length (read until the server closes)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            block = b" " * 65536
            try:
                for _ in range(64):
                    if stop.is_set():
                        return
                    self.wfile.write(block)
            except OSError:
                pass
            self.close_connection = True
            return
        if mode == "big-declared":  # says 100 MiB up front
            self.send_response(200)
            self.send_header("Content-Length", str(100 * 2**20))
            self.end_headers()
            return
        body = {
            "list": b"[1, 2, 3]",
            "nonnumber": _matrix([{"metric": {"gpu": "0"}, "values": [[NOW, "lots"]]}]),
            "points": _matrix([{"metric": {"gpu": "0"}, "values": [[NOW]]}]),
            "html": b"<html>proxy error</html>",
            "util": _util_series(query),
        }.get(mode, _matrix([]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.queries = []
    httpd.stop = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.stop.set()
        httpd.shutdown()
        httpd.server_close()


# --- finding 6: `match` takes label matchers only --------------------------------------------------------

@pytest.mark.parametrize("text, parsed", [
    ('Hostname="node1"', [("Hostname", "=", "node1")]),
    ('{Hostname="node1"}', [("Hostname", "=", "node1")]),
    (' Hostname = "node1" , gpu =~ "0|1" ,', [("Hostname", "=", "node1"), ("gpu", "=~", "0|1")]),
    ("job!='dcgm',instance!~\"10\\\\.0.*\"", [("job", "!=", "dcgm"), ("instance", "!~", "10\\.0.*")]),
    ('a="say \\"hi\\"\\n"', [("a", "=", 'say "hi"\n')]),
    ('a="} or vector(1) #"', [("a", "=", "} or vector(1) #")]),
    ("", []),
])
def test_match_parser_accepts_label_matchers(text, parsed):
    assert P.parse_matchers(text) == parsed
    # the rebuilt text parses back to the same matchers (nothing raw survives)
    assert P.parse_matchers(P.format_matchers(parsed)) == parsed


@pytest.mark.parametrize("hostile", [
    '} or label_replace(prometheus_build_info, "x", "$1", "version", "(.*)")',
    'Hostname="node1"} or prometheus_build_info{',
    'Hostname="node1"} or vector(1',
    'Hostname="a" or up',
    "Hostname=node1",
    "Hostname==\"a\"",
    "Hostname=",
    'Hostname="a',
    'Hostname="a\\q"',
    '__name__=~".+"',
    'a="b";c="d"',
    'a="b"}[5m]',
    "sum(up)",
    '1a="b"',
    'a="b\x00"',
    'a="' + "x" * 5000 + '"',
    ",".join(f'l{i}="v"' for i in range(40)),
])
def test_match_parser_refuses_anything_but_label_matchers(hostile):
    with pytest.raises(MonitorError) as info:
        P.parse_matchers(hostile)
    message = str(info.value)
    assert message.startswith("match "), message
    assert len(message) < 400, "an error quotes at most a short prefix of the bad text"


def test_selector_is_rebuilt_from_parsed_parts():
    assert P._selector("DCGM_FI_DEV_GPU_UTIL", 'Hostname="n\\"1"') == 'DCGM_FI_DEV_GPU_UTIL{Hostname="n\\"1"}'
    assert P._selector("DCGM_FI_DEV_GPU_UTIL", 'a="} or up{"') == 'DCGM_FI_DEV_GPU_UTIL{a="} or up{"}'
    assert P._selector("DCGM_FI_DEV_GPU_UTIL", None) == "DCGM_FI_DEV_GPU_UTIL"


def test_injection_sends_no_query_and_a_good_match_is_sent_rebuilt(server, capsys):
    httpd, url = server
    before = len(httpd.queries)
    code = main(["monitor", "--prometheus", url + "/util", "--since", "1m", "--match",
                 '} or label_replace(prometheus_build_info, "x", "$1", "version", "(.*)")'])
    err = capsys.readouterr().err
    assert code == 2 and "label matchers" in err and "Traceback" not in err, err
    assert len(httpd.queries) == before, "a refused match must send no request"
    P.query_range(url + "/util", P._selector("DCGM_FI_DEV_GPU_UTIL", " Hostname = 'node1' "), NOW - 60, NOW, 5)
    assert httpd.queries[-1] == 'DCGM_FI_DEV_GPU_UTIL{Hostname="node1"}'


def test_app_match_field_goes_through_the_parser(server):
    import ipywidgets  # noqa: F401 (required: a missing one fails, never skips)
    from accelkit.ui.monitor import MonitorPanel

    httpd, url = server
    before = len(httpd.queries)
    panel = MonitorPanel(source="Prometheus", prometheus_url=url + "/util", prometheus_allowed=[url + "/util"],
                         match='} or label_replace(prometheus_build_info, "x", "$1", "version", "(.*)")')
    assert panel.load() is None
    assert "label matchers" in (panel.error or ""), panel.error
    assert len(httpd.queries) == before


# --- finding 9: deadline, answer size, null for missing values ---------------------------------------------

@pytest.mark.parametrize("mode", ["drip-body", "drip-head"])
def test_a_slow_drip_server_is_abandoned_at_the_deadline(server, mode):
    _, url = server
    started = time.monotonic()
    with pytest.raises(MonitorError, match="no complete answer within 1.5 s"):
        P.query_range(f"{url}/{mode}", "DCGM_FI_DEV_GPU_UTIL", NOW - 60, NOW, 5, timeout_s=10, deadline_s=1.5)
    assert time.monotonic() - started < 5, "the deadline bounds the whole request, not each read"


def test_the_default_deadline_holds_for_query_prometheus(server, monkeypatch):
    _, url = server
    monkeypatch.setattr(P, "DEADLINE_S", 1.0)
    started = time.monotonic()
    with pytest.raises(MonitorError, match="within 1 s"):
        P.query_prometheus(f"{url}/drip-body", since="1m", end=NOW)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("mode", ["big-chunked", "big-declared"])
def test_a_large_answer_is_capped(server, mode):
    _, url = server
    with pytest.raises(MonitorError, match="bytes; at most|over 1,048,576 bytes"):
        P.query_range(f"{url}/{mode}", "DCGM_FI_DEV_GPU_UTIL", NOW - 60, NOW, 5, max_bytes=2**20)


def test_default_answer_cap_is_16_mib():
    assert P.MAX_ANSWER_BYTES == 16 * 2**20 and P.DEADLINE_S <= 30


# --- finding 8: broken answers -> one clear line, exit 2 -------------------------------------------------

@pytest.mark.parametrize("mode, words", [
    ("list", "expected a JSON object"),
    ("nonnumber", "points"),
    ("points", "points"),
    ("html", "not JSON"),
])
def test_broken_answers_exit_2_with_one_line(server, capsys, mode, words):
    _, url = server
    assert main(["monitor", "--prometheus", f"{url}/{mode}", "--since", "1m"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.count("\n") == 1, err


@pytest.mark.parametrize("bad", ["ftp://x", "http://", "http://127.0.0.1:99999", "http://h:port", "nonsense"])
def test_bad_prometheus_url_exit_2(capsys, bad):
    assert main(["monitor", "--prometheus", bad, "--since", "1m"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err


def test_json_summary_writes_missing_values_as_null(server, tmp_path, capsys):
    """The exporter has no profiling or power fields: the summary holds NaN, the file null."""
    _, url = server
    target = tmp_path / "summary.json"
    code = main(["monitor", "--prometheus", f"{url}/util", "--since", "1m", "--json", str(target)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = target.read_text()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data["n_gpus"] == 2
    assert any(d.get("sm_active_mean") is None for d in data["devices"]), "a missing figure is written as null"
