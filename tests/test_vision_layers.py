"""Image models and encoders priced layer by layer, on a named software stack.

The layer tables are checked against the figures their sources publish (torchvision's
parameter and multiply-add counts), and the stacks against what their documentation
says they do: a fused stack runs fewer kernels and moves fewer bytes than an eager one.
"""

from __future__ import annotations

import numpy as np
import pytest

from accelkit.models import find_model
from accelkit.projection import vision
from accelkit.projection.stacks import default_stack, load_stacks, stack_row
from accelkit.projection.vision_layers import layer_table, resnet50_layers


def test_resnet50_layers_add_up_to_torchvisions_published_counts():
    t = resnet50_layers()
    # torchvision ResNet50_Weights.IMAGENET1K_V1: 'GFLOPS 4.09' (multiply-adds), num_params 25,557,032
    assert t["flops"].sum() / 2 == pytest.approx(4.09e9, rel=1e-3)
    bn_channels = 64 + sum(blocks * (2 * w + 4 * w) + 4 * w for w, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)))
    assert t["weights"].sum() + 2 * bn_channels == 25_557_032, "conv + fc weights + batch-norm scales and shifts"
    assert (t["layer"].str.startswith("conv")).sum() == 53, "49 convolutions of the 50 layers' count, 4 projections"


def test_vit_b16_layers_add_up_to_the_published_flops():
    row = find_model("ViT-B/16")
    assert layer_table(row)["flops"].sum() == pytest.approx(row["forward_flop_per_sample"], rel=2e-3)


def test_bert_layers_hold_twelve_d_squared_weights_per_layer():
    row = find_model("BERT-large")
    t = layer_table(row, 384)
    assert t["weights"].sum() == 24 * 12 * 1024 ** 2
    # the attention's QK^T and AV grow with the square of the sequence: 384 tokens cost more than 3× 128
    assert layer_table(row, 384)["flops"].sum() > 3 * layer_table(row, 128)["flops"].sum()


def test_models_without_a_layer_table_say_so():
    assert layer_table(find_model("YOLOv8s")) is None


def test_an_eager_stack_is_slower_than_a_fused_one_at_batch_one_and_runs_more_kernels():
    fused = vision("T4", "ResNet-50", precision="fp16", stack="tensorrt")
    eager = vision("T4", "ResNet-50", precision="fp16", stack="pytorch-eager")
    assert eager["kernels"] > fused["kernels"] == 56
    assert eager["latency_s"] > 2 * fused["latency_s"]
    assert fused["stack"] == "tensorrt" and eager["stack"] == "pytorch-eager"


def test_an_eager_stack_moves_more_feature_map_bytes_at_large_batch():
    fused = vision("A100 80GB SXM", "ResNet-50", precision="fp16", batch_size=256, stack="tensorrt")
    eager = vision("A100 80GB SXM", "ResNet-50", precision="fp16", batch_size=256, stack="tensorflow")
    assert eager["frames_per_s"] < 0.8 * fused["frames_per_s"]


def test_each_device_takes_its_vendors_default_stack():
    frame = vision(["T4", "Instinct MI300X"], "ResNet-50", precision="fp16")
    assert frame.set_index("name")["stack"].to_dict() == {"T4": "tensorrt", "Instinct MI300X": "vendor-compiler"}
    assert default_stack("NVIDIA") == "tensorrt"


def test_an_unknown_stack_names_the_field_and_close_matches():
    with pytest.raises(ValueError, match=r"stack must be one of .*Did you mean 'tensorrt'"):
        vision("T4", "ResNet-50", stack="tensorrtt")


def test_every_stack_row_cites_its_documentation():
    stacks = load_stacks()
    assert stacks["source_url"].str.startswith("https://").all()
    assert set(stacks["execution"]) == {"fused", "eager"}
    assert stack_row("PyTorch-Eager")["execution"] == "eager"


def test_the_range_of_a_frame_time_holds_the_projection():
    r = vision("Jetson AGX Orin 64GB", "ResNet-50", precision="int8")
    assert r["latency_s_low"] < r["latency_s"] < r["latency_s_high"]
    assert np.isfinite(r["frames_per_s"])


def test_a_chip_with_on_chip_memory_runs_at_its_vendors_published_rate():
    # Hailo Model Zoo, HAILO8 object detection table: YOLOv8s 396 FPS (batch 1 and 8), YOLOv8m 58 / 112
    r = vision("Hailo-8", "YOLOv8s", precision="int8")
    assert r["frames_per_s"] == pytest.approx(396.0)
    assert r["frames_per_s_low"] == r["frames_per_s_high"] == r["frames_per_s"], "a published figure has no model term"
    assert "published: 396 frames/s at batch 1" in r["matmul_source"] and "hailo_model_zoo" in r["matmul_source"]
    assert vision("Hailo-8", "YOLOv8m", precision="int8", batch_size=8)["frames_per_s"] == pytest.approx(112.0)
    assert vision("Hailo-8", "YOLOv8m", precision="int8", batch_size=4)["frames_per_s"] == pytest.approx(58.0), \
        "between published batches the smaller one's rate holds"


def test_a_model_the_vendor_does_not_list_stays_unknown_on_such_a_chip():
    frame = vision(["Coral Edge TPU", "Hailo-8"], "YOLOv8s", precision="int8").set_index("name")
    assert not frame.loc["Coral Edge TPU", "feasible"]
    assert "no published rate of YOLOv8s" in frame.loc["Coral Edge TPU", "why"]
    with pytest.raises(ValueError, match="no published rate of ResNet-50"):
        vision("Coral Edge TPU", "ResNet-50", precision="int8")  # Coral lists ResNet-50 only at 299×299


def test_an_eager_stack_without_a_layer_table_says_so_not_that_an_efficiency_is_missing():
    # YOLOv8s has no layer table: an eager stack's per-kernel time cannot be counted, and the
    # reason must say that (it used to blame a missing matmul efficiency, which T4 has)
    with pytest.raises(ValueError, match="pytorch-eager stack runs each layer as its own kernel.*YOLOv8s"):
        vision("T4", "YOLOv8s", "fp16", 1, stack="pytorch-eager")
    assert np.isfinite(vision("T4", "YOLOv8s", "fp16", 1)["frame_ms"])  # the fused default projects it


def test_the_eager_no_table_reason_reads_in_chinese():
    from accelkit.i18n import set_language
    from accelkit.select.reasons import _why_words

    frame = vision(["T4"], "YOLOv8s", "fp16", 1, stack="pytorch-eager")
    set_language("zh_CN")
    try:
        words = _why_words(frame["why"].iloc[0])
    finally:
        set_language("en")
    assert "逐层表" in words and "pytorch-eager" in words, words


def test_an_fp32_layer_on_an_eager_stack_runs_at_its_sgemm_ceiling_not_the_tensor_core_share():
    # the eager share is what tensor-core kernels reach; fp32 runs CUDA-core SGEMM, which its ceiling measures
    def bert(precision, share):
        return vision("T4", "BERT-large", precision=precision, batch_size=8, seq_len=384, stack="tensorflow-xla",
                      vision_gemm_fraction_eager=share)["latency_s"]

    assert bert("fp32", 0.2) == pytest.approx(bert("fp32", 0.9), rel=1e-12), (
        "an fp32 projection on an eager stack moved with the tensor-core eager share")
    assert bert("fp16", 0.2) > 2.0 * bert("fp16", 0.9), "an fp16 projection no longer follows the eager share"
    # AMD's Instinct parts run FP32 on their matrix cores: the eager share still applies there
    mi300x = [vision("Instinct MI300X", "ResNet-50", precision="fp32", batch_size=64, stack="pytorch-eager",
                     vision_gemm_fraction_eager=share)["latency_s"] for share in (0.2, 0.9)]
    assert mi300x[0] > 2.0 * mi300x[1], "an MI300X fp32 projection stopped following the eager share"


def test_a_devices_fp32_matmul_efficiency_is_its_own_sgemm_measurement_not_its_bf16_figure():
    from accelkit.catalog import load_catalog
    from accelkit.projection.efficiency import efficiency_table

    catalog = load_catalog()
    table = efficiency_table(catalog).set_axis(catalog["name"])
    t4 = table.loc["T4"]
    # T4: 4.43 TFLOPS of float32 torch.mm (zzc0721/torch-performance-test-data) of the 8.1 TFLOPS datasheet peak
    assert t4["matmul_fp32"] == pytest.approx(4.43 / 8.1, rel=1e-6)
    assert "bf16" not in t4["matmul_fp32_source"], t4["matmul_fp32_source"]
    assert table.loc["T4", "matmul_fp16"] == pytest.approx(42.71 / 65.0, rel=1e-6), "the fp16 figure moved too"


def test_an_efficiency_standing_in_from_bf16_names_the_bf16_figure_it_measured():
    from accelkit.catalog import load_catalog
    from accelkit.projection.efficiency import efficiency_table

    catalog = load_catalog()
    a10 = efficiency_table(catalog).set_axis(catalog["name"]).loc["A10"]
    # the A10 has one published bf16 matmul figure and no fp32 one: its fp32 row stands in from bf16, and says so
    assert a10["matmul_fp32"] == pytest.approx(a10["matmul_bf16"])
    assert a10["matmul_fp32_source"].startswith("measured bf16 matmul of this device"), a10["matmul_fp32_source"]
    assert a10["matmul_fp32_source"].endswith("(its bf16 figure: no fp32 measurement)"), a10["matmul_fp32_source"]
