"""A custom model known by its parameter count (issue 25, item 10): serving gets a KV cache and
an attention cost from a shape -- the one given (n_layers, d_model) or the nearest preset's,
named in the decision's words -- or a clear error; never a silent zero."""

import pytest

import accelkit
from accelkit import projection, select, sizing
from accelkit.projection.for_scenario import project_scenario
from accelkit.scenario import Scenario, ScenarioError


@pytest.fixture(scope="module")
def few():
    cat = accelkit.load_catalog()
    return cat[cat["name"].isin(["H100 SXM", "A100 80GB SXM"])]


def _serve(**kw):
    base = dict(workload="inference", model="custom", params=8e9, n_devices=1, batch_size=8, seq_len=2048)
    base.update(kw)
    return Scenario(**base)


def test_custom_8b_has_a_kv_cache_like_its_nearest_preset():
    need = sizing.memory_need(_serve())
    assert need["kv_cache"] > 0
    ref = sizing.memory_need(_serve(model="Llama-3.1 8B", params=None))
    assert need["kv_cache"] == pytest.approx(ref["kv_cache"])


def test_custom_ttft_counts_attention_beyond_weights_only_prefill(few):
    from accelkit.projection.shapes import custom_decoder, resolve_model

    shaped = project_scenario(_serve(), few).set_index("name")
    # the same layer weights without a shape: 2·N FLOP per prompt token, no attention, no KV cache
    # (the embedding table is a lookup and the output head runs for the last token only, so N = the layers')
    body = resolve_model(custom_decoder(8e9)[0]).body_params
    weights_only = projection.inference("H100 SXM", {"name": "custom", "params": body}, batch_size=8,
                                        input_tokens=2048, output_tokens=256)
    assert shaped.loc["H100 SXM", "ttft_s"] > weights_only["ttft_s"]
    assert shaped.loc["H100 SXM", "tpot_s"] > weights_only["tpot_s"]  # decode reads the KV cache too


def test_decision_names_the_inferred_shape(few):
    ranked = select.rank(_serve(), catalog=few)
    words = "shape inferred from Llama-3.1 8B: 32 layers, d_model 4096, GQA 8 KV heads"
    assert ranked["configuration"].str.contains(words, regex=False).all()
    assert ranked["reason"].str.contains(words, regex=False).any()


def test_a_13b_custom_model_borrows_llama2_13b():
    from accelkit.projection.shapes import custom_decoder

    model, words = custom_decoder(13.5e9)
    assert model["n_layers"] == 40 and model["d_model"] == 5120
    assert "Llama-2 13B" in words and "no GQA" in words


def test_given_layers_and_width_are_used(few):
    s = _serve(params=20e9, n_layers=48, d_model=6144)
    need = sizing.memory_need(s)
    # 2 (K and V) × 48 heads × 128 × 48 layers × 2304 tokens × 8 sequences × 2 bytes
    assert need["kv_cache"] == pytest.approx(2 * 48 * 128 * 48 * (2048 + 256) * 8 * 2)
    ranked = select.rank(s, catalog=few)
    assert ranked["configuration"].str.contains("shape given: 48 layers, d_model 6144").all()


def test_no_sensible_shape_asks_for_layers_and_width():
    with pytest.raises(ScenarioError, match="n_layers and d_model"):
        sizing.memory_need(_serve(params=3e12))
    with pytest.raises(ScenarioError, match="d_model"):
        sizing.memory_need(_serve(n_layers=32))


def test_training_a_params_only_model_is_unchanged():
    s = Scenario(workload="training", model="custom", params=1e9, tokens=2e10)
    assert sizing.model_of(s)["preset"] is None
    assert sizing.compute_need(s)["total_flops"] == pytest.approx(6 * 1e9 * 2e10)
