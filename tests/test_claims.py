"""The source articles' claims, recomputed: hand-worked values from datasheet figures.

Catalogue figures used (data/accelerators.csv, each row's ``source_url``):
A100 80GB SXM 312 dense BF16 TFLOP/s at 400 W (NVIDIA A100 datasheet); T4 130
dense INT8 TOP/s, 70 W, $0.526 per hour in the cloud (NVIDIA T4 datasheet; the
catalogue's cloud price); Jetson Orin Nano Super 8GB 33 dense INT8 TOP/s (half
its 67 sparse), 25 W, $249 (NVIDIA Jetson Orin Nano Super datasheet and list
price); Jetson Xavier NX 8GB 21 INT8 TOP/s at 15 W. YOLOv8s: 28.8 GFLOP per
640×640 frame (Ultralytics' yolov8.yaml).
"""

from __future__ import annotations

import pytest

from accelkit import claims


def test_a100_efficiency_matches_the_article_and_orin_is_reported_per_int8_top():
    table, verdict = claims.efficiency_claims()
    a100 = table.iloc[0]
    # 312 TFLOP/s / 400 W = 0.78 TFLOP/s per W, the article's figure
    assert a100["catalogue_per_w"] == pytest.approx(0.78), "A100 should give 312 / 400 = 0.78 TFLOP/s per W"
    assert a100["article_per_w"] == pytest.approx(0.78), "the article's A100 figure is 312 / 400 = 0.78"
    nano = table.set_index("device").loc["Jetson Orin Nano Super 8GB"]
    # 33 dense INT8 TOP/s / 25 W = 1.32 TOP/s per W; the article's 40 / 50 = 0.8
    assert nano["catalogue_per_w"] == pytest.approx(1.32), "Orin Nano Super should give 33 / 25 = 1.32 TOP/s per W"
    assert nano["article_per_w"] == pytest.approx(0.8), "the article's Orin figure is 40 / 50 = 0.8"
    assert "0.78 TFLOP/s per W" in verdict, "the verdict should state the A100's figure"


def test_latency_claim_adds_network_upload_overhead_and_inference():
    """Cloud = round trip + upload + server overhead + inference; inference is one INT8
    frame through projection.vision: F / (INT8 peak × utilisation) + the unhidden weight
    traffic + a fused stack's kernels (YOLOv8s has no layer table)."""
    table, verdict = claims.latency_edge_vs_cloud(utilization=0.3, rtt_ms=40.0, uplink_mbps=20.0, frame_kb=150.0,
                                                  server_overhead_ms=20.0, edge_overhead_ms=10.0)
    ms = table.groupby("path")["ms"].sum()
    parts = table.set_index("component")["ms"]
    # upload: 150 kB × 8 bit / 20 Mbit/s = 60 ms
    assert parts["frame upload"] == pytest.approx(60.0), "a 150 kB frame over 20 Mbit/s should take 60 ms"
    from accelkit.projection.constants import constants

    k = constants()
    overlap = 1 - k["roofline_overlap"]
    # a fused ResNet-50's 56 kernels, each vision_kernel_cycles_fused cycles at the device's clock
    t4_floor_ms, edge_floor_ms = (56 * k["vision_kernel_cycles_fused"] / hz * 1e3 for hz in (1590e6, 1020e6))
    # T4: 28.8e9 / (130e12 × 0.3) = 0.738462 ms; 11,166,560 B / 239.8e9 B/s = 0.046566 ms; boost clock 1,590 MHz
    t4 = 0.738462 + overlap * 0.046566 + t4_floor_ms
    assert parts["inference on T4"] == pytest.approx(t4, rel=1e-5), \
        "T4 inference should be 28.8 GFLOP / 39 TOP/s + weight traffic + the kernels' floor"
    # cloud: 40 + 60 + 20 + the T4's frame
    assert ms["cloud"] == pytest.approx(120.0 + t4, rel=1e-6), "the cloud path should be the sum of its four parts"
    # edge: 28.8e9 / (33e12 × 0.3) = 2.909091 ms; 11,166,560 B / 80.951e9 B/s = 0.137943 ms, the kernels at the Orin
    # Nano Super's 1,020 MHz, + 10 ms local overhead
    edge = 2.909091 + overlap * 0.137943 + edge_floor_ms + 10.0
    assert ms["edge"] == pytest.approx(edge, rel=1e-6), "the edge path should be inference plus local overhead"
    assert f"{ms['cloud']:.0f} ms" in verdict and f"{ms['edge']:.0f} ms" in verdict, "the verdict should state both totals"


def test_edge_vs_cloud_saving_from_purchase_energy_maintenance_and_rent():
    """Owned: purchase + energy (W × 24 h × 365.25/12 days / 1000 × tariff) + a yearly
    maintenance fraction; cloud: hourly rent around the clock (the cost-of-ownership
    definitions of :mod:`accelkit.tco`; an internal-consistency check, not a published example)."""
    r = claims.edge_vs_cloud(streams=10, fps=30.0, utilization=0.3, horizon_months=36, electricity_usd_per_kwh=0.15,
                             edge_maintenance_per_year=0.10)
    # need: 10 × 30 × 28.8e9 = 8.64e12 OP/s; Orin Nano Super 33e12 × 0.3 = 9.9e12 -> 1 unit; T4 3.9e13 -> 1
    assert r["required_ops"] == pytest.approx(8.64e12), "10 streams × 30 fps × 28.8 GFLOP = 8.64 TOP/s"
    assert r["edge_units"] == 1 and r["cloud_instances"] == 1, "one Orin Nano Super and one T4 cover 8.64 TOP/s at 30 %"
    totals = r["compare"].set_index("kind")["total_usd"]
    # edge: $249 + 25 W × 24 h × 30.4375 d / 1000 × $0.15 × 36 = $98.6175 + 0.10 × $249 / 12 × 36 = $74.70
    #       = $422.3175 (no residual value: the 3-year life ends with the horizon)
    assert totals["edge"] == pytest.approx(422.3175), "edge cost should be purchase + energy + maintenance"
    # cloud: $0.526 × 24 h × 30.4375 d × 36 = $13,832.748
    assert totals["cloud"] == pytest.approx(13832.748), "cloud cost should be hourly rent around the clock"
    # saving: 1 − 422.3175 / 13,832.748 = 0.969470
    assert r["saving"] == pytest.approx(0.969470, abs=1e-6), "the saving should be 1 − edge / cloud"


def test_edge_table_flags_figures_that_do_not_match_the_datasheet():
    table, _ = claims.edge_table_claims()
    by_device = table.set_index("device")
    # Xavier NX: the article's 21 TOP/s at 15 W equals the datasheet's 21 INT8 TOP/s at 15 W
    assert by_device.loc["Jetson Xavier NX 8GB", "comment"] == "INT8 figure matches", \
        "the Xavier NX row matches its datasheet and should carry no other remark"
    # Jetson Nano: no INT8 figure; the article's 0.5 is its FP16 TFLOP/s
    assert "FP16 figure" in by_device.loc["Jetson Nano 4GB", "comment"], \
        "the Jetson Nano's 0.5 should be flagged as an FP16 figure"


def test_a_lead_from_batch_b_up_holds_at_every_larger_batch():
    import pandas as pd

    ahead = pd.Series([False, True, False, True, True], index=[1, 2, 4, 8, 16])
    assert claims._from_batch_up(ahead) == 8, "ahead at 2 but behind at 4 is no lead 'from batch 2 up'"
    assert claims._from_batch_up(pd.Series([True, False], index=[1, 2])) is None, "behind at the largest batch"


def test_the_bert_claims_int8_sentence_says_what_its_table_shows():
    table, verdict = claims.bert_t4_vs_v100()
    v100 = table[table["device"] == "V100 PCIe 32GB"].set_index("batch")["latency_ms"]
    t4_int8 = table[(table["device"] == "T4") & (table["precision"] == "int8")].set_index("batch")["latency_ms"]
    ratio = t4_int8 / v100
    lead, level = table.attrs["t4_int8_faster_from_batch"], table.attrs["t4_int8_level_from_batch"]
    if lead is not None:
        assert (ratio[ratio.index >= lead] < 1 - claims.TIE).all(), f"'overtakes from batch {lead}' but {ratio}"
        assert "overtake" in verdict
    else:
        assert "overtake" not in verdict, f"the T4 in int8 is never {claims.TIE:.0%} ahead: {ratio.round(3)}"
    if level is not None and lead is None:
        assert (ratio[ratio.index >= level] <= 1 + claims.TIE).all()
        assert f"from batch {level} up" in verdict and "draw level" in verdict, verdict
