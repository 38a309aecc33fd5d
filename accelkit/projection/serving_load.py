"""LLM serving under load: the prefill queue and the scheduler's token budget.

Used by :func:`accelkit.projection.inference.serve_core` when a concurrency (closed-loop
clients) or a request rate (Poisson arrivals) is given: continuous batching with chunked
prefill (Agrawal et al., Sarathi-Serve, OSDI 2024, §4; vLLM's chunked-prefill docs), an
M/D/1 prefill queue (Kleinrock, *Queueing Systems* vol. 1, §5.6) and Little's law on the
client cycle. Split out of :mod:`accelkit.projection.inference` (one job per module).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TOKEN_BUDGET", "md1_wait", "serve_load"]


#: the scheduler's token budget per step when none is given: vLLM's ``max_num_batched_tokens``
#: for its OpenAI server on GPUs with at least 70 GiB (V1 engine; 2048 below), TensorRT-LLM's
#: ``max_num_tokens`` and SGLang's ``chunked_prefill_size`` on such GPUs (each 8192)
TOKEN_BUDGET = 8192.0
_Z90 = 1.2815515655446004  # the standard normal's 90th percentile


def _wait_percentile(mean_wait, rho, p):
    """The ``p`` quantile of an M/G/1 waiting time from its mean and the utilisation.

    A request waits with probability ``rho`` (PASTA); given that it waits, the wait is
    taken as exponential with mean ``W / rho`` -- the heavy-traffic form of the M/G/1
    waiting-time distribution (Kingman 1962; Kleinrock, *Queueing Systems* vol. 2
    (1976), §2.2). So ``P(W > t) = rho · exp(-t·rho/W)`` and the quantile is
    ``(W/rho)·ln(rho/(1-p))`` where ``rho > 1 - p``, else 0.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = 1.0 - p
        q = np.where(rho > tail, mean_wait / np.where(rho > 0, rho, 1.0) * np.log(np.maximum(rho, tail) / tail), 0.0)
    return np.where(np.isfinite(mean_wait), q, np.inf)


def md1_wait(arrival_rate, service_s):
    """Mean wait in queue of M/D/1 (Pollaczek-Khinchine with a deterministic service):
    ``W = rho · S / (2 (1 - rho))``, ``rho = lambda · S`` (Kleinrock, *Queueing Systems*
    vol. 1 (1975), eq. 5.73 with ``C_s^2 = 0``); infinite at ``rho >= 1``."""
    rho = np.asarray(arrival_rate, dtype=float) * service_s
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho * service_s / (2.0 * (1.0 - rho)), np.inf), rho


def _floor_sum(n, m, a, b):
    """``sum_{i=0}^{n-1} floor((a·i + b) / m)`` for non-negative integer arrays, ``m > 0``
    (the Euclid-like reduction of AtCoder Library's ``floor_sum``, vectorised)."""
    n, m, a, b = (np.array(v, dtype=np.int64) for v in np.broadcast_arrays(n, m, a, b))
    total = np.zeros(n.shape, dtype=np.int64)
    live = n > 0
    while live.any():
        q = a // m
        total += np.where(live, (n - 1) * n // 2 * q, 0)
        a = a % m
        q = b // m
        total += np.where(live, n * q, 0)
        b = b % m
        y_max = a * n + b
        live &= y_max >= m
        n, b = np.where(live, y_max // m, 0), np.where(live, y_max % m, 0)
        m, a = np.where(live, a, 1), np.where(live, m, 0)
    return total


def _wave_prefill(step, n, L, budget):
    """Mean and 90th-percentile TTFT of ``n`` prompts of ``L`` tokens that arrive together.

    The scheduler fills each step's token budget ``C`` with prompt tokens first come, first
    served, splitting a prompt across steps where it does not fit (chunked prefill), and a
    prompt's first token comes at the end of the step that holds its last chunk: the
    ``k``-th prompt's at step ``ceil(k·L / C)``. Prompts that share a step finish together,
    so 10 prompts of 200 tokens all wait for one step of 2,000 tokens. Each full step takes
    ``step(C, 0)``, the last the rest of the ``n·L`` tokens. The running decodes of the
    prompts done earlier are left out (a closed loop's wave starts with none).
    Exact sums (:func:`_floor_sum`), no loop over the prompts.
    """
    n, L, C = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (n, L, budget)))
    known = np.isfinite(n) & np.isfinite(L) & np.isfinite(C)  # a device without figures: NaN out
    n, L, C = (np.where(known, np.maximum(np.rint(v), 1.0), 1.0) for v in (n, L, C))
    steps = np.ceil(n * L / C)  # K, the steps the wave's prompts fill
    full = step(C, 0.0)[0]
    last = step(n * L - (steps - 1.0) * C, 0.0)[0]
    # sum_k ceil(k·L/C) = sum_{i=0}^{n-1} floor((L·i + L + C - 1) / C)
    mean_steps = _floor_sum(n, C, L, L + C - 1.0) / n
    in_last = n - np.floor((steps - 1.0) * C / L)  # prompts whose last chunk lies in step K
    mean = mean_steps * full + in_last / n * (last - full)
    k90 = np.ceil(0.9 * n)
    s90 = np.ceil(k90 * L / C)
    p90 = (s90 - 1.0) * full + np.where(s90 >= steps, last, full)
    return np.where(known, mean, np.nan), np.where(known, p90, np.nan)


def serve_load(step, prefill_alone, most, L, O, concurrency=None, request_rate=None, token_budget=TOKEN_BUDGET,
               requests_per_client=None, synchronized=False, chunk_step=None):
    """TTFT and TPOT of one serving group under load (continuous batching, chunked prefill).

    ``step(prefill_tokens, n)`` is the step time of ``n`` decodes plus ``prefill_tokens``
    prompt tokens (:func:`serve_core`); ``chunk_step`` the same for the steps that carry a
    prompt's chunks (default ``step``; :func:`serve_core` prices their all-reduces at NCCL's
    latency: a step with prompt tokens is not graph-captured -- vLLM's "CUDA Graphs" design note,
    docs.vllm.ai/en/latest/design/cuda_graphs/, captures uniform decode batches; SGLang captures decode);
    ``most`` the sequences the group holds at once (memory, ``max_num_seqs``).

    * **Running batch** ``b``: closed loop, ``min(N, most)``; Poisson arrivals at rate
      ``lambda``, the fixed point ``b = lambda · O · step(b·L/O, b)`` (Little's law on the
      running set), capped at ``most``.
    * **Prefill under load** (Sarathi-Serve's stall-free batching [1]_; vLLM's chunked
      prefill [2]_): each step first takes the running decodes, then fills the token budget
      ``C`` with prompt tokens, so a prompt advances ``c = min(L, C − (b − 1))`` tokens per
      step and its prefill takes ``S = (L / c) · step(c, b − 1)`` -- steps that carry the
      decode batch.
    * **Joining the batch**: the scheduler admits a request only between steps
      (iteration-level scheduling, Orca [4]_), so it first waits out the step in progress,
      on average half a step ``step_s / 2`` (the running batch with its share of prompt
      tokens).
    * **Queueing** for the prefill (prompts are scheduled first come, first served): the
      prompts of several requests share one step's budget, so the server is the budget's
      prompt capacity, not a whole step per request: each prompt token adds
      ``s = (step(f, b − 1) − step(0, b − 1)) / f`` to the steps (``f = C − (b − 1)`` the
      budget left beside the decodes), and a request's prompt occupies that server for
      ``L · s``. An M/D/1 server of that service (:func:`md1_wait`). Poisson arrivals: ``lambda``.
      Closed loop: arrivals at the throughput ``X = N / (TTFT + (O − 1)·TPOT)`` (Little's
      law on the client cycle), solved with the wait (the fixed point is unique: the
      wait falls as the cycle grows); when ``N`` exceeds what the engine holds, the
      rest wait for a free slot: ``TTFT >= N / X_max − (O − 1)·TPOT`` with
      ``X_max = b / (O · step)`` the engine's request rate at ``b``.
    * **TTFT** = half a step + ``S`` + wait; p50 and p90 from :func:`_wait_percentile`, mean with ``W``.
    * **The first wave** (closed loop): a load generator fills its ``N`` slots at once when it
      starts (AIPerf's ``--concurrency`` "burst mode", no ramp by default [5]_), so the first
      ``n = min(N, b)`` prompts arrive together. The scheduler fills each step's token budget
      ``C`` with their tokens first come, first served (chunked prefill), and a prompt's first
      token comes at the end of the step that holds its last chunk: the ``k``-th at step
      ``ceil(k·L/C)``, each full step taking ``step(C, 0)`` (:func:`_wave_prefill`). Prompts
      that share a step finish together: 10 prompts of 200 tokens all wait for one step of
      2,000. When ``N`` exceeds ``b``, the ``(b + j)``-th request takes the
      slot the ``j``-th completion frees, the first after one request's time ``S + D``, the rest
      at the engine's rate: ``S + D + (j − 1) / X_max``, a mean over the wave of
      ``(N − b)/N · (S + D + (N − b − 1) / (2 X_max))`` (``ttft_first_wave_s``; a burst of ``N``
      requests sent at once, as ``vllm bench serve`` does with no request rate, is this wave alone). A run that measures ``r`` requests per
      client (``requests_per_client``; NVIDIA's NIM sweeps use ``--request-count`` = 3 × the
      concurrency [6]_) counts that wave in ``1/r`` of its requests, so its mean TTFT is
      ``(1/r) · first wave + (1 − 1/r) · steady state``; ``None`` (the default) is the steady
      state a long-running service sees.
    * **Clients in step** (``synchronized``: a closed loop whose requests all have the same prompt and
      output lengths, as load-test sweeps send): the clients start together and nothing random spreads
      them apart -- equal requests take equal times, and a prompt that arrives while another is prefilled
      waits for it, which bunches the arrivals again -- so every wave queues as the first did: the mean
      TTFT is the first wave's (``requests_per_client`` then changes nothing), median the mean, and the
      p90 the first wave's own 90th percentile (the prompt ``ceil(0.9·n)``'s step). Measured (the course
      table of NIM GenAI-Perf sweeps, Llama-3 8B and 70B on A100 and H100 at 10 clients; ``accelkit
      validate``): 0.90-1.45× of this wave (median 1.08 for 200-token, 1.27 for 2,000-token prompts),
      where a wave priced prompt by prompt was 1.4-2.6× short for 200- and 2,000-token prompts -- and
      those runs averaged many waves, not the first alone: where the table's mean output length is not
      whole it bounds the requests counted, at least 5.5-17 per client at 10 clients
      (:func:`~accelkit.projection.load_tests.requests_counted_at_least`); NIM 1.8.0's 8B tables at 25-100
      clients of 200-500-token prompts come in at 0.55-0.76× (their engine's budget is not stated); with
      longer prompts and 50 clients or more the clients fall partly out of step (the course table's 100
      clients of 7,000 tokens, at least 9 requests per client on eight H100s: 0.24×; vLLM on a TPU v6e-8,
      64 clients of 1,000 tokens at 512 tokens per step, 47 requests each: 0.08×, where the first wave
      counted once and a steady state after it give 0.79× of the measurement).
    * **TPOT**: mean = the step with the running batch and its share of prompt tokens
      (:func:`serve_core`); a request's TPOT averages ``O − 1`` steps of which a share
      ``rho`` carries a prompt chunk, so its spread is binomial:
      ``p90 = mean + z90 · (step(c, b) − step(0, b)) · sqrt(rho (1 − rho) / (O − 1))``.

    References
    ----------
    .. [1] A. Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
       Sarathi-Serve", OSDI 2024, arXiv:2403.02310, §4 (stall-free batching, token budget).
    .. [2] vLLM documentation, "Optimization and Tuning: chunked prefill"
       (``max_num_batched_tokens``), docs.vllm.ai/en/latest/configuration/optimization.html.
    .. [3] L. Kleinrock, *Queueing Systems*, vol. 1 (1975) §5.6 (M/G/1) and vol. 2 (1976).
    .. [4] G.-I. Yu et al., "Orca: A Distributed Serving System for Transformer-Based
       Generative Models", OSDI 2022, §3.1 (iteration-level scheduling).
    .. [5] AIPerf documentation, "Load generator options" (``--concurrency`` alone: burst
       mode) and "Gradual ramping" (no ramping by default), docs.nvidia.com/aiperf.
    .. [6] NVIDIA NIM for LLMs Benchmarking Guide, "Using AIPerf to Benchmark"
       (``REQUEST_COUNT=$(($CONCURRENCY * 3))``), docs.nvidia.com/nim/benchmarking/llm/latest/quickstart.html.
    """
    most = np.asarray(most, dtype=float)
    if concurrency is not None:
        N = np.asarray(concurrency, dtype=float)
        b = np.maximum(np.minimum(N, most), 1.0)
    else:
        lam = np.asarray(request_rate, dtype=float)
        b = np.ones(np.broadcast(most, lam).shape)
        for _ in range(30):  # the running set at arrival rate lam (monotone iteration from 1)
            b = np.minimum(np.maximum(lam * O * step(b * L / O, b)[0], 1.0), most)
    step_s, bound, comm = step(b * L / O, b)
    tpot, _, _ = step((b - 1.0) * L / O, b)
    free = np.maximum(token_budget - (b - 1.0), 1.0)
    chunk = np.minimum(L, free)
    prompt_step = step if chunk_step is None else chunk_step  # a step that carries prompt tokens
    S = L / chunk * prompt_step(chunk, b - 1.0)[0]
    # the prompt's share of the steps' budget: what the prefill server is busy with per request
    service = L * (step(free, b - 1.0)[0] - step(0.0, b - 1.0)[0]) / free
    join = 0.5 * step_s  # the step in progress when the request arrives
    D = (O - 1.0) * tpot
    x_max = b / (O * step_s)
    if concurrency is not None:
        lo, hi = S + 0.0 * D, S + join + N * S + D
        for _ in range(40):  # bisection: g(T) = T - join - S - W(X(T)) increases with T
            mid = 0.5 * (lo + hi)
            w, _ = md1_wait(np.minimum(N / (mid + D), x_max), service)
            above = mid - join - S - w >= 0
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
        T = hi
        w, rho = md1_wait(np.minimum(N / (T + D), x_max), service)
        # waiting for a free sequence slot: only clients beyond what the engine holds wait for one (the
        # cycle's steps carry the prompt share of every request, so O·step can exceed (O − 1)·TPOT + T even
        # when every client has a slot -- for a mixture of experts by seconds, as more tokens read more experts)
        admit = np.where(N > most, np.maximum(N / x_max - D - T, 0.0), 0.0)
        x = np.minimum(N / (T + admit + D), x_max)
    else:
        w, rho = md1_wait(lam, service)
        # beyond the request rate the engine sustains with every slot busy, the queue grows without end
        x_most = most / (O * step(most * L / O, most)[0])
        admit = np.where(lam < x_most, 0.0, np.inf)
        x = np.where(np.isfinite(admit), lam, np.nan)
    base = join + S + admit
    ttft_mean = base + w
    if concurrency is not None:
        # the first wave: min(N, b) prompts arriving together, prefilled first come, first served; the
        # (b + j)-th takes the slot the j-th completion frees: the first after one request's latency S + D,
        # the rest at the engine's rate x_max
        rest = np.maximum(N - b, 0.0)
        slot_wait = rest / N * (S + D + np.maximum(rest - 1.0, 0.0) / (2.0 * x_max))
        wave, wave90 = _wave_prefill(prompt_step, np.minimum(N, b), L, token_budget)
        first_wave = wave + slot_wait
        if requests_per_client is not None:
            ttft_mean = first_wave / requests_per_client + ttft_mean * (1.0 - 1.0 / requests_per_client)
    else:
        first_wave = np.full(np.shape(ttft_mean), np.nan)
    ttft = base + _wait_percentile(w, rho, 0.5)
    ttft90 = base + _wait_percentile(w, rho, 0.9)
    if concurrency is not None and synchronized:
        # clients in step repeat the first wave: its mean, taken as the median, and its own p90
        ttft_mean, ttft, ttft90 = first_wave, first_wave, wave90 + slot_wait
        x = np.minimum(N / (first_wave + D), x_max)  # Little's law on the in-step cycle
    q = np.clip(rho, 0.0, 1.0)
    spread = (step(chunk, b)[0] - step(0.0, b)[0]) * np.sqrt(q * (1.0 - q) / np.maximum(O - 1.0, 1.0))
    return {"prefill_s": prefill_alone, "decode_step_s": step_s, "tpot_s": tpot, "tpot_p90_s": tpot + _Z90 * spread,
            "ttft_s": ttft, "ttft_p90_s": ttft90, "ttft_mean_s": ttft_mean, "ttft_first_wave_s": first_wave,
            "request_latency_s": ttft_mean + D,
            "output_tokens_per_s": x * O, "memory_bound": bound, "comm_s": comm, "running_batch": b,
            "prefill_utilisation": rho}
