"""The README's first command serves the app on 127.0.0.1 (checked by fetching the page)."""

from __future__ import annotations

import urllib.request

import pytest

from servers import accelkit_app, free_port, serve, wait_for_port


@pytest.mark.slow
def test_app_command_serves_the_front_door_on_localhost(tmp_path):
    port = free_port()
    with serve(accelkit_app(port), tmp_path / "voila.log") as process:
        wait_for_port(port, process=process)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=90) as response:
            page = response.read().decode("utf-8", "replace")
            assert response.status == 200
    assert "<title>accelkit: choose an AI accelerator</title>" in page, "the app page is not the workbook's front door"
    assert "application/vnd.jupyter.widget-view+json" in page, "the front door displayed no widgets"
    assert "Traceback" not in page, "the app page shows a Python traceback"


def test_app_command_binds_to_loopback_by_default():
    from accelkit.cli import build_parser

    args = build_parser().parse_args(["app"])
    assert args.host == "127.0.0.1" and args.port == 8866
