"""A cap on the app's kernels, with a clear page when it is reached (never a blank one).

Every visit to ``accelkit app`` runs a Python kernel (145-170 MB each, measured by
``python -m benchmarks app-load``). Without a limit, a crowd of visitors starts
kernels until the machine runs out of memory, and everyone gets a blank page.
:class:`CappedKernelManager` is Jupyter Server's own kernel manager with one rule
added: at most ``max_kernels`` kernels at once, the warm pool included.

* A visitor who would start a kernel beyond the cap gets HTTP 503 and the
  ``accelkit`` template's ``503.html``: the app is full, how many are using it, and
  a page that retries by itself.
* A warm-pool refill at the cap waits for room instead of failing (a failed pool
  entry would break Voilà's kernel shutdown).
* Cap or none, a pool entry that is not ready is not offered to visitors: Voilà's
  pool count and hand-out see only kernels that are ready. Voilà queues a refill
  as soon as it hands a kernel out, and the refill first sleeps ``fill_delay``
  (``accelkit app --refill-delay``, 60 s); offered, it would keep the next visitor
  waiting that long, where a fresh kernel gives a page in seconds.

Voilà builds its pooled manager as a subclass of the class it is given
(``VoilaConfiguration.multi_kernel_manager_class``); ``__init_subclass__`` wraps that
subclass's two pool methods. Reference: Voilà ``voila/voila_kernel_manager.py``
(``voila_kernel_manager_factory``); Jupyter Server ``AsyncMappingKernelManager``.
"""

from __future__ import annotations

import asyncio

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado import web
from traitlets import Float, Integer

__all__ = ["CappedKernelManager", "AppFull"]


class AppFull(web.HTTPError):
    """HTTP 503: the app already runs its most kernels."""

    def __init__(self, running, cap):
        super().__init__(503, "the app is full: %d of %d kernels in use", running, cap, reason="The app is full")
        self.running, self.cap = running, cap


def _ready(future):
    return future.done() and not future.cancelled() and future.exception() is None


class CappedKernelManager(AsyncMappingKernelManager):
    """Jupyter Server's kernel manager with at most ``max_kernels`` kernels (0: no cap)."""

    max_kernels = Integer(0, config=True, help="Most kernels at once, warm pool included (0: no cap).")
    wait_poll_s = Float(1.0, config=True, help="How often a pool refill at the cap looks for room [s].")

    def _full(self):
        return bool(self.max_kernels) and len(self.list_kernel_ids()) >= self.max_kernels

    async def start_kernel(self, *args, **kwargs):
        if self._full():
            env = kwargs.get("env") or {}
            if env.get("VOILA_PREHEAT") != "True":
                self.log.warning("accelkit app: refusing a kernel, %d of %d in use", len(self.list_kernel_ids()),
                                 self.max_kernels)
                raise AppFull(len(self.list_kernel_ids()), self.max_kernels)
            while self._full():  # a warm-pool refill: wait for a kernel to be reclaimed
                await asyncio.sleep(self.wait_poll_s)
        return await super().start_kernel(*args, **kwargs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        pool_size = cls.__dict__.get("get_pool_size")
        hand_out = cls.__dict__.get("get_rendered_notebook")
        if pool_size is None or hand_out is None:
            return

        def get_pool_size(self, notebook_name):
            return sum(_ready(f) for f in getattr(self, "_pools", {}).get(notebook_name, []))

        async def get_rendered_notebook(self, notebook_name, *args, **kw):
            pool = getattr(self, "_pools", {}).get(notebook_name, [])
            pool.sort(key=lambda f: not _ready(f))  # ready kernels first: Voilà hands out pool[0]
            return await hand_out(self, notebook_name, *args, **kw)

        get_pool_size.__doc__ = "Ready warm kernels only (a refill in its delay or waiting for room is not offered)."
        get_rendered_notebook.__doc__ = hand_out.__doc__
        cls.get_pool_size = get_pool_size
        cls.get_rendered_notebook = get_rendered_notebook
