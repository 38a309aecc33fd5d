"""What keeps ``accelkit report`` safe: an exclusive lock on the output folder, the
signals that stop a build (partial folders removed), and the kernels it started.

Split out of :mod:`accelkit.report` (one job per module); ``ReportError`` and
``ReportInterrupted`` are re-exported there.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from .i18n import _

__all__ = ["ReportError", "ReportInterrupted"]


class ReportError(Exception):
    """A report could not be built; ``exit_code`` is 2 for bad input, 1 for a failed step."""

    def __init__(self, message, exit_code=1):
        self.exit_code = exit_code
        super().__init__(message)


class _Lock:
    """An exclusive ``fcntl.flock`` on ``<out>.lock``, next to the output folder, for one report run.

    A second run into the same folder fails at once (:class:`ReportError`, exit 2)
    instead of waiting or silently losing one of the two reports. The lock file is
    removed on release; a run that finds the file it locked already replaced (a
    release in between) tries again.
    """

    def __init__(self, out):
        self.path = out.with_name(out.name + ".lock")
        self.fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover (Windows: no lock, as before)
            return self
        for _attempt in range(5):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ReportError(_("another accelkit report is writing {folder} (it holds {lock}); wait for it to "
                                    "finish or choose another --out").format(folder=self.path.with_suffix(''),
                                                                             lock=self.path), exit_code=2) from None
            except OSError:
                os.close(fd)
                raise
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self.fd = fd
                return self
            os.close(fd)  # released and removed by its holder between our open and our lock
        raise ReportError(_("cannot lock {path}: it keeps being replaced").format(path=self.path), exit_code=2)

    def __exit__(self, *exc):
        if self.fd is not None:
            try:
                os.unlink(self.path)  # still holding the lock: nobody else can be using this file
            except OSError:
                pass
            os.close(self.fd)
            self.fd = None
        return False


class ReportInterrupted(KeyboardInterrupt):
    """The run was stopped by a signal (SIGINT, SIGTERM, SIGHUP); ``signum`` says which."""

    def __init__(self, signum=signal.SIGINT):
        self.signum = int(signum)
        super().__init__(_("stopped by {signal}").format(signal=signal.Signals(signum).name))


_STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


class _Signals:
    """While a report runs: SIGTERM and SIGHUP stop it like Ctrl-C (:class:`ReportInterrupted`);
    while it cleans up, every further signal is noted and ignored, so a second Ctrl-C cannot
    leave a partial folder behind. Only in the main thread (elsewhere signals are not ours)."""

    def __init__(self):
        self.active = threading.current_thread() is threading.main_thread()
        self.saved = {}

    def _raise(self, signum, frame):
        raise ReportInterrupted(signum)

    def _note(self, signum, frame):
        print(_("accelkit report: {signal} received; removing the partial report first").format(
              signal=signal.Signals(signum).name), file=sys.stderr, flush=True)

    def __enter__(self):
        if self.active:
            for sig in _STOP_SIGNALS:
                self.saved[sig] = signal.signal(sig, self._raise)
        return self

    def cleaning(self):
        """From here on no signal interrupts (the cleanup must finish)."""
        if self.active:
            for sig in _STOP_SIGNALS:
                signal.signal(sig, self._note)

    def __exit__(self, *exc):
        if self.active:
            for sig, handler in self.saved.items():
                signal.signal(sig, handler)
        return False


def _stop_kernels(before):
    """Stop the kernels this report started (child processes that were not there before it)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover
        return
    try:
        mine = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
    except psutil.Error:
        return
    for child in mine:
        try:
            child.terminate()
        except psutil.Error:
            pass
    _gone, alive = psutil.wait_procs(mine, timeout=3)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass


def _children():
    try:
        import psutil

        return {c.pid for c in psutil.Process().children(recursive=True)}
    except Exception:  # pragma: no cover
        return set()
