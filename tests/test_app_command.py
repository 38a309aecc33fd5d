"""The README's first command serves the app on 127.0.0.1 (checked by fetching the page)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

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


def test_app_settings_turn_into_voilas_pool_culling_and_offline_template():
    from accelkit.appserver import AppSettings, voila_command, voila_environment

    cmd = voila_command("app.ipynb", "127.0.0.1", 8866, AppSettings(pool_size=3, cull_idle_s=90, cull_interval_s=15))
    assert "--preheat_kernel=True" in cmd and "--pool_size=3" in cmd, "the warm-kernel pool is not asked of Voila"
    assert "--MappingKernelManager.cull_idle_timeout=90" in cmd and "--MappingKernelManager.cull_interval=15" in cmd
    assert "--MappingKernelManager.cull_connected=False" in cmd, "kernels of open pages would be culled"
    assert "--template=accelkit" in cmd
    off = voila_command("app.ipynb", "127.0.0.1", 8866, AppSettings(pool_size=0, cull_idle_s=0))
    assert not any(o.startswith(("--preheat", "--MappingKernelManager")) for o in off)
    template = voila_environment({})["JUPYTER_PATH"].split(":")[0]
    index = Path(template) / "voila" / "templates" / "accelkit" / "index.html.j2"
    assert index.exists(), f"the app's Voila template is missing ({index})"


def test_the_app_pages_load_plotly_js_with_the_first_chart_not_with_every_page():
    """jupyterlab-plotly (4.8 MB, fetched by every page) is left out; the Voila-only lazy extension draws instead."""
    import json

    from accelkit.appserver import LAZY_PLOTLY, PLOTLY_EXTENSION, AppSettings, voila_environment

    deny = f"--VoilaConfiguration.extension_denylist={PLOTLY_EXTENSION}"
    assert deny in AppSettings().voila_options()
    # under JupyterHub the single-user Jupyter Server parses the options: the value must reach Voila as a list
    from jupyter_server.serverapp import ServerApp
    from voila.configuration import VoilaConfiguration

    server = ServerApp()
    server.parse_command_line([o for o in AppSettings().server_extension_options() if "extension_denylist" in o])
    assert VoilaConfiguration(parent=server).extension_denylist == [PLOTLY_EXTENSION]
    share = Path(voila_environment({})["JUPYTER_PATH"].split(":")[0])
    # under share/jupyter/voila/labextensions: Voila loads it, JupyterLab does not
    folder = share / "voila" / "labextensions" / LAZY_PLOTLY
    build = json.loads((folder / "package.json").read_text())["jupyterlab"]
    assert build["mimeExtension"] and (folder / build["_build"]["load"]).is_file()
    assert not (share / "labextensions" / LAZY_PLOTLY).exists()


def test_app_command_rejects_a_negative_setting_with_the_field_name(capsys):
    from accelkit.cli import main

    with pytest.raises(SystemExit) as info:  # argparse: the option's type checks it
        main(["app", "--cull-idle", "-5"])
    assert info.value.code == 2
    assert "--cull-idle: expected whole seconds >= 0" in capsys.readouterr().err


@pytest.mark.slow
def test_a_visitor_beyond_the_kernel_cap_gets_a_clear_full_page_not_a_blank_one(tmp_path):
    """--max-kernels 1 without a pool: the first visitor holds the one kernel, the second is told why."""
    import urllib.error

    port = free_port()
    cmd = accelkit_app(port) + ["--pool-size", "0", "--max-kernels", "1", "--cull-idle", "0"]
    with serve(cmd, tmp_path / "voila.log") as process:
        wait_for_port(port, process=process)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=120) as response:
            assert response.status == 200 and "accelkit: choose an AI accelerator" in response.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60)
        page = err.value.read().decode("utf-8", "replace")
    assert err.value.code == 503, f"expected 503 (the app is full), got {err.value.code}"
    assert "The app is full right now" in page and "All 1 places are in use" in page, page[:500]
    assert 'http-equiv="refresh"' in page, "the full page should retry by itself"


def test_the_kernel_cap_offers_visitors_only_ready_warm_kernels():
    """Voilà's pool counts and hands out kernels; under the cap a refill waiting for room is not offered."""
    import asyncio

    from voila.voila_kernel_manager import voila_kernel_manager_factory

    from accelkit.kernelcap import CappedKernelManager

    pooled = voila_kernel_manager_factory(CappedKernelManager, True, 1)
    loop = asyncio.new_event_loop()
    try:
        ready, waiting = loop.create_future(), loop.create_future()
        ready.set_result({"kernel_id": "k1"})
        from types import SimpleNamespace

        manager = SimpleNamespace(_pools={"app.ipynb": [waiting, ready]})  # the state the two methods read
        assert pooled.get_pool_size(manager, "app.ipynb") == 1, "a refill still waiting for room counts as ready"
        waiting.cancel()
    finally:
        loop.close()


def test_max_kernels_below_the_pool_plus_one_visitor_is_refused(capsys):
    from accelkit.cli import main

    assert main(["app", "--pool-size", "2", "--max-kernels", "2"]) == 2
    assert "max_kernels: expected at least pool_size + 1 = 3" in capsys.readouterr().err


def test_a_jupyter_server_gets_the_apps_voila_settings_for_jupyterhub():
    from accelkit.appserver import AppSettings, singleuser_settings

    app = singleuser_settings(AppSettings(pool_size=3, cull_idle_s=90), base={"JUPYTER_PATH": "/site/share/jupyter"})
    assert app["default_url"] == "/voila/render/app.ipynb"
    assert (Path(app["notebook_dir"]) / "app.ipynb").exists()
    assert "--VoilaConfiguration.template=accelkit" in app["args"]
    assert "--MappingKernelManager.cull_idle_timeout=90" in app["args"]
    # the server extension has no warm pool; Voila's page must not fetch MathJax from a CDN
    assert not any("pool" in a or "preheat" in a for a in app["args"])
    assert '--ServerApp.tornado_settings={"mathjax_url": None, "mathjax_config": None}' in app["args"]
    paths = app["environment"]["JUPYTER_PATH"].split(":")
    assert paths[1] == "/site/share/jupyter" and (Path(paths[0]) / "voila" / "templates" / "accelkit").is_dir()


def test_the_app_always_offers_only_ready_warm_kernels_cap_or_none():
    """Without a cap too: Voilà's own manager would hand the next visitor a refill still sleeping its delay."""
    from accelkit.appserver import AppSettings

    for cap in (0, 5):
        options = AppSettings(pool_size=2, max_kernels=cap).voila_options()
        assert "--VoilaConfiguration.multi_kernel_manager_class=accelkit.kernelcap.CappedKernelManager" in options, (
            f"with max_kernels={cap} the app would use Voilà's own pool, which makes a visitor wait out the refill delay")
        assert any(o.startswith("--CappedKernelManager.max_kernels=") for o in options) == bool(cap)
