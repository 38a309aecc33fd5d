"""Serving under load (issue 24, item 1): the queueing formulas by hand, and the engine's
TTFT / TPOT at a concurrency or a request rate."""

import math

import numpy as np
import pytest

from accelkit import projection as P
from accelkit.projection.inference import _wait_percentile, md1_wait

H100 = dict(device="H100 SXM", model="Llama-3.1 8B", precision="fp8", tensor_parallel=1, input_tokens=1000,
            output_tokens=1000)


def test_md1_wait_by_hand():
    # lambda = 5/s, S = 0.1 s: rho = 0.5, W = rho S / (2 (1 - rho)) = 0.05 s
    w, rho = md1_wait(5.0, 0.1)
    assert rho == pytest.approx(0.5)
    assert w == pytest.approx(0.05)
    # rho = 0.9: W = 0.9 * 0.1 / 0.2 = 0.45 s; at rho >= 1 the queue has no end
    assert md1_wait(9.0, 0.1)[0] == pytest.approx(0.45)
    assert np.isinf(md1_wait(10.0, 0.1)[0])


def test_wait_percentiles_by_hand():
    # P(W > t) = rho exp(-t rho / W): W = 0.05, rho = 0.5 -> p90 = 0.1 ln 5, p50 = 0 (half the requests wait not at all)
    assert _wait_percentile(0.05, 0.5, 0.9) == pytest.approx(0.1 * math.log(5.0))
    assert _wait_percentile(0.05, 0.5, 0.5) == pytest.approx(0.0)
    # rho = 0.08 < 0.1: nine in ten requests find the prefill free
    assert _wait_percentile(0.01, 0.08, 0.9) == 0.0


def test_ttft_grows_with_concurrency():
    ttft = [P.inference(concurrency=n, **H100)["ttft_s"] for n in (1, 5, 25, 50, 100, 250)]
    assert all(b >= a for a, b in zip(ttft, ttft[1:])), ttft
    assert ttft[-1] > 2 * ttft[0]
    r = P.inference(concurrency=50, **H100)
    assert r["ttft_p90_s"] >= r["ttft_s"] and r["tpot_p90_s"] >= r["tpot_s"]
    assert r["ttft_s_low"] <= r["ttft_s"] <= r["ttft_s_high"]


def test_one_client_is_one_prefill():
    alone = P.inference(batch_size=1, **H100)
    one = P.inference(concurrency=1, **H100)
    # the prompt runs as chunks inside scheduler steps (step overheads, not a separate prefill pass), after
    # waiting out the step in progress (half a step on average: iteration-level scheduling)
    assert one["ttft_s"] == pytest.approx(alone["ttft_s"] + 0.5 * one["decode_step_s"], rel=0.1)
    assert one["tpot_s"] == pytest.approx(alone["tpot_s"], rel=1e-9)


def test_beyond_memory_clients_wait_for_a_slot():
    # Little's law on the client cycle: N = X (TTFT + (O - 1) TPOT) once the engine holds fewer than N
    r = P.inference(concurrency=2000, **H100)
    x = r["requests_per_s"]
    assert r["batch_size"] < 2000
    assert 2000 == pytest.approx(x * (r["ttft_mean_s"] + (H100["output_tokens"] - 1) * r["tpot_s"]), rel=0.01)


def test_request_rate_poisson():
    low, high = (P.inference(request_rate=q, **H100) for q in (1.0, 8.0))
    assert high["ttft_s"] >= low["ttft_s"] and high["tpot_s"] > low["tpot_s"]
    assert low["requests_per_s"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="beyond what the devices sustain"):
        P.inference(request_rate=1e4, **H100)


def test_old_calls_unchanged_and_arguments_checked():
    a = P.inference(batch_size=8, **H100)
    assert "ttft_p90_s" not in a  # the one-request figures, as before
    with pytest.raises(ValueError, match="not both"):
        P.inference(concurrency=4, request_rate=1.0, **H100)
    with pytest.raises(ValueError, match="token_budget"):
        P.inference(token_budget=2048, **H100)
    with pytest.raises(ValueError, match="continuous"):
        P.inference(concurrency=4, schedule="static", **H100)


def test_every_device_at_once():
    frame = P.inference(None, "Llama-3.1 8B", precision="bf16", concurrency=32)
    ok = frame[frame["feasible"]]
    assert len(ok) > 5 and np.isfinite(ok["ttft_p90_s"]).all()


def test_the_first_wave_queues_behind_the_prompts_that_arrived_with_it():
    """N clients that start together: with a token budget of one prompt per step the k-th prompt
    waits for the k - 1 before it (first come, first served), so the wave's mean TTFT is
    (N + 1)/2 one-prompt steps, worked by hand."""
    one_per_step = dict(H100, token_budget=H100["input_tokens"])
    waves = [P.inference(concurrency=n, **one_per_step)["ttft_first_wave_s"] for n in (1, 11, 21)]
    one = P.inference(concurrency=1, **H100)
    assert waves[0] == pytest.approx(one["ttft_s"] - 0.5 * one["decode_step_s"], rel=0.05)  # no one ahead
    assert waves[1] == pytest.approx(6 * waves[0], rel=1e-9), "11 prompts, one per step: a mean of 6 steps"
    assert waves[2] == pytest.approx(11 * waves[0], rel=1e-9), "21 prompts, one per step: a mean of 11 steps"


def test_prompts_that_share_a_step_finish_together():
    """The scheduler fills a step's token budget with the prompts that arrived together, and each
    gets its first token when that step ends: 8 prompts in a budget of 8 prompts all wait one whole
    step (no spread), 16 wait one step or two (mean 1.5 steps, p90 two), worked by hand."""
    budget = dict(H100, token_budget=8 * H100["input_tokens"], synchronized=True)
    one, eight, sixteen = (P.inference(concurrency=n, **budget) for n in (1, 8, 16))
    assert eight["ttft_p90_s"] == pytest.approx(eight["ttft_mean_s"], rel=1e-12), "one step: every prompt ends with it"
    # one step of 8 prompts costs more than one prompt's step and less than 8 of them (one weight read)
    assert one["ttft_mean_s"] < eight["ttft_mean_s"] < 8 * one["ttft_mean_s"]
    assert sixteen["ttft_mean_s"] == pytest.approx(1.5 * eight["ttft_mean_s"], rel=1e-9)
    assert sixteen["ttft_p90_s"] == pytest.approx(2 * eight["ttft_mean_s"], rel=1e-9)
    # the default budget (8,192 tokens) holds 8 of these 1,000-token prompts: the same single step
    assert P.inference(concurrency=8, synchronized=True, **H100)["ttft_p90_s"] == pytest.approx(
        P.inference(concurrency=8, synchronized=True, **H100)["ttft_mean_s"], rel=1e-12)


def test_a_short_run_counts_its_first_wave():
    """A load test of r requests per client measures the start burst in 1/r of its requests:
    the mean TTFT lies between the steady state and the first wave, nearer the wave for small r."""
    steady = P.inference(concurrency=50, **H100)
    once = P.inference(concurrency=50, requests_per_client=1, **H100)
    three = P.inference(concurrency=50, requests_per_client=3, **H100)
    assert once["ttft_mean_s"] == pytest.approx(steady["ttft_first_wave_s"], rel=1e-9)
    expected = steady["ttft_first_wave_s"] / 3 + steady["ttft_mean_s"] * 2 / 3
    assert three["ttft_mean_s"] == pytest.approx(expected, rel=1e-9)
    assert steady["ttft_mean_s"] < three["ttft_mean_s"] < once["ttft_mean_s"]
    assert three["tpot_s"] == steady["tpot_s"]  # the start burst changes the wait, not the decode steps


def test_a_burst_larger_than_the_engine_waits_half_its_run_on_average():
    """A burst of N requests sent at once (vllm bench serve with no request rate) where the engine
    holds b < N: the (b + j)-th starts when the j-th completion frees a slot, so the mean TTFT over the
    burst is about half the time the engine takes to serve it all (N / its request rate) -- not the
    whole run, which a closed loop's steady slot wait (N / X - cycle) would give every request."""
    burst = dict(H100, model="Llama-3.1 70B", precision="bf16", tensor_parallel=2, n_devices=2,
                 input_tokens=4000, output_tokens=200)
    held = P.inference(concurrency=10_000, **burst)["most_sequences"]
    n = 20 * held
    r = P.inference(concurrency=n, requests_per_client=1, **burst)
    run_s = n / r["requests_per_s"]  # the whole burst at the engine's request rate
    assert r["ttft_mean_s"] == pytest.approx(r["ttft_first_wave_s"], rel=1e-9)
    assert 0.45 * run_s < r["ttft_mean_s"] < 0.6 * run_s, (r["ttft_mean_s"], run_s)


def test_requests_per_client_needs_a_closed_loop():
    with pytest.raises(ValueError, match="requests_per_client.*concurrency"):
        P.inference(requests_per_client=3, **H100)
    with pytest.raises(ValueError, match="request_rate"):
        P.inference(request_rate=1.0, requests_per_client=3, **H100)
    with pytest.raises(ValueError, match="requests_per_client"):
        P.inference(concurrency=4, requests_per_client=0, **H100)


def test_a_mixture_of_experts_client_with_a_slot_never_waits_for_one():
    """Four clients on eight H200 hold four of 170 sequence slots, so no client waits for a slot: the
    mean TTFT is half a step, the prompt and the prefill queue's wait. A mixture of experts reads more
    experts the more tokens a step carries, so the cycle's steps (each with the prompt share of every
    request) are longer than its TPOT by more than a prompt; that gap once read as a slot wait of
    about a second (DeepSeek-V3, 3,200-token prompts)."""
    r = P.inference(device="H200 SXM", model="DeepSeek-V3", precision="fp8", n_devices=8, tensor_parallel=8,
                    input_tokens=3200, output_tokens=800, concurrency=4)
    assert r["most_sequences"] > 4
    assert r["ttft_mean_s"] < 1.5 * (r["prefill_s"] + r["decode_step_s"]), (
        f"TTFT {r['ttft_mean_s']:.3f} s with every client holding a slot: a slot wait was counted")


def test_clients_in_step_repeat_the_first_wave():
    """A load test of fixed lengths keeps its clients in step (synchronized): every wave queues as the
    first, whatever the requests per client; the median is the mean, and the 90th percentile lies
    between the mean and the wave's last step."""
    steady = P.inference(concurrency=50, **H100)
    step = P.inference(concurrency=50, synchronized=True, **H100)
    three = P.inference(concurrency=50, synchronized=True, requests_per_client=3, **H100)
    assert step["ttft_mean_s"] == pytest.approx(steady["ttft_first_wave_s"], rel=1e-12)
    assert three["ttft_mean_s"] == step["ttft_mean_s"]
    assert step["ttft_s"] == step["ttft_mean_s"]
    first = P.inference(concurrency=1, synchronized=True, **H100)["ttft_first_wave_s"]  # one prefill, no one ahead
    assert first < step["ttft_mean_s"] < step["ttft_p90_s"] < 2 * step["ttft_mean_s"]
    assert step["ttft_mean_s"] > 5 * steady["ttft_mean_s"]
    # the longer wait lengthens each client's cycle: fewer tokens per second (Little's law)
    assert step["output_tokens_per_s"] < steady["output_tokens_per_s"]
    assert step["tpot_s"] == steady["tpot_s"]


def test_synchronized_needs_a_closed_loop():
    with pytest.raises(ValueError, match="synchronized.*concurrency"):
        P.inference(synchronized=True, **H100)
    with pytest.raises(ValueError, match="synchronized.*concurrency"):
        P.inference(request_rate=1.0, synchronized=True, **H100)
    with pytest.raises(ValueError, match="synchronized must be True or False"):
        P.inference(concurrency=4, synchronized="yes", **H100)


def test_the_waves_step_sum_is_the_prompt_by_prompt_sum():
    """The wave's exact sum of ceil(k·L/C) over its prompts (a vectorised floor-sum, no loop over the
    prompts) equals the sum taken prompt by prompt, for prompts shorter and longer than the budget."""
    from accelkit.projection.serving_load import _floor_sum

    n, L, C = np.meshgrid([1, 2, 7, 50, 300], [1, 128, 200, 1000, 7000, 9000, 20000], [512, 2048, 8192])
    fast = _floor_sum(n, C, L, L + C - 1)
    slow = np.vectorize(lambda n, L, C: sum(math.ceil(k * L / C) for k in range(1, n + 1)))(n, L, C)
    assert (fast == slow).all(), "the floor-sum differs from the prompt-by-prompt sum"


def test_a_mean_output_length_that_is_not_whole_bounds_the_requests_a_load_test_counted():
    from accelkit.projection.load_tests import requests_counted_at_least

    # 1,000 − 1/1,300: the course table's Llama-3 8B, two H100 FP16, 100 clients of 200 tokens
    assert requests_counted_at_least(999.9992307692307, 1000) == 1300
    assert requests_counted_at_least(1000.0181818181818, 1000) == 55, "a mean above the nominal length bounds it too"
    assert requests_counted_at_least(1000.0, 1000) == 1, "a whole mean says nothing about the count"
    assert requests_counted_at_least(1000.0 - math.pi * 1e-7, 1000) == 1, (
        "a mean that is no fraction with a small denominator must bound nothing, not invent a count")


def test_the_course_tables_request_bounds_are_what_its_readme_says(monkeypatch):
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root / "tools"))
    import course_table_requests  # tools/course_table_requests.py

    runs = course_table_requests.course_table_bounds(pd.read_csv(root / "data" / "validation" / "measured.csv"))
    bounded = runs[runs["requests_at_least"] > 1]
    readme = (root / "data" / "validation" / "README.md").read_text(encoding="utf-8")
    said = f"{len(bounded)} of its {len(runs)} load runs show such a bound"
    assert said in readme, f"data/validation/README.md should say '{said}'"
    most = bounded.set_index("case_id")["requests_at_least"]
    assert most["dli-nim-l3-8b-h100-fp16-tp2-c100-200-1000-ttft"] == 1300
    assert most["dli-nim-l3-70b-h100-fp16-tp8-c100-7000-1000-ttft"] == 900


def test_the_course_tables_context_cost_is_what_its_readme_says(monkeypatch):
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root / "tools"))
    import course_table_context_cost  # tools/course_table_context_cost.py

    measured = pd.read_csv(root / "data" / "validation" / "measured.csv")
    slopes = course_table_context_cost.context_slopes(course_table_context_cost.course_table_one_client(measured))
    assert len(slopes) == 12 and (slopes["points"] == 3).all(), "every setup of the course table has three prompts"
    readme = (root / "data" / "validation" / "README.md").read_text(encoding="utf-8")
    cycles = slopes["cycles_per_token_per_layer"]
    us = slopes["us_per_layer_per_1k"]
    for said in (f"Pearson's r at least {slopes['linearity'].min():.3f}",
                 f"by {us.min():.1f}-{us.max():.1f} µs per layer per 1,000 tokens",
                 f"{cycles.min():.1f}-{cycles.max():.1f} cycles of the"):
        assert said in readme, f"data/validation/README.md should say '{said}'"
    # the same setup at two tensor-parallel degrees: each device holds half the heads, the slope stays
    pairs = slopes.groupby(["model", "device", "precision"])["slope_s_per_token"].agg(["min", "max", "count"])
    pairs = pairs[pairs["count"] == 2]
    assert len(pairs) == 5
    spread = pairs["max"] / pairs["min"] - 1.0
    assert (spread < 0.02).all(), f"the README says the slope stays within 2 % across tensor parallelism: {spread}"
