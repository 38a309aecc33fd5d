"""JupyterHub configuration: the accelkit app for an organisation, one server per person.

    jupyterhub -f deploy/jupyterhub_config.py

Each person who logs in gets their own single-user Jupyter Server (JupyterHub's
spawner), reached through JupyterHub's configurable-http-proxy; its default URL is
the app's front door, served by Voilà's server extension at
``/user/<name>/voila/render/app.ipynb`` with the app's own Voilà settings (the
``accelkit`` template, executor timeouts, idle kernels culled; see
``accelkit/appserver.py``). ``/hub/user-redirect/voila/render/app.ipynb?model=...``
is a link that opens the same view on whoever follows it, on their own server.

Everything here is JupyterHub's own: its authenticators, spawners and proxy. This
file must run in the Python environment where ``jupyterhub`` and ``accelkit`` are
installed (the single-user servers are started with the same interpreter).

Settings (environment variables, all optional):

    ACCELKIT_HUB_IP             address the hub's public proxy listens on (127.0.0.1)
    ACCELKIT_HUB_PORT           its port (8000)
    ACCELKIT_HUB_API_PORT       the hub's internal API port on 127.0.0.1 (8081)
    ACCELKIT_HUB_PROXY_API_PORT the proxy's REST API port on 127.0.0.1 (ACCELKIT_HUB_PORT + 1)
    ACCELKIT_HUB_STATE          folder for the hub's database, cookie secret and pid file (the
                                current folder); keep it private, it holds secrets
    ACCELKIT_NOTEBOOK_DIR       the single-user servers' root folder: it must hold app.ipynb
                                (accelkit's notebooks folder)
    ACCELKIT_HUB_AUTHENTICATOR  JupyterHub authenticator: an entry-point name ("pam",
                                "github", "generic-oauth", ...) or an import path (dummy)
    ACCELKIT_HUB_SPAWNER        JupyterHub spawner: "simple", "localprocess", or an import
                                path such as "dockerspawner.DockerSpawner" (simple)
    ACCELKIT_HUB_PROXY          the configurable-http-proxy command (this checkout's
                                .hub/node_modules/.bin/configurable-http-proxy from
                                `make proxy`, else the one on PATH)
    ACCELKIT_CULL_IDLE          seconds an idle kernel with no page open lives (600)
    ACCELKIT_SERVER_IDLE        seconds a person's server with no kernel and no activity
                                lives before it stops itself (3600; 0 keeps it)

PRODUCTION: the defaults (DummyAuthenticator, SimpleLocalProcessSpawner) are for a test
or a demo on one machine: DummyAuthenticator lets anyone in under any name with any
password, and SimpleLocalProcessSpawner runs every person's server as the hub's own Unix
user with no isolation. An organisation sets ACCELKIT_HUB_AUTHENTICATOR to a real one
(PAM, LDAP, OAuth: see JupyterHub's "Authenticators" docs), uses a spawner that isolates
people (LocalProcessSpawner with one Unix user each, or Kubernetes through
Zero-to-JupyterHub: deploy/z2jh-values.yaml), and puts TLS in front
(c.JupyterHub.ssl_cert / ssl_key, or a reverse proxy). This file refuses to start the
dummy authenticator or the simple spawner on an address other than this machine's.
"""

import os
import sys
from pathlib import Path

from accelkit.appserver import AppSettings, singleuser_settings

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _env(name, default):
    value = os.environ.get(name, "")
    return value if value.strip() else default


def _port(name, default):
    value = _env(name, str(default))
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise SystemExit(f"jupyterhub_config: {name}: expected a port number 1-65535, got {value!r}")
    return port


def _seconds(name, default):
    value = _env(name, str(default))
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1
    if seconds < 0:
        raise SystemExit(f"jupyterhub_config: {name}: expected a number of seconds >= 0, got {value!r}")
    return seconds


ip = _env("ACCELKIT_HUB_IP", "127.0.0.1")
port = _port("ACCELKIT_HUB_PORT", 8000)
state = Path(_env("ACCELKIT_HUB_STATE", os.getcwd())).resolve()
state.mkdir(parents=True, exist_ok=True)

# --- the hub, its state and its proxy -------------------------------------------------
host = f"[{ip}]" if ":" in ip else ip
c.JupyterHub.bind_url = f"http://{host}:{port}/"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = _port("ACCELKIT_HUB_API_PORT", 8081)
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
# stopping the hub stops every person's server (and so their kernels) and the proxy
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

local_proxy = Path(__file__).resolve().parent.parent / ".hub" / "node_modules" / ".bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [_env("ACCELKIT_HUB_PROXY",
                                        str(local_proxy) if local_proxy.exists() else "configurable-http-proxy")]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{_port('ACCELKIT_HUB_PROXY_API_PORT', port + 1)}"
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")

# --- who may log in -----------------------------------------------------------------------
authenticator = _env("ACCELKIT_HUB_AUTHENTICATOR", "jupyterhub.auth.DummyAuthenticator")
c.JupyterHub.authenticator_class = authenticator
spawner = _env("ACCELKIT_HUB_SPAWNER", "simple")
c.JupyterHub.spawner_class = spawner
testing_only = [name for name, value in (("ACCELKIT_HUB_AUTHENTICATOR", authenticator),
                                         ("ACCELKIT_HUB_SPAWNER", spawner))
                if value.lower() in ("dummy", "jupyterhub.auth.dummyauthenticator", "simple",
                                     "jupyterhub.spawner.simplelocalprocessspawner")]
if testing_only and ip not in LOOPBACK:
    raise SystemExit(
        f"jupyterhub_config: refusing to serve {ip} with the test-only "
        f"{' and '.join(n.split('_')[-1].lower() for n in testing_only)} ({', '.join(testing_only)}): "
        "anyone could log in as anyone, and every server would run as one Unix user. "
        "Set a real authenticator and spawner (see this file's docstring), or listen on 127.0.0.1."
    )

# --- each person's server: the app as the default URL ----------------------------------
app = singleuser_settings(AppSettings(cull_idle_s=_seconds("ACCELKIT_CULL_IDLE", 600)),
                          base={"JUPYTER_PATH": os.environ.get("JUPYTER_PATH", "")})
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = app["default_url"]
c.Spawner.notebook_dir = _env("ACCELKIT_NOTEBOOK_DIR", app["notebook_dir"])
c.Spawner.environment = dict(app["environment"])
server_idle = _seconds("ACCELKIT_SERVER_IDLE", 3600)
c.Spawner.args = [*app["args"],
                  # a server with no kernel left (culled) and no request for this long stops itself
                  f"--ServerApp.shutdown_no_activity_timeout={server_idle:g}"]
# a loaded machine starts a server slowly; JupyterHub's defaults (60 s, 30 s) are tight
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120

if spawner.lower() in ("simple", "jupyterhub.spawner.simplelocalprocessspawner"):
    # every person's home is a folder of the hub's state (the simple spawner's default is /tmp)
    c.SimpleLocalProcessSpawner.home_dir_template = str(state / "home" / "{username}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # the simple spawner runs servers as the hub's user; Jupyter Server refuses root without this
        c.Spawner.args.append("--ServerApp.allow_root=True")
