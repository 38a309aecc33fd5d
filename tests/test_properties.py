"""Property tests (hypothesis): monotonicity, invariants, bad inputs -> clear errors."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelkit import comm, demand, energy, llm, memory, roofline, tco

positive = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
params_st = st.floats(min_value=1e6, max_value=2e12, allow_nan=False)
fraction = st.floats(min_value=1e-3, max_value=1.0, allow_nan=False)
precisions = st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"])
bad_number = st.one_of(
    st.just(float("nan")), st.just(float("inf")), st.floats(max_value=0.0, allow_nan=False, allow_infinity=False)
)


@given(params_st, params_st, precisions, st.sampled_from([0, 1, 2, 3]), st.integers(1, 1024))
def test_more_parameters_never_need_less_memory(p1, p2, precision, stage, n):
    lo, hi = sorted((p1, p2))
    assert memory.weight_bytes(lo, precision) <= memory.weight_bytes(hi, precision)
    assert memory.training_bytes(lo, zero_stage=stage, n_devices=n) <= memory.training_bytes(hi, zero_stage=stage, n_devices=n)


@given(params_st, st.sampled_from([1, 2, 3]), st.integers(2, 4096))
def test_zero_stages_never_increase_per_device_memory(params, stage, n):
    assert memory.training_bytes(params, zero_stage=stage, n_devices=n) <= memory.training_bytes(
        params, zero_stage=stage - 1, n_devices=n
    )


@given(positive, positive, positive, positive)
def test_more_bandwidth_never_makes_a_memory_bound_step_slower(weights, kv, bw1, bw2):
    lo, hi = sorted((bw1, bw2))
    assert llm.decode_seconds_per_token(weights, kv, hi) <= llm.decode_seconds_per_token(weights, kv, lo)


@given(positive, positive, positive, positive)
def test_attainable_never_exceeds_either_roof(peak, bw1, bw2, intensity):
    lo, hi = sorted((bw1, bw2))
    a_lo = roofline.attainable_flops(peak, lo, intensity)
    a_hi = roofline.attainable_flops(peak, hi, intensity)
    assert a_lo <= a_hi <= peak * (1 + 1e-12)
    assert a_lo <= lo * intensity * (1 + 1e-12)


@given(positive, positive, fraction)
def test_devices_needed_is_enough(required, peak, util):
    n = demand.devices_needed(required, peak, util)
    assert n >= 1 and n * peak * util >= required * (1 - 1e-9)


@given(st.integers(1, 4096), st.floats(1e3, 1e12), st.floats(1e6, 1e12))
def test_allreduce_time_is_bounded_by_twice_the_message(n, nbytes, bw):
    t = comm.ring_allreduce_seconds(nbytes, n, bw)
    assert 0 <= t < 2 * nbytes / bw + 1e-12


settings_tco = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@settings_tco
@given(st.floats(0.01, 100), st.floats(0.01, 100), st.floats(0.5, 24), st.integers(1, 60))
def test_cloud_tco_is_monotone_in_price_and_hours(p1, p2, hours, months):
    lo, hi = sorted((p1, p2))
    cheap = tco.compare([tco.cloud("c", lo, hours_per_day=hours)], months)["total_usd"][0]
    dear = tco.compare([tco.cloud("c", hi, hours_per_day=hours)], months)["total_usd"][0]
    assert cheap <= dear
    fewer = tco.compare([tco.cloud("c", lo, hours_per_day=hours / 2)], months)["total_usd"][0]
    assert fewer <= cheap


@settings_tco
@given(st.floats(1, 1e5), st.floats(1, 1e5), st.floats(1, 2000), st.floats(1, 24), st.integers(1, 60))
def test_edge_tco_is_monotone_in_price_and_hours(p1, p2, watts, hours, months):
    lo, hi = sorted((p1, p2))
    a = tco.compare([tco.edge("e", 4, lo, watts, hours_per_day=hours)], months)["total_usd"][0]
    b = tco.compare([tco.edge("e", 4, hi, watts, hours_per_day=hours)], months)["total_usd"][0]
    c = tco.compare([tco.edge("e", 4, lo, watts, hours_per_day=min(24, hours * 1.5))], months)["total_usd"][0]
    assert a <= b and a <= c + 1e-6


@given(bad_number)
def test_bad_sizes_raise_value_error(bad):
    """Each error names the bad argument first ("<name> must be ... > 0"), not any ValueError."""
    for argument, call in (
        ("params", lambda: demand.training_flops(bad, 1e9)),
        ("params", lambda: memory.weight_bytes(bad, "bf16")),
        ("peak_flops", lambda: roofline.ridge_point(bad, 1e12)),
        ("bandwidth", lambda: roofline.ridge_point(1e12, bad)),
        ("bandwidth", lambda: llm.decode_seconds_per_token(1e9, 0, bad)),
        ("bandwidth", lambda: comm.ring_allreduce_seconds(1e9, 8, bad)),
        ("watts", lambda: energy.flops_per_watt(1e12, bad)),
        ("instances", lambda: tco.cloud("c", 1.0, instances=bad)),
    ):
        with pytest.raises(ValueError, match=rf"^{argument} must be .*> 0; got "):
            call()


@given(st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0001, allow_nan=False, allow_infinity=False), st.just(float("nan"))))
def test_utilization_outside_zero_one_raises(u):
    with pytest.raises(ValueError, match="utilization"):
        demand.training_seconds(1e20, 8, 1e14, u)
    with pytest.raises(ValueError, match="utilization"):
        llm.prefill_seconds(1e15, 1e14, u)


@given(st.text(min_size=1, max_size=6).filter(lambda s: s.lower() not in memory.BYTES_PER_PARAM))
def test_unknown_precision_raises(name):
    with pytest.raises(ValueError, match="precision"):
        memory.weight_bytes(1e9, name)
