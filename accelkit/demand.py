"""Compute demand: how many FLOPs a job needs, and how many devices or days.

Conventions: FLOP counts multiply and add separately (one multiply-accumulate =
2 FLOP). Training a dense transformer costs about 6 FLOP per parameter per token:
2 in the forward pass and 4 in the backward pass (gradients with respect to
activations and to weights). Inference costs about 2 FLOP per parameter per token.
Attention's sequence-length term is ignored (small while the context is short
next to ``12 · d_model``; Kaplan et al. 2020, section 2.1).

References
----------
.. [1] J. Kaplan et al., "Scaling Laws for Neural Language Models",
   arXiv:2001.08361 (2020), section 2.1 and eq. 2.1 (C ~ 6 N D).
.. [2] J. Hoffmann et al., "Training Compute-Optimal Large Language Models",
   arXiv:2203.15556 (2022), section 3 (C ~ 6 N D).
.. [3] T. Brown et al., "Language Models are Few-Shot Learners",
   arXiv:2005.14165 (2020), appendix D (GPT-3 175B: 3.14e23 FLOP).
.. [4] A. Chowdhery et al., "PaLM", arXiv:2204.02311 (2022), appendix B
   (model FLOPs utilisation, MFU).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._validate import check_fraction, check_positive
from .i18n import N_

__all__ = [
    "training_flops",
    "inference_flops",
    "seed_flops_per_second",
    "seed_claim_check",
    "flops_per_second_for_deadline",
    "devices_needed",
    "training_seconds",
    "implied_utilization",
]


def training_flops(params, tokens):
    """Training compute of a dense model: ``C = 6 · N · D``.

    Parameters
    ----------
    params : numeric
        Parameters N (for a mixture-of-experts model, the *active* parameters
        per token) [count].
    tokens : numeric
        Training tokens D (or samples, for a model that sees one "token" per
        sample) [count].

    Returns
    -------
    numeric
        Training compute [FLOP].

    Notes
    -----
    ``C = 6 N D`` ([1]_ eq. 2.1, [2]_): 2 FLOP per parameter per token forward,
    4 backward. Worked example ([3]_ appendix D): GPT-3 175B on 300e9 tokens,
    6 × 175e9 × 300e9 = 3.15e23 FLOP (the paper prints 3.14e23).
    """
    check_positive("params", params, "a number of parameters")
    check_positive("tokens", tokens, "a number of tokens")
    return 6.0 * params * tokens


def inference_flops(params, tokens=1):
    """Forward-pass compute: ``2 · N`` FLOP per token.

    Parameters
    ----------
    params : numeric
        Parameters N (active parameters for mixture-of-experts) [count].
    tokens : numeric, default 1
        Tokens processed (prompt + generated) [count].

    Returns
    -------
    numeric
        Inference compute [FLOP].

    Notes
    -----
    One multiply-accumulate per parameter per token ([1]_ section 2.1, ``C_forward
    ≈ 2N``), ignoring the attention term ``2 n_layer n_ctx d_attn``.
    """
    check_positive("params", params, "a number of parameters")
    check_positive("tokens", tokens, "a number of tokens")
    return 2.0 * params * tokens


def seed_flops_per_second(params, batch_size, iters_per_s):
    """The source article's rule: ``FP32 demand = params × 3 × batch × it/s``.

    Parameters
    ----------
    params : numeric
        Model parameters [count].
    batch_size : numeric
        Samples per iteration [count].
    iters_per_s : numeric
        Iterations per second [1/s].

    Returns
    -------
    numeric
        What the formula gives [FLOP/s, if its 3 is read as FLOP].

    Notes
    -----
    The factor 3 counts one forward and two backward *multiply-accumulates* per
    parameter per sample; in FLOP (multiply and add counted apart) it is 6, the
    usual training rule (:func:`training_flops`). The article's example -- 1e8
    parameters, batch 32, 10 it/s, "about 100 TFLOPS" -- is off by three orders of
    magnitude: the product is 9.6e10 (≈ 0.1 TFLOP/s); with the 6 FLOP rule,
    1.92e11 FLOP/s. The article's 100 TFLOPS appears only if every sample is a
    sequence of about 512 tokens: 6 × 1e8 × 32 × 512 × 10 = 9.8e13 FLOP/s.
    :func:`seed_claim_check` lays the three side by side.
    """
    check_positive("params", params, "a number of parameters")
    check_positive("batch_size", batch_size, "a batch size")
    check_positive("iters_per_s", iters_per_s, "a rate in iterations per second")
    return 3.0 * params * batch_size * iters_per_s


def seed_claim_check(params=1e8, batch_size=32, iters_per_s=10, tokens_per_sample=512, claimed_flops_per_s=100e12):
    """The source article's demand example next to its correction.

    Parameters
    ----------
    params, batch_size, iters_per_s : numeric
        As in :func:`seed_flops_per_second` (defaults: the article's example).
    tokens_per_sample : numeric
        Sequence length if a sample is a token sequence [tokens].
    claimed_flops_per_s : float
        What the article says the example needs [FLOP/s].

    Returns
    -------
    pandas.DataFrame
        One row per way of counting: ``method``, ``flops_per_s``, ``ratio_to_claim``
        and ``explanation``.
    """
    check_positive("tokens_per_sample", tokens_per_sample, "a number of tokens per sample")
    check_positive("claimed_flops_per_s", claimed_flops_per_s, "a rate in FLOP/s")
    seed = seed_flops_per_second(params, batch_size, iters_per_s)
    per_sample = 6.0 * params * batch_size * iters_per_s
    per_token = training_flops(params, batch_size * iters_per_s * tokens_per_sample)
    rows = [
        # the words are marked for translation; the panel translates them where it shows them
        (N_("article's claim"), claimed_flops_per_s, N_("what the text says the example needs")),
        (N_("article's formula, computed"), seed, N_("params × 3 × batch × it/s, multiplied out")),
        (N_("6·N per sample"), per_sample, N_("2 FLOP forward + 4 backward per parameter per sample")),
        (
            f"6·N per token ({tokens_per_sample:g} tokens/sample)",
            per_token,
            N_("the same rule when each sample is a token sequence (transformers)"),
        ),
    ]
    frame = pd.DataFrame(rows, columns=["method", "flops_per_s", "explanation"])
    frame.insert(2, "ratio_to_claim", frame["flops_per_s"] / claimed_flops_per_s)
    return frame


def flops_per_second_for_deadline(total_flops, seconds):
    """Sustained FLOP/s needed to finish ``total_flops`` within ``seconds``.

    Parameters
    ----------
    total_flops : numeric [FLOP]
    seconds : numeric
        Time budget [s].

    Returns
    -------
    numeric [FLOP/s]
    """
    check_positive("total_flops", total_flops, "an amount of compute in FLOP")
    check_positive("seconds", seconds, "a time in seconds")
    return total_flops / seconds


def devices_needed(required_flops_per_s, peak_flops, utilization):
    """Whole devices needed to sustain a compute rate.

    Parameters
    ----------
    required_flops_per_s : numeric
        Sustained compute the job needs [FLOP/s].
    peak_flops : numeric
        Dense peak of one device at the job's precision [FLOP/s].
    utilization : numeric
        Fraction of peak actually achieved (model FLOPs utilisation, MFU), in
        (0, 1]. Large-model training reaches roughly 0.3-0.55 ([4]_ table 3).

    Returns
    -------
    numeric
        ``ceil(required / (peak × utilization))`` [devices], at least 1.
    """
    check_positive("required_flops_per_s", required_flops_per_s, "a compute rate in FLOP/s")
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_fraction("utilization", utilization, "a utilisation")
    # round before ceil so that 3.0000000001 (float noise) does not become 4
    need = np.ceil(np.round(required_flops_per_s / (peak_flops * utilization), 9))
    return np.maximum(need, 1)


def training_seconds(flops, n_devices, peak_flops, utilization):
    """Wall-clock time to do ``flops`` on ``n_devices`` at a given utilisation.

    Parameters
    ----------
    flops : numeric
        Total compute [FLOP].
    n_devices : numeric
        Devices working in parallel [count].
    peak_flops : numeric
        Dense peak of one device [FLOP/s].
    utilization : numeric
        Achieved fraction of peak (MFU), in (0, 1].

    Returns
    -------
    numeric
        ``flops / (n_devices × peak_flops × utilization)`` [s].

    Notes
    -----
    Assumes perfect scaling across devices; communication overheads are in
    :mod:`accelkit.comm`.
    """
    check_positive("flops", flops, "an amount of compute in FLOP")
    check_positive("n_devices", n_devices, "a number of devices")
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_fraction("utilization", utilization, "a utilisation")
    return flops / (n_devices * peak_flops * utilization)


def implied_utilization(flops, n_devices, peak_flops, seconds):
    """Model FLOPs utilisation implied by a reported run: ``C / (n · peak · t)``.

    Parameters
    ----------
    flops : numeric
        Model FLOPs of the run (e.g. :func:`training_flops`) [FLOP].
    n_devices : numeric
        Devices used [count].
    peak_flops : numeric
        Dense peak per device [FLOP/s].
    seconds : numeric
        Wall-clock time [s]; ``device_hours × units.SECONDS_PER_HOUR / n_devices`` for runs reported
        in device-hours.

    Returns
    -------
    numeric
        Utilisation (may exceed 1 only if the inputs are inconsistent).

    Notes
    -----
    Definition of MFU in [4]_ appendix B. Worked example: Llama 2 7B, 2.0e12
    tokens, 184,320 A100-80GB GPU-hours (Touvron et al. 2023, arXiv:2307.09288,
    table 2): 6 × 6.74e9 × 2e12 FLOP / (184,320 h × 3.6e3 s/h × 312e12 FLOP/s) ≈ 0.39.
    """
    check_positive("flops", flops, "an amount of compute in FLOP")
    check_positive("n_devices", n_devices, "a number of devices")
    check_positive("peak_flops", peak_flops, "a peak compute rate in FLOP/s")
    check_positive("seconds", seconds, "a time in seconds")
    return flops / (n_devices * peak_flops * seconds)
