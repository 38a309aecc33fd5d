"""How ``accelkit app`` runs Voilà: a pool of warm kernels, idle kernels reclaimed, nothing fetched off the machine.

The settings are Voilà's and Jupyter Server's own (no home-made server):

- **Preheated kernels** (Voilà ``--preheat_kernel``, ``--pool_size``): ``pool_size``
  kernels run ``notebooks/app.ipynb`` ahead of any visitor, up to
  :func:`accelkit.ui.app.wait_for_visitor`, which blocks until Voilà hands the
  kernel a visitor's request (so ``?model=…&tab=decision`` links still apply). The
  imports and table loading are paid before the visitor arrives. When the pool is
  empty, a visitor gets a kernel started for them (the slow path).
- **Reclaiming kernels** (Jupyter Server's ``MappingKernelManager.cull_idle_timeout``
  and ``cull_interval``): a kernel with no page connected that has been idle this
  long is shut down. Closing a tab disconnects its kernel, so culling also covers
  the shutdown request Voilà's page sends on close, which the server refuses for
  want of an ``_xsrf`` token (voila-dashboards/voila issue #1458). Preheated kernels
  wait inside a running cell ("busy"), so culling idle kernels never empties the
  pool.
- **Timeouts sized for load**: nbclient's ``iopub_timeout`` (4 s by default) drops
  a cell's output when a busy machine answers late, which leaves a blank page; here
  it is 120 s, and a cell may run 300 s (``accelkit app --cell-timeout``). The one
  cell where a warm kernel waits for its visitor (tagged ``accelkit-wait-for-visitor``)
  runs without that limit, so a pool that stayed idle longer than the timeout still
  serves its next visitor (:mod:`accelkit.kernelcap`).
- **A cap on kernels** (``max_kernels``, :mod:`accelkit.kernelcap`): a kernel takes
  one of ``max_kernels`` places (a lock file) before it starts, atomically, and a
  report's chapter kernels take theirs from the same places; beyond it a visitor gets
  HTTP 503 and a page saying the app is full, which retries by itself.
- **Offline**: the ``accelkit`` Voilà template (``accelkit/share/jupyter``) is the lab
  template without its Font Awesome CDN links (Voilà's bundle carries the icons).
- **The visitor's language** (Voilà ``http_header_envs``): the browser's ``Accept-Language``
  header reaches the kernel as ``HTTP_ACCEPT_LANGUAGE``, read when the page is built (after
  a warm kernel's wait for its visitor); ``?lang=zh_CN`` in the link overrides it.
- **plotly.js with the first chart** (Voilà ``extension_denylist``): a page loads
  ``accelkit-plotly-lazy`` (a Voilà-only lab extension in ``accelkit/share/jupyter/voila``)
  instead of ``jupyterlab-plotly``, whose single 4.8 MB script every page fetched and
  parsed before its first control worked; the first chart a page shows loads
  ``jupyterlab-plotly``'s own renderer, which draws every chart as before.

Under JupyterHub (``deploy/jupyterhub_config.py``) each person's single-user Jupyter
Server serves the app through Voilà's server extension at ``voila/render/app.ipynb``;
:func:`singleuser_settings` gives that server the same template, timeouts and culling.
The server extension has no preheated pool (Voilà uses one only as the standalone
``voila`` app), so there a visitor's kernel starts with the page.

References: Voilà documentation, "Customizing Voilà: preheated kernels"; Jupyter
Server configuration, ``MappingKernelManager.cull_*``; nbclient ``NotebookClient``
options.
"""

from __future__ import annotations

import json

import os
import shutil
import sys
from pathlib import Path

__all__ = ["AppSettings", "voila_command", "voila_environment", "singleuser_settings", "TEMPLATE_NAME",
           "APP_PATH", "PROMETHEUS_ENV"]

TEMPLATE_NAME = "accelkit"
#: the Prometheus servers the app's operator allows visitors to query (``accelkit app --prometheus URL``)
PROMETHEUS_ENV = "ACCELKIT_APP_PROMETHEUS"
APP_PATH = "voila/render/app.ipynb"  # the front door under Voilà's server extension, from the server root
_SHARE = Path(__file__).resolve().parent / "share" / "jupyter"
#: jupyterlab-plotly, left out of the app's pages: its one script (plotly.js, 4.8 MB) was fetched and parsed
#: by every page before its first control worked, though the start tab has no chart
PLOTLY_EXTENSION = "jupyterlab-plotly"
#: the Voila-only extension that draws the charts instead, loading jupyterlab-plotly's renderer with the
#: page's first chart (``share/jupyter/voila/labextensions``, which Voila reads and JupyterLab does not)
LAZY_PLOTLY = "accelkit-plotly-lazy"
#: request headers Voila hands the app's kernel as environment variables (``HTTP_<NAME>``)
HEADER_ENVS = ("Accept-Language",)


class AppSettings:
    """What ``accelkit app`` passes to Voilà.

    Parameters
    ----------
    pool_size : int
        Preheated kernels kept ready (0 turns the pool off).
    cull_idle_s : float
        Seconds a kernel with no page connected may stay idle before it is shut down
        (0 keeps kernels until the server stops).
    cull_interval_s : float
        Seconds between the server's checks for idle kernels.
    iopub_timeout_s, cell_timeout_s : float
        How long Voilà waits for a cell's output and for a cell to finish (0: no
        limit); a warm kernel's wait for its visitor is exempt.
    refill_delay_s : float
        Seconds after a warm kernel is handed out before its replacement starts.
    max_kernels : int
        Most kernels at once, warm pool and report kernels included (0: no cap); a
        visitor beyond it gets a page saying the app is full (:mod:`accelkit.kernelcap`).
    """

    def __init__(self, pool_size=2, cull_idle_s=600.0, cull_interval_s=60.0, iopub_timeout_s=120.0,
                 cell_timeout_s=300.0, refill_delay_s=60.0, max_kernels=0):
        for name, value in (("pool_size", pool_size), ("cull_idle_s", cull_idle_s),
                            ("cull_interval_s", cull_interval_s), ("iopub_timeout_s", iopub_timeout_s),
                            ("cell_timeout_s", cell_timeout_s), ("refill_delay_s", refill_delay_s),
                            ("max_kernels", max_kernels)):
            if value is None or value < 0:
                raise ValueError(f"{name}: expected a number >= 0, got {value!r}")
        if cull_idle_s and not cull_interval_s:
            raise ValueError("cull_interval_s: expected a number > 0 when cull_idle_s is set")
        self.pool_size = int(pool_size)
        self.cull_idle_s = float(cull_idle_s)
        self.cull_interval_s = float(cull_interval_s)
        self.iopub_timeout_s = float(iopub_timeout_s)
        self.cell_timeout_s = float(cell_timeout_s)
        self.refill_delay_s = float(refill_delay_s)
        if max_kernels and max_kernels < pool_size + 1:
            raise ValueError(f"max_kernels: expected at least pool_size + 1 = {int(pool_size) + 1} (the warm pool "
                             f"and one visitor), got {max_kernels}")
        self.max_kernels = int(max_kernels)

    def voila_options(self):
        """Voilà / Jupyter Server command-line options for these settings."""
        options = [
            f"--template={TEMPLATE_NAME}",
            *self._executor_options(),
            *self._page_options(),
        ]
        if self.pool_size:
            options += ["--preheat_kernel=True", f"--pool_size={self.pool_size}",
                        # a used kernel is replaced after this delay, so the refill (3 s of
                        # imports) does not compete with the page of the visitor it was handed to
                        f"--VoilaKernelManager.fill_delay={self.refill_delay_s:g}"]
        return options + self._cap_options() + self._cull_options()

    def server_extension_options(self):
        """Jupyter Server options that give Voilà's server extension these settings.

        The template, the executor's timeouts and the kernel culling carry over; the
        warm pool and the kernel cap do not (under JupyterHub each person has a server
        of their own, and the hub's spawner limits servers), so ``pool_size`` and
        ``max_kernels`` are unused. Under a Jupyter Server, Voilà's page would load MathJax
        from a public CDN (its default when the server has no ``mathjax_url`` setting);
        the standalone app sets none and loads none, and so does this.
        """
        return [f"--VoilaConfiguration.template={TEMPLATE_NAME}", *self._executor_options(),
                *self._page_options(as_literal=True), *self._cull_options(),
                '--ServerApp.tornado_settings={"mathjax_url": None, "mathjax_config": None}']

    def _executor_options(self):
        return [f"--VoilaExecutor.iopub_timeout={self.iopub_timeout_s:g}",
                f"--VoilaExecutor.timeout={self.cell_timeout_s:g}"]

    @staticmethod
    def _page_options(as_literal=False):
        # plotly.js is fetched with a page's first chart, not with every page (LAZY_PLOTLY). A Jupyter
        # Server parsing its command line does not know Voila's classes: a bare name stays a string
        # that the list setting drops (None: every page then failed with HTTP 500), so there the
        # value is written as a list literal, which both parsers read as a list.
        value = json.dumps([PLOTLY_EXTENSION]) if as_literal else PLOTLY_EXTENSION
        # the browser's languages reach the kernel as HTTP_ACCEPT_LANGUAGE: the app speaks the visitor's
        # language when the link names none (accelkit.ui.app.App.from_environment). This setting is a list
        # of text (List(Unicode())), which both parsers build from a bare name (one option per header);
        # a list literal would stay one string there, '["Accept-Language"]', and match no header
        return [f"--VoilaConfiguration.extension_denylist={value}",
                *(f"--VoilaConfiguration.http_header_envs={header}" for header in HEADER_ENVS)]

    def _cap_options(self):
        # always this manager: besides the cap, it offers visitors only warm kernels that are
        # ready; Voilà's own would hand the next visitor a refill still in its delay, and that
        # visitor would wait the whole delay for a page
        options = ["--VoilaConfiguration.multi_kernel_manager_class=accelkit.kernelcap.CappedKernelManager"]
        if self.max_kernels:
            options.append(f"--CappedKernelManager.max_kernels={self.max_kernels}")
        return options

    def _cull_options(self):
        if not self.cull_idle_s:
            return []
        return [f"--MappingKernelManager.cull_idle_timeout={self.cull_idle_s:g}",
                f"--MappingKernelManager.cull_interval={max(self.cull_interval_s, 1):g}",
                "--MappingKernelManager.cull_connected=False"]


def voila_command(notebook, host, port, settings=None):
    """The argv that serves ``notebook`` on ``host:port`` with ``settings``."""
    settings = AppSettings() if settings is None else settings
    voila = shutil.which("voila") or str(Path(sys.executable).with_name("voila"))
    return [voila, str(notebook), "--no-browser", f"--port={port}", f"--Voila.ip={host}",
            *settings.voila_options()]


def voila_environment(base=None):
    """The environment Voilà runs in: the ``accelkit`` template on ``JUPYTER_PATH``."""
    env = dict(os.environ if base is None else base)
    paths = [str(_SHARE)] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_PATH"] = os.pathsep.join(paths)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def singleuser_settings(settings=None, base=None):
    """What a person's single-user Jupyter Server needs to serve the app (under JupyterHub).

    Returns a dict: ``args`` (Jupyter Server options: the ``accelkit`` template,
    executor timeouts, kernel culling, from :meth:`AppSettings.server_extension_options`),
    ``environment`` (``JUPYTER_PATH`` with the template on it, as :func:`voila_environment`
    sets it for ``accelkit app``; ``base`` is the environment whose ``JUPYTER_PATH`` is
    extended, empty by default), ``notebook_dir`` (the folder holding ``app.ipynb``) and
    ``default_url`` (``/`` + :data:`APP_PATH`, relative to the server's base URL).
    """
    from .paths import notebooks_dir

    settings = AppSettings() if settings is None else settings
    env = voila_environment({} if base is None else base)
    keep = ("JUPYTER_PATH", "PYDEVD_DISABLE_FILE_VALIDATION")
    return {
        "args": settings.server_extension_options(),
        "environment": {k: env[k] for k in keep},
        "notebook_dir": str(notebooks_dir()),
        "default_url": "/" + APP_PATH,
    }
