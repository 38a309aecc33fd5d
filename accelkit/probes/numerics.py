"""Speed and error of lower precision against fp32, on two small models built in code.

:func:`precision_probe` runs an MLP and a pre-norm transformer block (fixed seed,
nothing downloaded) in fp32, bf16/fp16 autocast and int8 dynamic quantisation:
time per batch [s] and output error against fp32 (max absolute, relative L2,
cosine; dimensionless, unit "1"). :func:`accelkit.probes.precision_table` pivots it.

References
----------
- P. Micikevicius et al., *Mixed Precision Training*, ICLR 2018 (why fp32
  accumulation keeps the error of 16-bit formats small).
- PyTorch documentation, *Automatic Mixed Precision* (``torch.autocast``) and
  ``torch.ao.quantization.quantize_dynamic``.
"""

from __future__ import annotations

import copy
import statistics
import warnings

from ..local.devices import import_torch, resolve_device
from ._base import _cleanup, _failure_note, _finish, _row, _settings, _Skipped
from .results import PRECISION_MODES
from .timing import _Float32Precision, measure_seconds

__all__ = ["BF16_REL_L2_BOUND", "precision_probe"]

#: documented upper bound of the relative L2 error of bf16 autocast against fp32
#: for the precision probe's models. bf16 keeps 8 significant bits (unit roundoff
#: u = 2**-8 ≈ 3.9e-3); autocast rounds inputs and weights to bf16 and accumulates
#: in fp32, so each layer adds an error of a few u. Measured here: ~4e-3 (MLP) and
#: ~6e-3 (transformer block); the bound leaves room for other CPUs and GPUs.
BF16_REL_L2_BOUND = 0.05


def _mlp(torch, d, h):
    nn = torch.nn
    return nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d))


def _transformer_block(torch, d, heads, ff):
    nn = torch.nn

    class Block(nn.Module):
        """Pre-norm transformer block: x + attn(ln(x)); x + mlp(ln(x))."""

        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

        def forward(self, x):
            h = self.norm1(x)
            a, _ = self.attn(h, h, h, need_weights=False)
            x = x + a
            return x + self.mlp(self.norm2(x))

    return Block()


def _models(torch, settings, seed):
    batch, d, h = settings["mlp"]
    b, s, dm, heads, ff = settings["block"]
    torch.manual_seed(seed)
    mlp = _mlp(torch, d, h).eval()
    block = _transformer_block(torch, dm, heads, ff).eval()
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    return [
        ("mlp", f"mlp {batch}x{d}-{h}-{d}", mlp, torch.randn(batch, d, generator=gen)),
        ("transformer", f"transformer {b}x{s}x{dm} h{heads} ff{ff}", block, torch.randn(b, s, dm, generator=gen)),
    ]


def _error_metrics(torch, out, ref):
    out, ref = out.detach().double().flatten().cpu(), ref.detach().double().flatten().cpu()
    diff = out - ref
    return {
        "max_abs_error": float(diff.abs().max()),
        "rel_l2_error": float(diff.norm() / ref.norm()),
        "cosine": float(torch.dot(out, ref) / (out.norm() * ref.norm())),
    }


def _precision_rows(torch, device, name, label, model, x, mode, settings):
    """Rows for one (model, mode): time per batch [s] and three error figures."""
    base = model.to(device)
    xd = x.to(device)
    with torch.no_grad(), _Float32Precision(torch, "highest"):
        ref = base(xd).float()
        if mode == "fp32":
            run, note = (lambda: base(xd)), "fp32 (reference)"
        elif mode in ("bf16", "fp16"):
            if mode == "fp16" and device.type == "cpu":
                raise _Skipped("not run: fp16 autocast is a GPU mode here (CPUs without fp16 matrix units "
                               "emulate it); bf16 autocast and int8 cover the CPU")
            if not torch.amp.is_autocast_available(device.type):
                raise _Skipped(f"not supported: torch has no autocast for {device.type}")
            tdt = torch.bfloat16 if mode == "bf16" else torch.float16

            def run():
                with torch.autocast(device_type=device.type, dtype=tdt):
                    return base(xd)

            note = f"torch.autocast({device.type}, {tdt}): matmuls in {mode}, accumulation and norms in fp32"
        elif mode == "int8":
            if device.type != "cpu":
                raise _Skipped("not run: torch's dynamic int8 quantisation (torch.ao) runs on the CPU only")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated in favour of torchao
                from torch.ao.quantization import quantize_dynamic

                qmodel = quantize_dynamic(copy.deepcopy(base), {torch.nn.Linear}, dtype=torch.qint8)
            run = lambda: qmodel(xd)  # noqa: E731
            note = ("torch.ao.quantization.quantize_dynamic: nn.Linear weights int8 (per tensor), activations "
                    "quantised per batch; attention projections stay fp32")
        else:
            raise ValueError(f"mode must be one of {', '.join(PRECISION_MODES)}; got {mode!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = run()
            metrics = _error_metrics(torch, out.float(), ref)
            times = measure_seconds(run, device, warmup=settings["warmup"], min_repeats=3,
                                    max_repeats=settings["max_repeats"], budget_s=settings["budget_s"])
    seconds = statistics.median(times)
    note += f"; median of {len(times)} batches"
    return [
        _row("precision_time", mode, label, seconds, "s", note),
        _row("precision_max_abs_error", mode, label, metrics["max_abs_error"], "1", "max |y - y_fp32|"),
        _row("precision_rel_l2_error", mode, label, metrics["rel_l2_error"], "1", "||y - y_fp32|| / ||y_fp32||"),
        _row("precision_cosine", mode, label, metrics["cosine"], "1", "cosine similarity of y and y_fp32"),
    ]


def precision_probe(device=None, quick=True, modes=PRECISION_MODES, seed=0):
    """Speed and error of lower precision on two small models, against fp32.

    Models, built in code with a fixed seed (nothing downloaded): an MLP
    (Linear-GELU-Linear) and a pre-norm transformer block (LayerNorm, 4-8 head
    self-attention, GELU MLP), sizes scaled to the device and mode. Modes:
    ``fp32`` (reference, TF32 off), ``bf16`` autocast (CPU and GPU), ``fp16``
    autocast (GPU), ``int8`` dynamic quantisation of the Linear layers
    (``torch.ao.quantization.quantize_dynamic``, CPU). For each: time per batch in
    seconds (median, as :func:`measure_seconds`) and the output error against fp32
    -- max absolute, relative L2 (``||y - y32|| / ||y32||``) and cosine similarity
    (dimensionless, unit "1"). A mode that cannot run gives NaN rows with the
    reason. bf16's relative L2 error stays below :data:`BF16_REL_L2_BOUND`
    (Micikevicius et al., *Mixed Precision Training*, 2018, for why fp32
    accumulation keeps it small).

    Returns a DataFrame with :data:`COLUMNS`; :func:`precision_table` pivots it.
    """
    torch = import_torch()
    device = resolve_device(device)
    settings = _settings(device, quick)
    rows = []
    for name, label, model, x in _models(torch, settings, seed):
        for mode in modes:
            rows += _precision_one(torch, device, name, label, model, x, mode, settings)
    return _finish(rows, device)


def _precision_one(torch, device, name, label, model, x, mode, settings):
    try:
        return _precision_rows(torch, device, name, label, model, x, mode, settings)
    except Exception as exc:
        _cleanup(torch, device)
        note = _failure_note(exc)
        return [_row(p, mode, label, float("nan"), u, note) for p, u in
                (("precision_time", "s"), ("precision_max_abs_error", "1"),
                 ("precision_rel_l2_error", "1"), ("precision_cosine", "1"))]
