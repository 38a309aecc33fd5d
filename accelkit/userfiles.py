"""Files a person hands the app: uploads, the operator's data folder, and their limits.

A visitor of the served app never names a server path. A file reaches a chapter in
one of three ways, the same in the app and in a notebook:

- **upload** (an ``ipywidgets.FileUpload``): the bytes arrive in the kernel and are
  parsed in memory; nothing is written to disk;
- **built-in examples** (the shipped synthetic logs and results);
- **the operator's data folder** (``accelkit app --data-dir DIR``, passed to the
  kernels as :data:`DATA_DIR_ENV`): a visitor picks a *file name* from a list;
  :func:`resolve_data_file` resolves it inside the folder and refuses ``..``,
  absolute paths, hidden names, symbolic links that leave the folder and anything
  that is not a regular file (``/dev/zero``, a FIFO).

Every input is capped (:data:`MAX_BYTES`, :data:`MAX_LINES`, :data:`MAX_LINE_BYTES`) and
read at most one byte past its cap, so ``/dev/zero`` or a 10 GB log gives a clear
message instead of exhausting the server's memory. Error messages quote at most
:data:`QUOTE_CHARS` characters of a bad value and never a file's contents, and they
read the same whether a name outside the folder exists or not.

:func:`served` tells the chapters that they run inside ``accelkit app`` (where "this
machine" is the server); :func:`probes_allowed` whether the operator allowed the
probes, the ecosystem audit and live sampling there (``--allow-probes``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import units

__all__ = ["InputError", "MAX_BYTES", "MAX_LINES", "MAX_LINE_BYTES", "QUOTE_CHARS", "MAX_PROBE_SECONDS",
           "DATA_DIR_ENV", "ALLOW_PROBES_ENV", "SERVED_ENV", "quote", "check_text", "read_limited", "data_dir",
           "data_files", "resolve_data_file", "read_data_file", "uploaded_files", "served", "probes_allowed",
           "max_probe_seconds"]

#: most bytes of one uploaded or data-folder file (8 MiB)
MAX_BYTES = 8 * units.MIB
#: most lines of one file
MAX_LINES = 200_000
#: most bytes of one line (128 KiB)
MAX_LINE_BYTES = 128 * units.KIB
#: most characters of a bad value quoted in a message
QUOTE_CHARS = 40
#: longest live measurement (probe, NVML sampling) a visitor may start on the server
MAX_PROBE_SECONDS = 60.0

#: the operator's data folder (``accelkit app --data-dir DIR``)
DATA_DIR_ENV = "ACCELKIT_APP_DATA_DIR"
#: "1": the operator allows the probes, the audit and live sampling (``accelkit app --allow-probes``)
ALLOW_PROBES_ENV = "ACCELKIT_APP_ALLOW_PROBES"
#: "1": the chapters run inside ``accelkit app`` (served to visitors; "this machine" is the server)
SERVED_ENV = "ACCELKIT_APP_SERVED"


class InputError(ValueError):
    """A file a person handed in is refused: says why in one line, quoting no contents."""


def quote(value, limit=QUOTE_CHARS):
    """``repr`` of at most ``limit`` characters of ``value`` (with … when cut)."""
    text = str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _size_words(n):
    return f"{n / units.MIB:g} MiB" if n >= units.MIB else f"{n / units.KIB:g} KiB"


def check_text(data, what="the file", max_bytes=MAX_BYTES, max_lines=MAX_LINES, max_line_bytes=MAX_LINE_BYTES):
    """The text of ``data`` (bytes, UTF-8; undecodable bytes replaced) within the limits.

    Raises :class:`InputError` naming ``what`` and the limit passed (never the contents).
    """
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    data = bytes(data)
    if len(data) > max_bytes:
        raise InputError(f"{what} is larger than {_size_words(max_bytes)}; give a shorter one (for a long log, "
                         "the last hours are enough)")
    if b"\x00" in data:
        raise InputError(f"{what} is not a text file (it holds NUL bytes)")
    lines = 0
    start = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > max_line_bytes:
            raise InputError(f"{what}: line {lines + 1} is longer than {_size_words(max_line_bytes)}")
        lines += 1
        if lines > max_lines:
            raise InputError(f"{what} has more than {max_lines:,} lines; give a shorter one")
        start = end + 1
    return data.decode("utf-8", errors="replace")


def read_limited(path, what=None, max_bytes=MAX_BYTES):
    """The bytes of a *regular* file, reading at most ``max_bytes + 1`` of them.

    Refuses devices, FIFOs and folders (``/dev/zero`` cannot fill the memory) and files
    over the cap, with a message naming ``what`` (default: the file's name).
    """
    path = Path(path)
    what = what or f"file {quote(path.name)}"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"{what} cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{what} is not a regular file (a device, a pipe or a folder cannot be read here)")
        if info.st_size > max_bytes:
            raise InputError(f"{what} is larger than {_size_words(max_bytes)}")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise InputError(f"{what} is larger than {_size_words(max_bytes)}")
        return b"".join(chunks)
    finally:
        os.close(fd)


# --- the operator's data folder -----------------------------------------------------------

def data_dir(environ=None):
    """The operator's data folder (from :data:`DATA_DIR_ENV`), or None when there is none."""
    value = (os.environ if environ is None else environ).get(DATA_DIR_ENV, "").strip()
    if not value:
        return None
    folder = Path(value)
    return folder if folder.is_dir() else None


def _inside(path, folder):
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def data_files(folder=None, suffixes=None):
    """Names of the regular files directly in the data folder (sorted; hidden files and links
    that leave the folder are left out). ``suffixes`` keeps only names ending so (lower case)."""
    folder = data_dir() if folder is None else Path(folder)
    if folder is None or not folder.is_dir():
        return []
    root = folder.resolve()
    names = []
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if name.startswith(".") or (suffixes and not name.lower().endswith(tuple(suffixes))):
            continue
        try:
            real = entry.resolve(strict=True)
            if _inside(real, root) and stat.S_ISREG(real.stat().st_mode):
                names.append(name)
        except (OSError, RuntimeError):
            continue
    return names


def resolve_data_file(name, folder=None):
    """The path of file ``name`` in the data folder, checked.

    ``name`` is a plain file name: no folder part, no ``..``, not absolute, not hidden. The
    resolved path (links followed) must lie inside the folder and be a regular file. The
    message is the same for a name that does not exist and one that is refused, so it
    says nothing about the server's other files.
    """
    folder = data_dir() if folder is None else Path(folder)
    if folder is None:
        raise InputError("this app has no data folder (its operator can name one with `accelkit app --data-dir DIR`); "
                         "upload the file instead")
    text = str(name)
    refused = InputError(f"no file {quote(text)} in the app's data folder; choose one of its files or upload one")
    if (not text or text in (".", "..") or text.startswith(".") or "/" in text or "\\" in text or "\x00" in text
            or os.path.isabs(text) or len(text) > 255):
        raise refused
    root = folder.resolve()
    try:
        real = (folder / text).resolve(strict=True)
    except (OSError, RuntimeError):
        raise refused from None
    if not _inside(real, root) or real.parent != root:
        raise refused
    try:
        mode = real.stat().st_mode
    except OSError:
        raise refused from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{quote(text)} in the app's data folder is not a regular file")
    return real


def read_data_file(name, folder=None, **limits):
    """The text of file ``name`` in the data folder, within the limits (see :func:`check_text`)."""
    path = resolve_data_file(name, folder)
    what = f"data file {quote(name)}"
    max_bytes = limits.get("max_bytes", MAX_BYTES)
    return check_text(read_limited(path, what, max_bytes), what, **limits)


# --- uploads --------------------------------------------------------------------------------

def uploaded_files(value, max_files=16, **limits):
    """``[(name, text), ...]`` from an ``ipywidgets.FileUpload`` value (a tuple of dicts with
    ``name`` and ``content``; ipywidgets 7's dict form is read too), each within the limits."""
    if isinstance(value, dict):  # ipywidgets 7: {name: {"metadata": ..., "content": bytes}}
        value = [dict(item, name=item.get("metadata", {}).get("name", key)) for key, item in value.items()]
    items = list(value or ())
    if len(items) > max_files:
        raise InputError(f"{len(items)} files uploaded; at most {max_files} at once")
    out = []
    for item in items:
        name = str(item.get("name", "upload"))
        content = item.get("content", b"")
        what = f"upload {quote(name)}"
        out.append((name, check_text(bytes(content), what, **limits)))
    return out


# --- served or not --------------------------------------------------------------------------

def served(environ=None):
    """True inside ``accelkit app`` (its kernels carry :data:`SERVED_ENV`): "this machine" is the server."""
    return (os.environ if environ is None else environ).get(SERVED_ENV, "") == "1"


def probes_allowed(environ=None):
    """May a person start probes, the ecosystem audit or live sampling here?

    Always in a notebook (the person owns the machine); in the served app only when the
    operator passed ``accelkit app --allow-probes``.
    """
    env = os.environ if environ is None else environ
    return not served(env) or env.get(ALLOW_PROBES_ENV, "") == "1"


def max_probe_seconds(environ=None):
    """Longest live sampling a person may ask for: :data:`MAX_PROBE_SECONDS` in the app, an hour elsewhere."""
    return MAX_PROBE_SECONDS if served(environ) else 3600.0
