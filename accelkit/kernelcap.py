"""The app's kernel manager: an atomic cap on kernels that reports share, and warm kernels that never time out.

Every visit to ``accelkit app`` runs a Python kernel (145-170 MB each, measured by
``python -m benchmarks app-load``). Without a limit, a crowd of visitors starts
kernels until the machine runs out of memory, and everyone gets a blank page.
:class:`CappedKernelManager` is Jupyter Server's own kernel manager with these rules
added:

* **At most ``max_kernels`` kernels at once**, the warm pool and reports included.
  The cap is a set of *places*: ``max_kernels`` lock files in a private folder
  (:class:`KernelSlots`, path in ``$ACCELKIT_KERNEL_SLOTS``). Whoever runs a kernel
  holds an exclusive ``flock`` on one place for the kernel's life: the server for each
  kernel it starts, and a visitor's kernel for each chapter kernel its "Download
  report" runs (papermill starts those inside the visitor's kernel process, outside
  the server; :func:`report_slots`). Taking a place is one non-blocking system call,
  atomic across processes, and happens *before* the kernel starts, with no ``await``
  between the check and the taking: visitors who arrive together cannot all pass a
  count of started kernels (issue 26, finding 4). The server frees a place when its
  kernel has shut down (or failed to start, or was removed); the kernel gives it back
  by exiting, since the operating system drops a dead process's locks.
* A visitor who would start a kernel beyond the cap gets HTTP 503 and the
  ``accelkit`` template's ``503.html``: the app is full, how many are using it, and
  a page that retries by itself. A report with no free place waits up to
  :data:`REPORT_WAIT_S` and then says the app is full; with fewer free places than
  its three workers it runs fewer chapters at once.
* A warm-pool refill at the cap waits for room instead of failing (a failed pool
  entry would break Voilà's kernel shutdown).
* Cap or none, a pool entry that is not ready is not offered to visitors: Voilà's
  pool count and hand-out see only kernels that are ready. Voilà queues a refill
  as soon as it hands a kernel out, and the refill first sleeps ``fill_delay``
  (``accelkit app --refill-delay``, 60 s); offered, it would keep the next visitor
  waiting that long, where a fresh kernel gives a page in seconds.
* **A warm kernel waits for its visitor without a time limit.** A preheated kernel runs
  ``app.ipynb`` up to the cell tagged :data:`WAIT_TAG`
  (:func:`accelkit.ui.app.wait_for_visitor`) and blocks there until a visitor takes
  it, which on an internal tool can be hours. Voilà's executor timeout
  (``--VoilaExecutor.timeout``, ``accelkit app --cell-timeout``) applies per cell, so
  that cell used to fail after 300 s and the next visitor got "Cell execution timed
  out" (finding 5). The pool's notebook renderers run that one cell without the
  timeout (nbclient's ``timeout_func``); every other cell, before and after it, keeps it.

Voilà builds its pooled manager as a subclass of the class it is given
(``VoilaConfiguration.multi_kernel_manager_class``); ``__init_subclass__`` wraps that
subclass's pool methods. Reference: Voilà ``voila/voila_kernel_manager.py``
(``voila_kernel_manager_factory``), ``voila/notebook_renderer.py``; nbclient
``NotebookClient.timeout_func``; Jupyter Server ``AsyncMappingKernelManager``;
flock(2).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado import web
from traitlets import Float, Integer

__all__ = ["CappedKernelManager", "AppFull", "KernelSlots", "NoRoom", "report_slots", "SLOTS_ENV", "WAIT_TAG",
           "REPORT_WAIT_S"]

#: the folder of the app's kernel places, set by the server for its kernels
SLOTS_ENV = "ACCELKIT_KERNEL_SLOTS"
#: the tag of the notebook cell where a warm kernel waits for its visitor (run without a time limit)
WAIT_TAG = "accelkit-wait-for-visitor"
#: how long a report waits for a free place before it says the app is full [s]
REPORT_WAIT_S = 60.0


class AppFull(web.HTTPError):
    """HTTP 503: the app already runs its most kernels."""

    def __init__(self, running, cap):
        super().__init__(503, "the app is full: %d of %d kernels in use", running, cap, reason="The app is full")
        self.running, self.cap = running, cap


class NoRoom(RuntimeError):
    """A report found no free place under the app's kernel cap in time."""


class Slot:
    """One place under the cap, held by an exclusive flock on its file until :meth:`release`."""

    def __init__(self, fd, path):
        self.fd, self.path = fd, path

    def release(self):
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the lock
            self.fd = None

    def __repr__(self):
        return f"Slot({self.path.name}, {'held' if self.fd is not None else 'released'})"


class KernelSlots:
    """``max_kernels`` places, one lock file each, shared by every process that runs an app kernel.

    A place is taken with ``flock(LOCK_EX | LOCK_NB)`` on a fresh descriptor (flock locks
    belong to the open file description, so two descriptors conflict even in one
    process) and freed by closing it, or by the holder's death. Descriptors are not
    inherited by child processes (Python opens them close-on-exec).
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        self.paths = sorted(self.folder.glob("slot-*"))
        if not self.paths:
            raise ValueError(f"{SLOTS_ENV}: {self.folder} holds no kernel places")

    @classmethod
    def create(cls, n, parent=None):
        """A new private folder (mode 0700) with ``n`` places."""
        if n < 1:
            raise ValueError(f"n: expected at least one place, got {n!r}")
        folder = Path(tempfile.mkdtemp(prefix="accelkit-kernel-slots-", dir=parent))
        for i in range(n):
            (folder / f"slot-{i:04d}").touch(mode=0o600)
        return cls(folder)

    @classmethod
    def from_environment(cls, env=None):
        """The app's places (``$ACCELKIT_KERNEL_SLOTS``), or None outside a capped app."""
        folder = (os.environ if env is None else env).get(SLOTS_ENV, "")
        if not folder or not Path(folder).is_dir():
            return None
        try:
            return cls(folder)
        except ValueError:
            return None

    def __len__(self):
        return len(self.paths)

    def try_acquire(self):
        """Take a free place now, or return None when every place is held."""
        import fcntl

        for path in self.paths:
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:  # the folder is gone: the server is stopping
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            return Slot(fd, path)
        return None

    def remove(self):
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def report_slots(want, wait_s=None, poll_s=0.5, on_wait=None):
    """Hold up to ``want`` places for a report's kernels; yield how many (at least one).

    Outside a capped app (no ``$ACCELKIT_KERNEL_SLOTS``) nothing is held and ``want``
    is yielded. Otherwise one place is awaited for up to ``wait_s`` seconds (default
    :data:`REPORT_WAIT_S`; ``on_wait()`` is called once if the wait begins), then up to
    ``want - 1`` more are taken if free now. The places are held until the block
    ends, so the report's chapter kernels (run ``n`` at a time) count against the cap.

    Raises
    ------
    NoRoom
        No place freed within ``wait_s``.
    """
    slots = KernelSlots.from_environment()
    if slots is None:
        yield want
        return
    wait_s = REPORT_WAIT_S if wait_s is None else wait_s
    held = []
    try:
        first = slots.try_acquire()
        deadline = time.monotonic() + wait_s
        if first is None and on_wait is not None:
            on_wait()
        while first is None:
            if time.monotonic() >= deadline:
                raise NoRoom(f"the app is full: all {len(slots)} places are in use and none freed within "
                             f"{wait_s:g} s; try the report again in a few minutes")
            time.sleep(poll_s)
            first = slots.try_acquire()
        held.append(first)
        while len(held) < max(1, want):
            more = slots.try_acquire()
            if more is None:
                break
            held.append(more)
        yield len(held)
    finally:
        for slot in held:
            slot.release()


def _ready(future):
    return future.done() and not future.cancelled() and future.exception() is None


class _WaitCellUntimed:
    """nbclient ``timeout_func``: no time limit on the :data:`WAIT_TAG` cell, ``timeout`` on every other."""

    def __init__(self, timeout):
        self.timeout = timeout

    def __call__(self, cell):
        if WAIT_TAG in (cell.get("metadata", {}).get("tags") or ()):
            return None
        return self.timeout


def _untimed_wait_config(config):
    """A copy of a Voilà config whose executor runs the wait cell without a time limit (the original is shared)."""
    import nbformat
    from traitlets.config import Config
    from voila.execute import VoilaExecutor

    executor_timeout = VoilaExecutor(nbformat.v4.new_notebook(), config=config).timeout
    copy = Config(config)
    copy["VoilaExecutor"] = Config(dict.get(config, "VoilaExecutor") or {})
    copy["VoilaExecutor"]["timeout_func"] = _WaitCellUntimed(executor_timeout)
    return copy


class CappedKernelManager(AsyncMappingKernelManager):
    """Jupyter Server's kernel manager with at most ``max_kernels`` kernels (0: no cap)."""

    max_kernels = Integer(0, config=True, help="Most kernels at once, warm pool and reports included (0: no cap).")
    wait_poll_s = Float(1.0, config=True, help="How often a pool refill at the cap looks for room [s].")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._slots, self._held = None, {}
        if self.max_kernels:
            self._slots = KernelSlots.create(self.max_kernels)
            atexit.register(self._slots.remove)
            # every kernel's environment starts from the server's: a visitor's kernel finds the
            # places there, and its report's kernels take theirs from the same cap
            os.environ[SLOTS_ENV] = str(self._slots.folder)

    def _reserve(self):
        """Take a place now (synchronously: nothing else runs between the check and the taking)."""
        live = set(self.list_kernel_ids())
        for kernel_id in [k for k in self._held if k not in live]:  # removed without a shutdown call
            self._held.pop(kernel_id).release()
        return self._slots.try_acquire()

    def _release(self, kernel_id):
        slot = self._held.pop(kernel_id, None)
        if slot is not None:
            slot.release()

    def _release_all(self):
        for kernel_id in list(self._held):
            self._release(kernel_id)

    async def start_kernel(self, *args, **kwargs):
        kernel_id = kwargs.get("kernel_id")
        if self._slots is None or (kernel_id is not None and kernel_id in self):
            return await super().start_kernel(*args, **kwargs)
        slot = self._reserve()
        if slot is None:
            env = kwargs.get("env") or {}
            if env.get("VOILA_PREHEAT") != "True":
                self.log.warning("accelkit app: refusing a kernel, all %d places in use", self.max_kernels)
                raise AppFull(self.max_kernels, self.max_kernels)
            while slot is None:  # a warm-pool refill: wait for a place to free
                await asyncio.sleep(self.wait_poll_s)
                slot = self._reserve()
        try:
            kernel_id = await super().start_kernel(*args, **kwargs)
        except BaseException:
            slot.release()
            raise
        self._held[kernel_id] = slot
        return kernel_id

    async def shutdown_kernel(self, kernel_id, *args, **kwargs):
        try:
            return await super().shutdown_kernel(kernel_id, *args, **kwargs)
        finally:
            if kernel_id not in self:  # the process is gone: its place is free
                self._release(kernel_id)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        pool_size = cls.__dict__.get("get_pool_size")
        hand_out = cls.__dict__.get("get_rendered_notebook")
        renderer_factory = cls.__dict__.get("_notebook_renderer_factory")
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
        if renderer_factory is not None:
            def _notebook_renderer_factory(self, notebook_path=None):
                renderer = renderer_factory(self, notebook_path)
                renderer.traitlet_config = _untimed_wait_config(renderer.traitlet_config)
                return renderer

            _notebook_renderer_factory.__doc__ = ("A warm kernel's renderer: the wait-for-visitor cell runs without "
                                                  "the executor's time limit.")
            cls._notebook_renderer_factory = _notebook_renderer_factory
