"""Render the chapters for one scenario into a folder of HTML pages (papermill + nbconvert).

``build_report("examples/serve-70b-at-latency-target.yaml")`` runs every chapter with
papermill on the scenario (``static=True``: plain figures, no widgets), converts each
to HTML with the code hidden, and writes an index page that links them with the
scenario and the date, after the decision page a buyer signs (:mod:`accelkit.decision_page`;
``pdf=True`` also prints it to ``decision-summary.pdf``, one A4 page). Charts stay interactive (plotly.js is copied once into the
folder; nothing is fetched from the network). The ``accelkit report`` command and the
app's "download report" button call this function.
"""

from __future__ import annotations

import datetime as _dt
import glob
import os
import re
import shutil
import sys
import threading
from pathlib import Path

from . import i18n
from .i18n import N_, _
from .report_guard import ReportError, ReportInterrupted, _children, _Lock, _Signals, _stop_kernels
from .report_index import _decision_page, _index, _recommendation
from .scenario import Scenario, ScenarioError

__all__ = ["CHAPTERS", "ReportError", "ReportInterrupted", "build_report", "chapter_ids", "report_title"]

#: (id, notebook stem, title); the titles are English, translated where shown (``_(title)``)
CHAPTERS = [
    ("00", "00_catalogue", N_("The accelerator catalogue")),
    ("01", "01_demand", N_("Compute demand")),
    ("02", "02_bandwidth_roofline", N_("Memory bandwidth and the roofline")),
    ("03", "03_precision", N_("The cost of precision")),
    ("04", "04_ecosystem", N_("Software ecosystem")),
    ("05", "05_energy_tco", N_("Energy and total cost of ownership")),
    ("06", "06_training_cluster", N_("Training cluster")),
    ("07", "07_edge_inference", N_("Edge inference")),
    ("08", "08_local_probe", N_("This machine, measured")),
    ("09", "09_decision", N_("The decision")),
    ("10", "10_validation", N_("How far to trust these numbers")),
    ("11", "11_monitor", N_("What your hardware really does")),
]
_MARKER = ".accelkit-report"
#: a chapter whose kernel dies before its first reply is started again, this many tries in all
_KERNEL_START_TRIES = 3
#: what jupyter_client raises when the kernel process is gone before it answered kernel_info (or its heartbeat)
_NOT_STARTED = ("Kernel died before replying to kernel_info", "Kernel didn't respond to heartbeats")


def _kernel_did_not_start(exc):
    """Whether ``exc`` says a chapter's kernel died before it ran anything (then a new kernel may run it)."""
    return isinstance(exc, RuntimeError) and str(exc).startswith(_NOT_STARTED)


def chapter_ids():
    return [c[0] for c in CHAPTERS]


def _select(chapters):
    if not chapters:
        return list(CHAPTERS)
    chosen = []
    for item in chapters:
        key = str(item).strip().lower().removesuffix(".ipynb")
        match = [c for c in CHAPTERS if key in (c[0], c[1], c[1].split("_", 1)[1], c[0].lstrip("0") or "0")]
        if not match:
            names = ", ".join(f"{c[0]} ({c[1]})" for c in CHAPTERS)
            raise ReportError(_("unknown chapter {item}; chapters are {names}").format(item=repr(item), names=names),
                              exit_code=2)
        chosen.extend(m for m in match if m not in chosen)
    return sorted(chosen)


def _slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "scenario"


def _notebooks_dir():
    from .paths import notebooks_dir

    return notebooks_dir()


def _load_scenario(scenario):
    if isinstance(scenario, Scenario):
        return scenario
    try:
        return Scenario.load(scenario)
    except ScenarioError as exc:
        raise ReportError(_("bad scenario {path}: {error}").format(path=scenario, error=exc), exit_code=2) from exc


def _check_target(out, force):
    if out.exists() or out.is_symlink():
        if not force:
            raise ReportError(_("{path} exists; choose another --out or pass --force to replace it").format(path=out),
                              exit_code=2)
        if out.is_symlink() or not out.is_dir() or not (out / _MARKER).is_file():
            raise ReportError(_("{path} exists and is not an accelkit report; refusing to replace it even with --force")
                              .format(path=out), exit_code=2)


def _prepare_folder(out, force):
    """The work folder ``<out>.partial-PID`` (called under the lock: any other partial of ``out`` is stale)."""
    _check_target(out, force)
    for stale in out.parent.glob(glob.escape(out.name) + ".partial-*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = out.with_name(out.name + f".partial-{os.getpid()}")
    work.mkdir(parents=True)
    return work


def _swap_in(work, out):
    """Put ``work`` at ``out``. An existing ``out`` is exchanged atomically where the system
    can (Linux ``renameat2(RENAME_EXCHANGE)``), else moved aside first; the old one is removed."""
    if not (out.exists() or out.is_symlink()):
        work.rename(out)
        return
    if _exchange(work, out):
        shutil.rmtree(work, ignore_errors=True)  # now holds the old report
        return
    old = out.with_name(out.name + f".old-{os.getpid()}")
    out.rename(old)
    try:
        work.rename(out)
    except OSError:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a, b):
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0


def _html_of(notebook_path, title):
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.language_code = i18n.html_lang()  # <html lang="..."> of the page
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    nb = nbformat.read(notebook_path, as_version=4)
    body, _resources = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    # The lab template loads require.js and MathJax from a CDN. Reports work offline, and
    # require.js would capture plotly.min.js as an anonymous AMD module (no window.Plotly).
    return _CDN_SCRIPTS.sub("", body)


_CDN_SCRIPTS = re.compile(
    r'<script[^>]*src="https://cdnjs\.cloudflare\.com/ajax/libs/(?:require\.js|mathjax)/[^"]*"[^>]*>\s*</script>'
)


def report_title(scenario, source=None, title=None):
    """The report's title: ``title`` if given, else the scenario's own name, else (a scenario
    left with the default name) its file's stem."""
    from dataclasses import fields

    if title and str(title).strip():
        return str(title).strip()
    default = next(f.default for f in fields(Scenario) if f.name == "name")
    if scenario.name and scenario.name != default:
        return scenario.name
    if source is not None and not isinstance(source, Scenario):
        return Path(str(source)).stem
    return scenario.name


def build_report(scenario, out_dir=None, chapters=None, force=False, progress=True, timeout=900, workers=3,
                 notebooks_dir=None, measured_demand=None, title=None, pdf=False, lang=None):
    """Run the chapters on a scenario and write HTML pages plus an index.

    Chapters run in parallel threads, so no working directory is changed (papermill's
    ``cwd`` would chdir the whole process); kernels start in the caller's directory.

    Parameters
    ----------
    scenario : str, Path or Scenario
        A scenario file (.yaml/.json) or object.
    out_dir : str or Path, optional
        Output folder (default ``reports/<scenario name>``). An existing folder is
        replaced only with ``force=True`` and only if accelkit wrote it.
    chapters : list, optional
        Chapter ids or names (``"01"``, ``"demand"``, ``"01_demand"``); default all.
    force : bool
        Replace an existing report folder.
    progress : bool
        Show a progress bar.
    timeout : int
        Seconds allowed per notebook cell.
    workers : int
        Chapters run at once (each in its own kernel).
    notebooks_dir : str or Path, optional
        Where the chapter notebooks are (default: the ones shipped with accelkit).
    measured_demand : str or Path, optional
        What the person's GPUs do now: ``"example"``, a JSON file from ``accelkit monitor
        --json`` or an nvidia-smi CSV log. The scenario's time target (training) or request
        rate (serving) is set to that pace before any chapter runs
        (:func:`accelkit.monitor.demand.scenario_for_measured`), so every chapter and the
        decision size hardware for the work the cluster does; a CSV log is also what
        chapter 11 shows.
    title : str, optional
        The report's title (default: the scenario's name, or its file's stem when the
        scenario keeps the default name).
    pdf : bool
        Also write ``decision-summary.pdf``, the decision page on one A4 page, with
        Debian's chromium through Playwright (offline). Without chromium: exit code 2
        before any chapter runs.
    lang : str, optional
        The language of the report (``"en"``, ``"zh_CN"``; see :func:`accelkit.i18n.normalize_language`);
        default: the language now in use (:func:`accelkit.i18n.language`, i.e. ``ACCELKIT_LANG`` or the
        app visitor's). Every chapter runs in a kernel started with ``ACCELKIT_LANG`` set to it, each
        chapter's Markdown cells are replaced by their translation before it runs, and the index page
        is written in it.

    Returns
    -------
    Path
        The index page.

    Raises
    ------
    ReportError
        ``exit_code`` 2 for a bad scenario, chapter name or output folder; 1 when a
        chapter fails (the message names the chapter and the error).
    """
    try:
        lang = i18n.normalize_language(lang, field="lang") if lang is not None else i18n.language()
    except ValueError as exc:
        raise ReportError(str(exc), exit_code=2) from None
    with i18n.using(lang):
        return _build_report(scenario, out_dir, chapters, force, progress, timeout, workers, notebooks_dir,
                             measured_demand, title, pdf, lang)


def _build_report(scenario, out_dir, chapters, force, progress, timeout, workers, notebooks_dir, measured_demand,
                  title, pdf, lang):
    chosen = _select(chapters)
    scen = _load_scenario(scenario)
    heading = report_title(scen, scenario, title)
    if pdf:
        from .decision_page import PdfError, _playwright, chromium_path

        try:
            chromium_path()
            _playwright()
        except PdfError as exc:
            raise ReportError(str(exc), exit_code=2) from None
    measured_note, monitor_parameters = "", {}
    if measured_demand:
        from .monitor.demand import load_measured_demand, scenario_for_measured
        from .monitor.samples import MonitorError

        try:
            scen, measured_note = scenario_for_measured(scen, load_measured_demand(measured_demand))
        except (MonitorError, ValueError) as exc:
            raise ReportError(str(exc), exit_code=2) from None
        if Path(str(measured_demand)).suffix.lower() == ".csv":
            monitor_parameters = {"source": "nvidia-smi log", "log_path": str(Path(measured_demand).resolve()),
                                  "topology_path": ""}
    out = Path(out_dir) if out_dir else Path("reports") / _slug(heading)
    out = out.resolve()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        lock = _Lock(out).__enter__()
    except OSError as exc:
        raise ReportError(_cannot_write(out, exc), exit_code=2) from None
    try:
        with _Signals() as signals:
            return _build(scen, out, chosen, force, progress, timeout, workers, notebooks_dir, measured_note,
                          monitor_parameters, signals, heading, pdf, lang)
    finally:
        lock.__exit__(None, None, None)


def _cannot_write(out, exc):
    return _("cannot write the report to {path}: {error}").format(path=out, error=exc.strerror or exc)


def _translated_notebook(notebook, target, lang):
    """``notebook`` with every Markdown cell replaced by its translation into ``lang`` (the whole
    cell source is the msgid, :mod:`accelkit.i18n`), written to ``target``; a cell without a
    translation stays English."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    with i18n.using(lang):
        for cell in nb.cells:
            if cell.cell_type == "markdown" and cell.source.strip():
                cell.source = _(cell.source)
    nbformat.write(nb, target)
    return target


def _build(scen, out, chosen, force, progress, timeout, workers, notebooks_dir, measured_note, monitor_parameters,
           signals, heading=None, pdf=False, lang=i18n.DEFAULT_LANGUAGE):
    """The run itself, under the lock: everything is written to ``<out>.partial-PID``, which is
    removed on any failure or signal, and moved into place only when complete."""
    import papermill as pm
    from tqdm.auto import tqdm

    try:
        work = _prepare_folder(out, force)
    except OSError as exc:
        raise ReportError(_cannot_write(out, exc), exit_code=2) from None
    before = _children()
    old_env = os.environ.get("ACCELKIT_PLOTLYJS")
    old_lang = os.environ.get(i18n.LANG_ENV)
    pool = futures = None
    try:
        scenario_file = work / "scenario.json"
        scen.save(scenario_file)
        import plotly

        shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", work / "plotly.min.js")
        (work / "executed").mkdir()
        source = Path(notebooks_dir) if notebooks_dir else _notebooks_dir()
        os.environ["ACCELKIT_PLOTLYJS"] = "directory"
        os.environ[i18n.LANG_ENV] = lang  # the chapter kernels speak the report's language
        if lang != i18n.DEFAULT_LANGUAGE:
            (work / "translated").mkdir()
        done = []
        stopping = threading.Event()

        def run_one(chapter):
            cid, stem, title = chapter
            executed = work / "executed" / f"{stem}.ipynb"
            notebook = source / f"{stem}.ipynb"
            accepted = pm.inspect_notebook(str(notebook)) if notebook.exists() else {}
            if lang != i18n.DEFAULT_LANGUAGE and notebook.exists():
                notebook = _translated_notebook(notebook, work / "translated" / f"{stem}.ipynb", lang)
            given = {"scenario_path": str(scenario_file), "static": True,
                     **(monitor_parameters if cid == "11" else {})}
            parameters = {k: v for k, v in given.items() if k in accepted}
            try:
                for attempt in range(1, _KERNEL_START_TRIES + 1):
                    try:
                        pm.execute_notebook(
                            str(notebook), str(executed),
                            parameters=parameters,
                            kernel_name="python3", progress_bar=False, execution_timeout=timeout,
                            report_mode=True,
                        )
                        break
                    except RuntimeError as exc:
                        # a kernel that died before its first reply ran nothing of the chapter: start another
                        # (jupyter_client picks free ports, closes them and hands them to the kernel; any
                        # process may take one in between -- jupyter_client issue 487), unless the build
                        # is being stopped or this was the last try
                        if not _kernel_did_not_start(exc) or stopping.is_set():
                            raise
                        if attempt == _KERNEL_START_TRIES:
                            raise ReportError(_(
                                "chapter {id} ({name}): its kernel did not start in {tries} tries: {error}").format(
                                id=cid, name=stem, tries=_KERNEL_START_TRIES, error=exc)) from exc
            except pm.PapermillExecutionError as exc:
                raise ReportError(_("chapter {id} ({name}) failed: {error}").format(
                    id=cid, name=stem, error=f"{exc.ename}: {exc.evalue}")) from exc
            except FileNotFoundError as exc:
                raise ReportError(_("chapter {id} ({name}) is missing: {error}").format(id=cid, name=stem, error=exc)) \
                    from exc
            (work / f"{stem}.html").write_text(_html_of(executed, f"{cid} · {_(title)}"), encoding="utf-8")
            return chapter

        from concurrent.futures import ThreadPoolExecutor, as_completed

        # each chapter runs in its own kernel process: a few at a time use the cores
        pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(chosen))))
        futures = [pool.submit(run_one, c) for c in chosen]
        bar = tqdm(total=len(chosen), desc="accelkit report", unit="chapter", disable=not progress)
        for future in as_completed(futures):
            chapter = future.result()
            done.append(chapter)
            bar.set_postfix_str(chapter[1])
            bar.update(1)
        bar.close()
        done.sort()
        pool.shutdown(wait=True)
        shutil.rmtree(work / "translated", ignore_errors=True)  # the notebooks as run are in executed/
        now = _dt.datetime.now()
        when = (now.strftime("%Y-%m-%d %H:%M") if lang == i18n.DEFAULT_LANGUAGE
                else f"{i18n.format_date(now.date())} {now:%H:%M}")
        recommendation = " ".join(x for x in (measured_note, _recommendation(scen)) if x)
        summary, block = _decision_page(scen, heading)
        pdf_name = ""
        if pdf:
            if summary is None:
                raise ReportError(_("--pdf: the decision page could not be made for this scenario (see chapter 09)"),
                                  exit_code=1)
            from .decision_page import PdfError, write_pdf

            pdf_name = "decision-summary.pdf"
            try:
                write_pdf(summary, work / pdf_name)
            except PdfError as exc:
                raise ReportError(str(exc), exit_code=2) from None
        (work / "index.html").write_text(_index(scen, done, when, recommendation, heading, block, pdf_name),
                                         encoding="utf-8")
        (work / _MARKER).write_text(f"accelkit report {when}\n", encoding="utf-8")
        signals.cleaning()  # the move into place is not interrupted half-way
        _check_target(out, force)  # something else may have put a folder there meanwhile
        _swap_in(work, out)
    except BaseException as exc:
        signals.cleaning()
        if pool is not None:
            from concurrent.futures import wait

            stopping.set()  # no chapter starts another kernel once the build stops
            pool.shutdown(wait=False, cancel_futures=True)
            # the chapters still running would be thrown away: end their kernels now, then let
            # their threads finish before the folder goes
            _stop_kernels(before)
            wait(futures or [], timeout=60)
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(exc, OSError):
            raise ReportError(_cannot_write(out, exc), exit_code=2) from None
        raise
    finally:
        if old_env is None:
            os.environ.pop("ACCELKIT_PLOTLYJS", None)
        else:
            os.environ["ACCELKIT_PLOTLYJS"] = old_env
        if old_lang is None:
            os.environ.pop(i18n.LANG_ENV, None)
        else:
            os.environ[i18n.LANG_ENV] = old_lang
    return out / "index.html"
