"""Number formats: bits, range, precision, and which devices run them fast.

References
----------
.. [1] IEEE Std 754-2019, "IEEE Standard for Floating-Point Arithmetic"
   (binary64, binary32, binary16).
.. [2] P. Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433
   (2022), table 1: E4M3 max 448, E5M2 max 57344.
.. [3] NVIDIA, "TensorFloat-32 in the A100 GPU Accelerates AI Training, HPC up to
   20x" (2020): TF32 = 8 exponent bits, 10 mantissa bits.
.. [4] Google Cloud, "BFloat16: The secret to high performance on Cloud TPUs"
   (2019): 8 exponent bits, 7 mantissa bits.
.. [5] P. Micikevicius et al., "Mixed Precision Training", ICLR 2018,
   arXiv:1710.03740: fp32 master weights, loss scaling, fp32 accumulation.
.. [6] B. Jacob et al., "Quantization and Training of Neural Networks for
   Efficient Integer-Arithmetic-Only Inference", CVPR 2018, arXiv:1712.05877.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from . import units
from ._validate import check_choice, check_number
from .catalog import PRECISION_COLUMNS, peak_flops
from .i18n import N_
from .memory import BYTES_PER_PARAM, weight_bytes

__all__ = [
    "FORMATS",
    "formats_table",
    "speedup_over_fp32",
    "fast_devices",
    "memory_saved_fraction",
    "guidance_table",
    "SEED_CT_EXAMPLE",
    "round_to",
    "underflow_fraction",
    "overflow_fraction",
    "loss_scaling_demo",
    "precision_table",
]


def _float_format(name, bits, exp, man, max_value, note):
    # machine epsilon 2**-mantissa bits; smallest normal 2**(1 - bias)
    bias = 2 ** (exp - 1) - 1
    return {
        "format": name,
        "bits": bits,
        "exponent_bits": exp,
        "mantissa_bits": man,
        "max": max_value,
        "epsilon": 2.0 ** (-man),
        "smallest_normal": 2.0 ** (1 - bias),
        "decimal_digits": round(float(np.log10(2.0 ** (man + 1))), 1),
        "note": note,
    }


#: one row per format; values from [1]-[4] (epsilon = 2**-mantissa_bits)
FORMATS = pd.DataFrame(
    [
        _float_format("fp64", 64, 11, 52, float(np.finfo(np.float64).max), N_("IEEE binary64 [1]")),
        _float_format("fp32", 32, 8, 23, float(np.finfo(np.float32).max), N_("IEEE binary32 [1]")),
        _float_format("tf32", 19, 8, 10, float(np.finfo(np.float32).max) * (1 - 2**-11) / (1 - 2**-24),
                      N_("NVIDIA tensor-core input format, fp32 range, fp16 precision; stored as fp32 [3]")),
        _float_format("bf16", 16, 8, 7, 3.3895313892515355e38, N_("bfloat16: fp32 range, 8 significant bits [4]")),
        _float_format("fp16", 16, 5, 10, 65504.0, N_("IEEE binary16; small range, needs loss scaling in training [1], [5]")),
        _float_format("fp8", 8, 4, 3, 448.0, N_("E4M3 (forward pass); E5M2 (max 57344) is used for gradients [2]")),
        {
            "format": "int8", "bits": 8, "exponent_bits": 0, "mantissa_bits": 7, "max": 127.0,
            "epsilon": 1.0, "smallest_normal": 1.0, "decimal_digits": 2.1,
            "note": N_("integer with a per-tensor or per-channel scale; needs calibration [6]"),
        },
        {
            "format": "int4", "bits": 4, "exponent_bits": 0, "mantissa_bits": 3, "max": 7.0,
            "epsilon": 1.0, "smallest_normal": 1.0, "decimal_digits": 0.9,
            "note": N_("weight-only quantisation of LLMs (e.g. GPTQ/AWQ), per-group scales"),
        },
    ]
).set_index("format")
FORMATS["bytes"] = pd.Series(BYTES_PER_PARAM)


def formats_table():
    """The formats as a DataFrame (a copy), one row per format."""
    return FORMATS.reset_index()


def speedup_over_fp32(catalog, precision):
    """Peak at ``precision`` divided by the FP32 peak, per device.

    NaN where either figure is not published. On NVIDIA parts from Ampere on,
    "fp32" here is the SIMT (non-tensor) rate; frameworks that enable TF32 run
    fp32 matrix products at the ``tf32`` rate.
    """
    return peak_flops(catalog, precision) / peak_flops(catalog, "fp32")


def fast_devices(catalog, precision, min_speedup=2.0):
    """Names of devices whose published ``precision`` peak is ≥ ``min_speedup`` × FP32.

    Devices without an FP32 figure but with a figure at ``precision`` count as
    running it (the vendor lists it as a supported rate).
    """
    check_choice("precision", precision, PRECISION_COLUMNS)
    peak = peak_flops(catalog, precision)
    ratio = speedup_over_fp32(catalog, precision)
    fast = peak.notna() & (ratio.isna() | (ratio >= min_speedup))
    return catalog.loc[fast, "name"].tolist()


def memory_saved_fraction(from_precision, to_precision):
    """Fraction of weight memory saved going from one format to another.

    Example: fp32 → fp16 saves 0.5 (the source article's CT-scan case reports
    "50 % less memory", which matches weights; activations and workspace change
    by a similar factor when they also move to 16 bit).
    """
    a = weight_bytes(1.0, from_precision)
    b = weight_bytes(1.0, to_precision)
    return 1.0 - b / a


#: the source article's FP32 → FP16 medical-imaging example, as reported (not measured here)
SEED_CT_EXAMPLE = {
    "task": "CT-scan analysis (inference)",
    "from": "fp32",
    "to": "fp16",
    "speedup": 2.1,
    "memory_saved_fraction": 0.50,
    "auc_change": -0.003,
    "source": "seed article 003, section 2.3 (anecdotal; no model, device or dataset named)",
}


def guidance_table():
    """The source article's precision guidance table, with accelkit's comments.

    Columns: ``precision, use_cases, article_devices, comment``. The first three
    columns restate the article's table (seed 003, section 2.3); ``comment`` says
    what the formulas and catalogue add.
    """
    rows = [
        (
            "fp32",
            N_("scientific research, financial risk"),
            "A100, MI250",
            N_("Needed where rounding error accumulates (long sums, ill-conditioned solvers); "
               "deep-learning training rarely needs it end to end. fp64 is the format for "
               "classical HPC -- compare fp64_tflops, not fp32."),
        ),
        (
            "fp16 / bf16",
            N_("computer vision, speech"),
            "T4, A10G",
            N_("The default for training (mixed precision: fp32 master weights, loss scaling "
               "for fp16 [5]) and for GPU inference. bf16 keeps fp32's range, so it needs no "
               "loss scaling; T4 and V100 have no bf16."),
        ),
        (
            "int8",
            N_("mobile / edge inference"),
            "Jetson, Ascend",
            N_("Post-training quantisation with calibration [6]; doubles peak over fp16 on "
               "most tensor units and halves weight memory. Check accuracy on your data."),
        ),
        (
            "fp8",
            N_("(not in the article) LLM training and inference on Hopper/Blackwell, MI300, Gaudi"),
            "H100, MI300X, Gaudi 3",
            N_("E4M3/E5M2 with per-tensor scaling [2]; 2x bf16 peak where supported."),
        ),
    ]
    return pd.DataFrame(rows, columns=["precision", "use_cases", "article_devices", "comment"])


def round_to(values, fmt):
    """Round float32/float64 values to a narrower format and back (to float64).

    ``fp16`` uses numpy's IEEE half; ``bf16`` keeps the top 16 bits of the fp32
    pattern with round-to-nearest-even (the conversion hardware performs);
    ``fp32`` and ``fp64`` are exact casts.
    """
    fmt = check_choice("fmt", fmt, ["fp64", "fp32", "bf16", "fp16"])
    x = np.asarray(values, dtype=np.float64)
    if fmt == "fp64":
        return x.copy()
    if fmt == "fp32":
        return x.astype(np.float32).astype(np.float64)
    if fmt == "fp16":
        with np.errstate(over="ignore"):
            return x.astype(np.float16).astype(np.float64)
    bits = x.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    rounded = ((bits + rounding) & np.uint32(0xFFFF0000)).astype(np.uint32)
    return rounded.view(np.float32).astype(np.float64)


def underflow_fraction(values, fmt, scale=1.0):
    """Fraction of non-zero ``values`` that become zero when ``values × scale`` is
    stored in ``fmt`` -- what loss scaling prevents.

    Parameters
    ----------
    values : array-like
        Gradient values (non-zero) [any unit].
    fmt : {"fp16", "bf16", "fp32"}
    scale : float
        Loss scale (gradients are multiplied by it before the cast).
    """
    check_number("scale", scale, low=0, low_inclusive=False, expected="a loss scale > 0, e.g. 65536")
    x = np.asarray(values, dtype=np.float64)
    x = x[x != 0]
    if x.size == 0:
        raise ValueError("values must contain non-zero gradients")
    return float(np.mean(round_to(x * scale, fmt) == 0.0))


def overflow_fraction(values, fmt, scale=1.0):
    """Fraction of ``values × scale`` that overflow ``fmt`` to ±inf."""
    check_number("scale", scale, low=0, low_inclusive=False, expected="a loss scale > 0")
    x = np.asarray(values, dtype=np.float64)
    return float(np.mean(~np.isfinite(round_to(x * scale, fmt))))


@lru_cache(maxsize=32)
def _loss_scaling_demo(scales, median_log2, spread_log2, n, seed):
    rng = np.random.default_rng(seed)
    grads = np.exp2(rng.normal(median_log2, spread_log2, int(n))) * rng.choice([-1.0, 1.0], int(n))
    rows = []
    for scale in scales:
        for fmt in ("fp16", "bf16"):
            rows.append({"scale": scale, "log2_scale": float(np.log2(scale)), "format": fmt,
                         "underflow": underflow_fraction(grads, fmt, scale),
                         "overflow": overflow_fraction(grads, fmt, scale)})
    return pd.DataFrame(rows)


def loss_scaling_demo(scales=(1.0, 2.0**8, 2.0**16, 2.0**24), median_log2=-22.0, spread_log2=4.0, n=200_000, seed=0):
    """Underflow and overflow of synthetic gradients under fp16 and bf16, per loss scale.

    The gradients are synthetic -- magnitudes log-normal around ``2**median_log2``
    with a standard deviation of ``spread_log2`` binades -- chosen to resemble the
    small activation gradients that motivated loss scaling (Micikevicius et al.
    2018, §3.2, where many values fall below fp16's smallest subnormal 2**-24).
    Change the assumptions to see how the conclusion moves.

    Returns
    -------
    pandas.DataFrame
        ``scale, log2_scale, format, underflow, overflow`` (fractions of values).
    """
    check_number("spread_log2", spread_log2, low=0, low_inclusive=False, expected="a spread in binades > 0")
    check_number("median_log2", median_log2, low=-140, high=120, expected="a base-2 exponent in [-140, 120]")
    return _loss_scaling_demo(tuple(float(x) for x in scales), float(median_log2), float(spread_log2), int(n),
                              int(seed)).copy()


def precision_table(catalog, devices, precisions=("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")):
    """Peak and speed-up over fp32 for each device × precision (long format).

    Returns
    -------
    pandas.DataFrame
        ``device, precision, peak_tflops`` (NaN = not published / not supported),
        ``speedup_vs_fp32``, ``bytes_per_value``.
    """
    rows = catalog[catalog["name"].isin(list(devices))]
    out = []
    for p in precisions:
        peak = units.flops_to_tflops(peak_flops(rows, p))
        fp32 = units.flops_to_tflops(peak_flops(rows, "fp32"))
        for name, value, base in zip(rows["name"], peak, fp32):
            out.append({"device": name, "precision": p, "peak_tflops": value,
                        "speedup_vs_fp32": value / base if base == base and base else np.nan,
                        "bytes_per_value": BYTES_PER_PARAM[p]})
    return pd.DataFrame(out)
