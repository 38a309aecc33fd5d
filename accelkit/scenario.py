"""The scenario a person builds up across the chapters.

A :class:`Scenario` holds what has been decided so far -- workload, model, data
size, batch, precision, targets, budget, power envelope, deployment, must-have
frameworks -- and travels between chapters as a JSON or YAML file (or, in the
app, as one shared object). Every field is checked when it is set or loaded; a
bad value raises :class:`ScenarioError` naming the field, the value and what was
expected. Files written by accelkit carry a marker; a file without it (a user's
own) is never overwritten.
"""

from __future__ import annotations

import copy
import functools
import json
import sys
import weakref
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from urllib.parse import parse_qs

from . import units
from ._validate import suggest
from .errors import ScenarioError, short_repr as _short
from .i18n import N_
from .vocabulary import FRAMEWORKS, WORKLOADS
from .scenario_fields import _choice, _device_names, _model_name, _num, _stack_name, _text, _text_list, _vendor_names, _weights

__all__ = ["Scenario", "ScenarioError", "FIELD_HELP", "load", "resolve", "WORKLOADS", "DEPLOYMENTS", "PRECISIONS",
           "MARKETS", "CLOUD_PRICINGS", "FINETUNE_METHODS"]

#: plausibility bounds that catch a typo: counts up to a million, rates up to a billion per second
_MAX_COUNT, _MAX_RATE = 1e6, 1e9
DEPLOYMENTS = ("cloud", "on-prem", "edge")
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
SEGMENTS = ("datacenter", "workstation", "edge", "consumer")
MARKETS = ("global", "china")
CLOUD_PRICINGS = ("on-demand", "committed-1y", "committed-3y", "lowest")
#: how a fine-tuning run trains: every weight (full), low-rank adapters on frozen 16-bit weights (lora, Hu et al.
#: 2021, arXiv:2106.09685) or on frozen 4-bit NF4 weights (qlora, Dettmers et al. 2023, arXiv:2305.14314)
FINETUNE_METHODS = ("full", "lora", "qlora")
_MARKER = "accelkit-scenario"
_BOOL_FIELDS = ("custom_cuda_kernels", "search_configurations", "allow_lower_precision", "exclude_unknown")


#: the largest scenario file read
MAX_SCENARIO_BYTES = 2**20
def _spec(default, check, help_text, unit=""):
    return field(default=default, metadata={"check": check, "help": help_text, "unit": unit})


@dataclass
class Scenario:
    """What a person wants to run, and under which constraints.

    Units are in the field names or in :data:`FIELD_HELP`; time targets are in the
    units people use (days, milliseconds) and converted by the formulas' callers.
    """

    name: str = _spec("my scenario", _text, N_("A name for this scenario"))
    workload: str = _spec("training", _choice(WORKLOADS), N_("training, fine-tuning or inference"))
    model: str = _spec("Llama-2 7B", _model_name, N_("A model preset from data/models.csv, or 'custom'"))
    params: float | None = _spec(None, _num(low=1, allow_none=True), N_("Parameters of a custom model"), "count")
    n_layers: int | None = _spec(None, _num(low=1, high=10000, integer=True, allow_none=True),
                                 N_("Layers of a custom decoder (empty: inferred from the nearest preset)"), "count")
    d_model: int | None = _spec(None, _num(low=1, high=1e6, integer=True, allow_none=True),
                                N_("Hidden width of a custom decoder (empty: inferred from the nearest preset)"), "count")
    tokens: float = _spec(2e10, _num(low=1), N_("Training tokens (or samples) to process"), "count")
    batch_size: int = _spec(16, _num(low=1, high=1e7, integer=True),
                            N_("Sequences held in memory at once across the cluster (training) or decoded together (inference)"),
                            "count")
    seq_len: int = _spec(2048, _num(low=1, high=1e7, integer=True), N_("Tokens per sequence"), "tokens")
    output_tokens: int = _spec(256, _num(low=1, high=_MAX_COUNT, integer=True), N_("Tokens generated per request (inference)"), "tokens")
    precision: str = _spec("bf16", _choice(PRECISIONS), N_("Compute precision"))
    utilization: float | None = _spec(None, _num(low=0, high=1, low_open=True, allow_none=True),
                                      N_("Your own MFU (fraction of the dense peak; accelkit probe --train measures it) instead of the projected one; "
                                      "empty: projected by the engine"), "0-1")
    time_target_days: float = _spec(30.0, _num(low=0, high=3650, low_open=True), N_("Finish training within"), "days")
    latency_target_ms: float = _spec(100.0, _num(low=0, high=1e7, low_open=True),
                                     N_("Time per output token target (inference, median)"), "ms")
    ttft_target_ms: float | None = _spec(None, _num(low=0, high=1e7, low_open=True, allow_none=True),
                                         N_("Time to first token target (LLM serving, median); empty: none"), "ms")
    requests_per_s: float = _spec(1.0, _num(low=0, high=_MAX_RATE, low_open=True), N_("Inference requests per second to serve"), "1/s")
    budget_usd: float | None = _spec(None, _num(low=0, allow_none=True, low_open=True), N_("Total budget over the horizon"), "USD")
    power_envelope_w: float | None = _spec(None, _num(low=0, allow_none=True, low_open=True), N_("Power available per device"), "W")
    deployment: str = _spec("cloud", _choice(DEPLOYMENTS), N_("cloud, on-prem or edge"))
    segments: list = field(
        default_factory=list, metadata={"check": _text_list(SEGMENTS), "help": N_("Allowed segments (empty: all)"), "unit": ""}
    )
    frameworks: list = field(
        default_factory=lambda: ["pytorch"],
        metadata={"check": _text_list(FRAMEWORKS), "help": N_("Frameworks that must work"), "unit": ""},
    )
    stack: str | None = _spec(None, _stack_name, N_("Software stack the inference figures assume (data/stacks.csv: tensorrt, "
                              "pytorch-eager, tensorflow, tensorflow-xla, vendor-compiler for image models and encoders; tensorrt-llm, "
                              "vllm, sglang, vendor-serving for LLMs); empty: each device's vendor default"))
    custom_cuda_kernels: bool = _spec(False, None, N_("The team owns custom CUDA kernels"))
    search_configurations: bool = _spec(True, None, N_("Search each device's best configuration (ZeRO stage, "
                                        "tensor parallel, batch, precision) instead of taking the scenario's as given"))
    allow_lower_precision: bool = _spec(False, None, N_("Let the search try precisions below the scenario's "
                                        "(fp8, int8, int4 weights): faster, with a quality risk to check"))
    exclude_unknown: bool = _spec(False, None, N_("Exclude devices with an unknown criterion (no price) instead of "
                                  "scoring them on the criteria that are known"))
    devices: list = field(
        default_factory=list, metadata={"check": _device_names, "help": N_("Devices shortlisted so far"), "unit": ""}
    )
    vendors: list = field(
        default_factory=list, metadata={"check": _vendor_names, "help": N_("Only these vendors (empty: every vendor)"), "unit": ""}
    )
    exclude_vendors: list = field(
        default_factory=list, metadata={"check": _vendor_names, "help": N_("Never these vendors"), "unit": ""}
    )
    market: str = _spec("global", _choice(MARKETS), N_("Where the hardware is bought: global, or china (US export "
                        "controls applied, as data/device_facts.csv records them)"))
    cloud_pricing: str = _spec("on-demand", _choice(CLOUD_PRICINGS), N_("Cloud price policy: on-demand (median across "
                               "providers), committed-1y, committed-3y, or lowest (the single cheapest listing)"))
    providers: list = field(
        default_factory=list, metadata={"check": _text_list(), "help": N_("Cloud providers to price from (empty: every "
                                        "provider in data/cloud_prices.csv)"), "unit": ""}
    )
    target_headroom: float = _spec(0.25, _num(low=0, high=10), N_("Speed beyond the target that still counts in the "
                                   "ranking (0.25: up to 25 % faster than needed); more is not rewarded"), "fraction")
    n_devices: int = _spec(8, _num(low=1, high=_MAX_COUNT, integer=True), N_("Devices in the cluster (the most the "
                           "decision may use, for every workload)"), "count")
    zero_stage: int = _spec(1, _num(low=0, high=3, integer=True), N_("ZeRO stage for training memory (0-3)"), "")
    finetune_method: str = _spec("full", _choice(FINETUNE_METHODS), N_("Fine-tuning method (workload fine-tuning): "
                                 "full (every weight trained), lora (low-rank adapters on frozen 16-bit weights) or "
                                 "qlora (adapters on frozen 4-bit NF4 weights, paged optimizer)"))
    lora_rank: int = _spec(16, _num(low=1, high=65536, integer=True), N_("Rank r of the LoRA / QLoRA adapters (one pair "
                           "of r-wide matrices on every linear layer)"), "")
    horizon_months: int = _spec(36, _num(low=1, high=600, integer=True), N_("TCO horizon"), "months")
    hours_per_day: float = _spec(24.0, _num(low=0, high=24, low_open=True), N_("Hours per day in use"), "h")
    electricity_usd_per_kwh: float = _spec(0.15, _num(low=0, high=10), N_("Electricity tariff"), "USD/kWh")
    pue: float = _spec(1.4, _num(low=1, high=5), N_("Power usage effectiveness of the hall"), "")
    streams: int = _spec(10, _num(low=1, high=_MAX_COUNT, integer=True), N_("Video streams (edge)"), "count")
    frames_per_s: float = _spec(30.0, _num(low=0, high=1e4, low_open=True), N_("Frames per second per stream (edge)"), "1/s")
    weights: dict = field(
        default_factory=dict,
        metadata={"check": _weights, "help": N_("Ranking weights per criterion (0-100)"), "unit": ""},
    )

    def __post_init__(self):
        for f in fields(self):
            self._set_checked(f, getattr(self, f.name))

    def _set_checked(self, f, value):
        check = f.metadata.get("check")
        if f.name in _BOOL_FIELDS:
            if not isinstance(value, bool):
                if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
                    value = value.lower() in ("true", "yes", "1")
                else:
                    raise ScenarioError(f.name, f"expected true or false, got {_short(value)}")
        elif check is not None:
            value = check(f.name, value)
        object.__setattr__(self, f.name, value)

    def __setattr__(self, name, value):
        spec = _field_specs()
        if name not in spec:
            hint = suggest(name, list(spec))
            raise ScenarioError(name, "no such field" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
        watchers = _WATCHERS.get(id(self))
        if not watchers:
            self._set_checked(spec[name], value)
            return
        before = getattr(self, name)
        self._set_checked(spec[name], value)
        if getattr(self, name) != before:
            _changed(self, name)

    # --- change signal ----------------------------------------------------------------

    def observe(self, callback):
        """Call ``callback(scenario, names)`` after a field of this scenario changes value.

        ``names`` is the list of fields that changed (one per assignment; one call for all
        of an :meth:`update`). The app keeps its copy-link current this way, whichever tab
        changed the shared scenario. Copies (:meth:`copy`) and loaded scenarios start with
        no observers. Returns ``callback``; :meth:`unobserve` removes it.
        """
        key = id(self)
        if key not in _WATCHERS:
            _WATCHERS[key] = []
            weakref.finalize(self, _WATCHERS.pop, key, None)
        # a bound method is held weakly: an observer (the app) that is dropped is not kept alive by its scenario
        ref = weakref.WeakMethod(callback) if hasattr(callback, "__self__") else (lambda: callback)
        _WATCHERS[key].append(ref)
        return callback

    def unobserve(self, callback):
        """Stop calling ``callback`` on changes (no error if it was not observing)."""
        watchers = _WATCHERS.get(id(self), [])
        watchers[:] = [ref for ref in watchers if ref() is not None and ref() != callback]

    # --- conversions ----------------------------------------------------------------

    def to_dict(self):
        """Plain dict of every field (JSON/YAML-ready)."""
        return asdict(self)

    @classmethod
    def field_names(cls):
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, data, source="scenario"):
        """Build from a mapping; unknown keys raise :class:`ScenarioError` with a suggestion."""
        if not isinstance(data, dict):
            raise ScenarioError("(file)", f"{source}: expected a mapping of field: value, got {type(data).__name__}")
        if any(not isinstance(k, str) for k in data):
            bad = next(k for k in data if not isinstance(k, str))
            raise ScenarioError(_short(bad), f"{source}: field names are text; got {_short(bad)}")
        data = {k: v for k, v in data.items() if k != _MARKER}
        known = cls.field_names()
        for key in data:
            if key not in known:
                hint = suggest(str(key)[:100], known)
                raise ScenarioError(
                    str(key), f"{source}: no such field" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                )
        return cls(**data)

    def update(self, **changes):
        """Set several fields at once (each checked); returns ``self``.

        Observers (:meth:`observe`) hear of it once, with every field that changed.
        """
        key = id(self)
        if not _WATCHERS.get(key):
            for name, value in changes.items():
                setattr(self, name, value)
            return self
        outer = key not in _HELD  # an update inside an observer's update is told with the outer one
        if outer:
            _HELD[key] = []
        try:
            for name, value in changes.items():
                setattr(self, name, value)
        finally:
            held = _HELD.pop(key) if outer else None
        if held:
            _changed(self, held)
        return self

    def copy(self):
        """An independent copy. Every field was checked when it was set, so the copy
        takes the values as they are (lists and dicts copied) instead of checking them
        again: the configuration search copies a scenario a dozen times per redraw."""
        twin = object.__new__(type(self))
        for name, value in self.__dict__.items():
            object.__setattr__(twin, name, copy.deepcopy(value) if isinstance(value, (list, dict)) else value)
        return twin

    @classmethod
    def load(cls, path):
        """Read a scenario from a ``.json``, ``.yaml`` or ``.yml`` file."""
        path = Path(path)
        if not path.exists():
            raise ScenarioError("(file)", f"file not found: {path}")
        suffix = path.suffix.lower()
        if suffix not in (".json", ".yaml", ".yml"):
            raise ScenarioError("(file)", f"{path.name}: expected a .json, .yaml or .yml file")
        try:
            if not path.is_file():
                raise ScenarioError("(file)", f"{path.name} is not a regular file")
            with open(path, "rb") as handle:
                raw = handle.read(MAX_SCENARIO_BYTES + 1)
        except OSError as exc:
            raise ScenarioError("(file)", f"cannot read {path.name} ({exc.strerror or exc})") from None
        return cls.from_bytes(raw, name=path.name, suffix=suffix)

    @classmethod
    def from_bytes(cls, raw, name="scenario.yaml", suffix=None):
        """A scenario from the bytes of a ``.json`` / ``.yaml`` file (an upload, or :meth:`load`).

        At most :data:`MAX_SCENARIO_BYTES`, UTF-8; YAML anchors and aliases are refused
        (a few hundred bytes of aliases expand to gigabytes), so is anything but plain
        mappings, lists, text, numbers and booleans. Every problem is a :class:`ScenarioError`.
        """
        suffix = (suffix or Path(name).suffix).lower()
        if len(raw) > MAX_SCENARIO_BYTES:
            raise ScenarioError("(file)", f"{name} is larger than {MAX_SCENARIO_BYTES // units.KIB} KiB; a scenario is a "
                                "few dozen lines")
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ScenarioError("(file)", f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
        kind = "JSON" if suffix == ".json" else "YAML"
        try:
            if suffix == ".json":
                data = json.loads(text)
            elif suffix in (".yaml", ".yml"):
                data = _safe_yaml(text)
            else:
                raise ScenarioError("(file)", f"{name}: expected a .json, .yaml or .yml file")
            if data is None and kind == "YAML":
                data = {}
        except ScenarioError:
            raise
        except RecursionError:
            raise ScenarioError("(file)", f"{name} is not a usable {kind} scenario: nested too deeply") from None
        except Exception as exc:  # json's and yaml's errors (yaml imported lazily)
            raise ScenarioError("(file)", f"{name} is not valid {kind}: {str(exc)[:200]}") from None
        return cls.from_dict(data, source=name)

    def save(self, path, overwrite=False):
        """Write the scenario as JSON or YAML (by suffix).

        An existing file is replaced only if accelkit wrote it (it carries the
        ``accelkit-scenario`` marker) or ``overwrite=True``; a user's own file is
        never silently replaced.
        """
        path = Path(path)
        if path.exists() and not overwrite and not _written_by_accelkit(path):
            raise FileExistsError(
                f"{path} exists and was not written by accelkit; choose another file name "
                "or pass overwrite=True"
            )
        data = {_MARKER: 1, **self.to_dict()}
        suffix = path.suffix.lower()
        if suffix == ".json":
            text = json.dumps(data, indent=2) + "\n"
        elif suffix in (".yaml", ".yml"):
            import yaml

            text = yaml.safe_dump(data, sort_keys=False)
        else:
            raise ScenarioError("(file)", f"{path.name}: expected a .json, .yaml or .yml file name")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def from_query_string(cls, query, base=None):
        """Apply URL query parameters (``?model=Llama-2+70B&batch_size=8``) to a scenario.

        Lists are comma-separated (``devices=H100 SXM,MI300X``) or a JSON list (``["a,b"]``,
        for names holding a comma); mappings (``weights``) are JSON. An empty value
        (``budget_usd=``) empties a field that may be empty -- None, an empty list or
        mapping -- and is ignored elsewhere. Unknown names raise :class:`ScenarioError`.
        :meth:`to_query_string` writes what this reads: every field round-trips.
        """
        scenario = (base or cls()).copy()
        parsed = parse_qs(query.lstrip("?"), keep_blank_values=True)
        known = {f.name: f for f in fields(cls)}
        for key, values in parsed.items():
            if key not in known:
                hint = suggest(key[:100], list(known))
                raise ScenarioError(key, "no such field" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
            value = values[-1]
            current = getattr(scenario, key)
            if value == "":
                if isinstance(current, (list, dict)) or "None" in str(known[key].type):
                    setattr(scenario, key, type(current)() if isinstance(current, (list, dict)) else None)
                continue
            if known[key].type in ("list",) or isinstance(current, list):
                if value.startswith("["):
                    try:
                        value = json.loads(value)
                    except (ValueError, RecursionError):
                        raise ScenarioError(key, f"expected names separated by commas or a JSON list, got "
                                            f"{_short(value)}") from None
                setattr(scenario, key, value)
            elif isinstance(getattr(scenario, key), dict):
                try:
                    setattr(scenario, key, json.loads(value))
                except (ValueError, RecursionError):
                    if isinstance(sys.exc_info()[1], ScenarioError):
                        raise
                    raise ScenarioError(key, f"expected a JSON mapping such as {{\"time\": 2}}, got "
                                        f"{_short(value)}") from None
            else:
                setattr(scenario, key, value)
        return scenario

    def to_query_string(self, keys=None):
        """URL query string of the given fields (default: every field differing from defaults).

        ``keys="all"`` writes every field (the app's copy-link: a link that reopens the same
        numbers even after a default changes). None is written empty, lists comma-separated
        (JSON when a name holds a comma), mappings as JSON; :meth:`from_query_string` reads
        it back to an equal scenario.
        """
        from urllib.parse import urlencode

        if keys == "all":
            keys = self.field_names()
        default = Scenario()
        out = {}
        for f in fields(self):
            if keys is not None and f.name not in keys:
                continue
            value = getattr(self, f.name)
            if keys is None and value == getattr(default, f.name):
                continue
            if value is None:
                value = ""
            elif isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, list):
                joined = any("," in v or ";" in v for v in value)
                value = json.dumps(value, ensure_ascii=False, separators=(",", ":")) if joined else ",".join(value)
            elif isinstance(value, dict):
                value = json.dumps(value, separators=(",", ":")) if value else ""
            elif isinstance(value, float):
                value = repr(value)
            out[f.name] = value
        return urlencode(out)


#: id(scenario) -> callbacks observing it (kept outside the instance: copies, pickles and
#: ``asdict`` never carry them; an entry goes with its scenario, by weakref.finalize)
_WATCHERS = {}
#: id(scenario) -> fields changed so far inside an :meth:`Scenario.update` (told once, at its end)
_HELD = {}


def _changed(scenario, names):
    key = id(scenario)
    names = [names] if isinstance(names, str) else list(names)
    if key in _HELD:
        _HELD[key].extend(n for n in names if n not in _HELD[key])
        return
    for ref in list(_WATCHERS.get(key, ())):
        callback = ref()
        if callback is not None:
            callback(scenario, names)


@functools.cache
def _field_specs():
    """Field name -> dataclass field of :class:`Scenario` (built once: every assignment looks it up)."""
    return {f.name: f for f in fields(Scenario)}


def _safe_yaml(text):
    """``yaml.safe_load`` without anchors or aliases (refused: they expand without limit)."""
    import yaml

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                raise ScenarioError("(file)", f"YAML anchors and aliases (&name, *name) are not accepted; line "
                                    f"{mark.line + 1}, column {mark.column + 1}: write the value out")
            return super().compose_node(parent, index)

    return yaml.load(text, Loader=_NoAliases)  # noqa: S506 (a SafeLoader subclass)


def _written_by_accelkit(path):
    try:
        head = Path(path).read_text(encoding="utf-8")[:200]
    except OSError:
        return False
    return _MARKER in head


def load(path):
    """Shorthand for :meth:`Scenario.load`."""
    return Scenario.load(path)


#: field name -> (help text, unit); the help texts are marked for translation: show them as ``_(text)``
FIELD_HELP = {f.name: (f.metadata.get("help", ""), f.metadata.get("unit", "")) for f in fields(Scenario)}


def resolve(path="", query_string=None, **overrides):
    """The scenario a chapter starts from: file, then URL query, then explicit values.

    Parameters
    ----------
    path : str or Path, optional
        A scenario file saved by an earlier chapter (or written by hand); ``""``
        starts from the defaults.
    query_string : str, optional
        URL query parameters; by default the ``QUERY_STRING`` environment variable,
        which Voilà sets in the kernel, so a shared link reproduces a view.
    **overrides
        Field values from a notebook's parameters cell; ``None`` keeps the
        scenario's value.

    Returns
    -------
    Scenario
    """
    import os

    scenario = Scenario.load(path) if path else Scenario()
    if query_string is None:
        query_string = os.environ.get("QUERY_STRING", "")
    if query_string:
        scenario = Scenario.from_query_string(query_string, base=scenario)
    scenario.update(**{k: v for k, v in overrides.items() if v is not None})
    return scenario
