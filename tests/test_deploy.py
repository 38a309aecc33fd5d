"""deploy/: the JupyterHub config reads its settings, refuses test-only parts off loopback, and the Kubernetes example agrees with it.

The config is loaded as JupyterHub loads it (traitlets' Python config loader), without
starting anything; tests/browser/test_jupyterhub.py runs a real hub with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
HUB_VARS = ("ACCELKIT_HUB_IP", "ACCELKIT_HUB_PORT", "ACCELKIT_HUB_API_PORT", "ACCELKIT_HUB_PROXY_API_PORT",
            "ACCELKIT_HUB_STATE", "ACCELKIT_NOTEBOOK_DIR", "ACCELKIT_HUB_AUTHENTICATOR", "ACCELKIT_HUB_SPAWNER",
            "ACCELKIT_HUB_PROXY", "ACCELKIT_CULL_IDLE", "ACCELKIT_SERVER_IDLE")


@pytest.fixture
def load(monkeypatch, tmp_path):
    from traitlets.config.loader import PyFileConfigLoader

    for name in HUB_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ACCELKIT_HUB_STATE", str(tmp_path / "state"))

    def _load(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return PyFileConfigLoader("jupyterhub_config.py", path=str(DEPLOY)).load_config()

    return _load


def test_default_url_is_the_front_door_with_the_apps_voila_settings(load, tmp_path):
    from accelkit.appserver import APP_PATH, singleuser_settings

    c = load()
    assert c.Spawner.default_url == "/voila/render/app.ipynb" == "/" + APP_PATH
    assert (Path(c.Spawner.notebook_dir) / "app.ipynb").exists()
    assert c.Spawner.cmd == [sys.executable, "-m", "jupyterhub.singleuser"]
    args = list(c.Spawner.args)
    for option in singleuser_settings()["args"]:
        assert option in args, f"the single-user server lacks {option}"
    assert "--VoilaConfiguration.template=accelkit" in args
    assert "--ServerApp.shutdown_no_activity_timeout=3600" in args
    template = Path(c.Spawner.environment["JUPYTER_PATH"].split(":")[0]) / "voila" / "templates" / "accelkit"
    assert (template / "index.html.j2").exists(), "the accelkit Voila template is not on the servers' JUPYTER_PATH"
    # state in the state folder, the hub on loopback, JupyterHub's defaults for ports
    state = tmp_path / "state"
    assert c.JupyterHub.bind_url == "http://127.0.0.1:8000/"
    assert c.JupyterHub.hub_port == 8081 and c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:8001"
    assert c.JupyterHub.db_url == f"sqlite:///{state / 'jupyterhub.sqlite'}"
    assert Path(c.JupyterHub.cookie_secret_file).parent == state
    assert c.JupyterHub.authenticator_class == "jupyterhub.auth.DummyAuthenticator"
    assert c.JupyterHub.spawner_class == "simple"
    assert Path(c.SimpleLocalProcessSpawner.home_dir_template).parent == state / "home"


def test_settings_come_from_the_environment(load, tmp_path):
    c = load(ACCELKIT_HUB_PORT="9000", ACCELKIT_HUB_API_PORT="9100", ACCELKIT_HUB_PROXY_API_PORT="9200",
             ACCELKIT_NOTEBOOK_DIR=str(tmp_path), ACCELKIT_CULL_IDLE="90", ACCELKIT_SERVER_IDLE="0",
             ACCELKIT_HUB_PROXY="/opt/chp/bin/configurable-http-proxy")
    assert c.JupyterHub.bind_url == "http://127.0.0.1:9000/"
    assert c.JupyterHub.hub_port == 9100 and c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:9200"
    assert c.Spawner.notebook_dir == str(tmp_path)
    assert c.ConfigurableHTTPProxy.command == ["/opt/chp/bin/configurable-http-proxy"]
    assert "--MappingKernelManager.cull_idle_timeout=90" in c.Spawner.args
    assert "--ServerApp.shutdown_no_activity_timeout=0" in c.Spawner.args


def test_a_real_authenticator_and_spawner_may_serve_the_network(load):
    c = load(ACCELKIT_HUB_IP="0.0.0.0", ACCELKIT_HUB_AUTHENTICATOR="pam", ACCELKIT_HUB_SPAWNER="localprocess")
    assert c.JupyterHub.bind_url == "http://0.0.0.0:8000/"
    assert c.JupyterHub.authenticator_class == "pam" and c.JupyterHub.spawner_class == "localprocess"
    assert "home_dir_template" not in c.SimpleLocalProcessSpawner


@pytest.mark.parametrize("env, says", [
    ({"ACCELKIT_HUB_IP": "0.0.0.0"}, "refusing to serve 0.0.0.0 with the test-only authenticator and spawner"),
    ({"ACCELKIT_HUB_IP": "0.0.0.0", "ACCELKIT_HUB_AUTHENTICATOR": "pam"}, "test-only spawner (ACCELKIT_HUB_SPAWNER)"),
    ({"ACCELKIT_HUB_PORT": "eighty"}, "ACCELKIT_HUB_PORT: expected a port number 1-65535, got 'eighty'"),
    ({"ACCELKIT_HUB_API_PORT": "70000"}, "ACCELKIT_HUB_API_PORT: expected a port number"),
    ({"ACCELKIT_CULL_IDLE": "-1"}, "ACCELKIT_CULL_IDLE: expected a number of seconds >= 0, got '-1'"),
])
def test_bad_or_unsafe_settings_stop_the_hub_with_the_variable_named(load, env, says):
    with pytest.raises(SystemExit) as err:
        load(**env)
    assert says in str(err.value)


def test_the_kubernetes_example_serves_the_same_app(load):
    from accelkit.appserver import singleuser_settings

    c = load()
    values = yaml.safe_load((DEPLOY / "z2jh-values.yaml").read_text())
    single, spawner = values["singleuser"], values["hub"]["config"]["KubeSpawner"]
    assert single["defaultUrl"] == c.Spawner.default_url
    assert spawner["args"] == [a for a in c.Spawner.args if a != "--ServerApp.allow_root=True"]
    assert spawner["args"][:len(singleuser_settings()["args"])] == singleuser_settings()["args"]
    assert single["extraEnv"]["JUPYTER_PATH"].endswith("accelkit/share/jupyter")
    assert spawner["notebook_dir"].endswith("accelkit/notebooks")
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"] not in ("dummy", "jupyterhub.auth.DummyAuthenticator")
