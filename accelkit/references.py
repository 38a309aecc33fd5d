"""The references behind the numbers, and which chapter uses which.

A chapter's last cell prints :func:`chapter_references` (PyBaMM-style): the papers,
datasheets and documents behind what that chapter showed, plus the catalogue
sources of the devices on screen.
"""

from __future__ import annotations

__all__ = ["REFERENCES", "CHAPTERS", "chapter_references", "format_references"]

REFERENCES = {
    "kaplan2020": "J. Kaplan et al., Scaling Laws for Neural Language Models, arXiv:2001.08361 (2020), §2.1.",
    "hoffmann2022": "J. Hoffmann et al., Training Compute-Optimal Large Language Models, arXiv:2203.15556 (2022).",
    "brown2020": "T. Brown et al., Language Models are Few-Shot Learners, arXiv:2005.14165 (2020), appendix D.",
    "chowdhery2022": "A. Chowdhery et al., PaLM: Scaling Language Modeling with Pathways, arXiv:2204.02311 (2022), appendix B (MFU).",
    "touvron2023": "H. Touvron et al., Llama 2: Open Foundation and Fine-Tuned Chat Models, arXiv:2307.09288 (2023), table 2.",
    "rajbhandari2020": "S. Rajbhandari et al., ZeRO: Memory Optimizations Toward Training Trillion Parameter Models, SC20, arXiv:1910.02054.",
    "korthikanti2022": "V. Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models, arXiv:2205.05198 (2022).",
    "kwon2023": "W. Kwon et al., Efficient Memory Management for LLM Serving with PagedAttention (vLLM), SOSP 2023, arXiv:2309.06180.",
    "dettmers2022": "T. Dettmers et al., 8-bit Optimizers via Block-wise Quantization, ICLR 2022, arXiv:2110.02861.",
    "shazeer2018": "N. Shazeer, M. Stern, Adafactor: Adaptive Learning Rates with Sublinear Memory Cost, ICML 2018.",
    "williams2009": "S. Williams, A. Waterman, D. Patterson, Roofline: An Insightful Visual Performance Model, CACM 52(4), 2009.",
    "nvidia_perf_guide": "NVIDIA, GPU Performance Background User's Guide (Deep Learning Performance docs): GEMM arithmetic intensity.",
    "dao2022": "T. Dao et al., FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness, NeurIPS 2022.",
    "pope2023": "R. Pope et al., Efficiently Scaling Transformer Inference, MLSys 2023, arXiv:2211.05102.",
    "patarasuk2009": "P. Patarasuk, X. Yuan, Bandwidth optimal all-reduce algorithms for clusters of workstations, JPDC 69(2), 2009.",
    "nccl_tests": "NVIDIA nccl-tests, doc/PERFORMANCE.md: algorithm vs bus bandwidth of collectives.",
    "jia2018": "X. Jia et al., Highly Scalable Deep Learning Training System with Mixed-Precision: Training ImageNet in Four Minutes, arXiv:1807.11205 (2018).",
    "li2020": "S. Li et al., PyTorch Distributed: Experiences on Accelerating Data Parallel Training, VLDB 2020.",
    "ieee754": "IEEE Std 754-2019, IEEE Standard for Floating-Point Arithmetic.",
    "micikevicius2018": "P. Micikevicius et al., Mixed Precision Training, ICLR 2018, arXiv:1710.03740.",
    "micikevicius2022": "P. Micikevicius et al., FP8 Formats for Deep Learning, arXiv:2209.05433 (2022).",
    "jacob2018": "B. Jacob et al., Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference, CVPR 2018.",
    "patterson2021": "D. Patterson et al., Carbon Emissions and Large Neural Network Training, arXiv:2104.10350 (2021).",
    "greengrid_pue": "The Green Grid, PUE: A Comprehensive Examination of the Metric, White Paper 49 (2012).",
    "brealey": "R. Brealey, S. Myers, F. Allen, Principles of Corporate Finance, ch. 2 and 6 (discounted cash flows).",
    "seed_003": "Source article (seed 003): AI accelerator selection guide -- five rules, scenarios, buying mistakes (figures checked here).",
    "seed_000": "Source article (seed 000): AI accelerator primer -- device detection, gradient accumulation, mixed precision.",
    "triantaphyllou2000": "E. Triantaphyllou, Multi-Criteria Decision Making Methods: A Comparative Study, Springer (2000), ch. 2 (weighted-sum model).",
    "aiconfigurator": "NVIDIA, aiconfigurator (github.com/ai-dynamo/aiconfigurator): search of parallelism, batch and precision under TTFT/TPOT targets for the best throughput per GPU.",
    "lahdelma2001": "R. Lahdelma, P. Salminen, SMAA-2: Stochastic Multicriteria Acceptability Analysis for Group Decision Making, Operations Research 49(3), 2001.",
    "purchase_prices": "accelkit purchase prices, data/purchase_prices.csv: list, street, reseller, system-share or analyst figure per row (price_kind, price_date, source_url).",
    "device_facts": "accelkit device facts, data/device_facts.csv: licence, NVLink/P2P, ECC, cooling facts, each with its quote and source_url.",
    "catalogue": "accelkit catalogue, data/accelerators.csv: one datasheet / vendor page per device (source_url column).",
    "cloud_prices": "accelkit cloud prices, data/cloud_prices.csv: one pricing page per instance (source_url, price_date).",
    "models": "accelkit model presets, data/models.csv: paper or model card per model (source_url column).",
    "ecosystem_table": "accelkit software-ecosystem table, data/ecosystem.csv: one documentation page per (stack, criterion) (source_url, retrieved); unknown rows stay unsourced.",
    "pytorch_get_started": "PyTorch, Get Started: compute-platform builds of upstream PyTorch (CUDA, ROCm, CPU), pytorch.org/get-started.",
    "hipify": "AMD ROCm documentation, HIPIFY: translating CUDA source to HIP with hipify-clang and hipify-perl (conversion not fully automatic), rocm.docs.amd.com/projects/HIPIFY.",
    "ascend_c": "Huawei CANN 8.0 documentation, Ascend C operator development guide, hiascend.com (canncommercial/800, opdevg).",
    "ort_execution_providers": "ONNX Runtime documentation, Execution Providers (CUDA, TensorRT, MIGraphX, OpenVINO, CANN, CoreML ...), onnxruntime.ai/docs/execution-providers.",
    "openvino_model_preparation": "Intel OpenVINO 2025 documentation, Model Preparation: converting PyTorch, TensorFlow, ONNX and JAX models (docs.openvino.ai).",
    "nvidia_matmul_guide": "NVIDIA, Matrix Multiplication Background User's Guide, DU-09799-001 (Deep Learning Performance docs, 2023): GEMM FLOPs, tile and wave quantisation.",
    "bekman_mamf": "S. Bekman, Machine Learning Engineering, 'Maximum Achievable Matmul FLOPS (MAMF) Finder', github.com/stas00/ml-engineering (compute/accelerator/benchmarks).",
    "sander2025": "B. Sander, Understanding Peak, Max-Achievable & Delivered FLOPs, AMD ROCm blog (Feb 2025).",
    "mccalpin1995": "J. D. McCalpin, Memory Bandwidth and Machine Balance in Current High Performance Computers, IEEE TCCA Newsletter (Dec 1995) -- the STREAM benchmark.",
    "torch_benchmark": "PyTorch documentation, Benchmark Utils - torch.utils.benchmark (Timer: warm-up, synchronisation, thread count, median of replicates).",
    "nvml": "NVIDIA, NVML API Reference Guide: nvmlUtilization_t ('percent of time ... one or more kernels was executing'), power, clocks, PCIe link.",
    "validation": "accelkit validation set, data/validation/measured.csv: one published measurement per row (source_url, quote); excluded cases in excluded.csv.",
    "efficiency": "accelkit efficiencies, data/efficiency.csv: published MAMF, memory-bandwidth and NCCL/RCCL all-reduce measurements (source_url per row).",
    "narayanan2021": "D. Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM, SC21, arXiv:2104.04473.",
    "agrawal2024": "A. Agrawal et al., Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve, OSDI 2024, arXiv:2403.02310.",
    "hockney1994": "R. Hockney, The communication challenge for MPP: Intel Paragon and Meiko CS-2, Parallel Computing 20 (1994) 389-398 (the alpha-beta model).",
    "nvidia_smi": "NVIDIA, nvidia-smi(1) manual: --query-gpu fields, --format=csv[,noheader][,nounits], -l; topo -m and its legend (docs.nvidia.com/deploy/nvidia-smi).",
    "dcgm_fields": "NVIDIA, DCGM API reference, Field Identifiers and Field Constants: DCGM_FI_PROF_SM_ACTIVE, _PIPE_TENSOR_ACTIVE, _DRAM_ACTIVE (ratios), clock-event reason masks (docs.nvidia.com/datacenter/dcgm).",
    "dcgm_exporter": "NVIDIA, DCGM-Exporter documentation and etc/default-counters.csv: metric names, units (%, MiB, W, MHz) and labels (gpu, UUID, device, modelName, Hostname).",
    "prometheus_api": "Prometheus documentation, HTTP API: /api/v1/query_range, the matrix result and error responses (prometheus.io/docs/prometheus/latest/querying/api).",
    "monitor_examples": "accelkit monitor examples, data/examples/monitor/: SYNTHETIC nvidia-smi log, DCGM-exporter page and topo -m matrix of 8 x A100 at ~30 % (the source text's anecdote).",
    "probe_results": "accelkit probe results, data/probe_results/*.json: measured on the machine named in each file's header.",
}

CHAPTERS = {
    "catalogue": ["catalogue", "williams2009"],
    "demand": ["efficiency", "validation", "kaplan2020", "hoffmann2022", "brown2020", "chowdhery2022", "touvron2023", "rajbhandari2020",
               "korthikanti2022", "kwon2023", "seed_003", "catalogue", "models"],
    "roofline": ["efficiency", "validation", "williams2009", "nvidia_perf_guide", "dao2022", "pope2023", "kwon2023", "seed_003", "catalogue", "models"],
    "precision": ["ieee754", "micikevicius2018", "micikevicius2022", "jacob2018", "seed_003", "seed_000", "catalogue"],
    "energy_tco": ["patterson2021", "greengrid_pue", "brealey", "touvron2023", "seed_003", "catalogue", "cloud_prices"],
    "cluster": ["efficiency", "validation", "patarasuk2009", "nccl_tests", "jia2018", "li2020", "rajbhandari2020", "korthikanti2022", "greengrid_pue",
                "seed_000", "seed_003", "catalogue"],
    "decision": ["efficiency", "validation", "triantaphyllou2000", "aiconfigurator", "lahdelma2001", "device_facts",
                 "purchase_prices", "kaplan2020", "rajbhandari2020", "pope2023", "seed_003", "catalogue",
                 "cloud_prices", "models"],
    "edge": ["williams2009", "jacob2018", "seed_003", "catalogue", "models"],
    "ecosystem": ["seed_003", "ecosystem_table", "pytorch_get_started", "hipify", "ascend_c", "ort_execution_providers",
                  "openvino_model_preparation", "catalogue"],
    "validation": ["validation", "efficiency", "pope2023", "kwon2023", "agrawal2024", "narayanan2021", "korthikanti2022",
                   "chowdhery2022", "dao2022", "nccl_tests", "hockney1994", "bekman_mamf", "mccalpin1995", "catalogue"],
    "monitor": ["seed_003", "seed_000", "nvml", "nvidia_smi", "dcgm_fields", "dcgm_exporter", "prometheus_api",
                "efficiency", "bekman_mamf", "mccalpin1995", "catalogue", "monitor_examples"],
    "probe": ["nvidia_matmul_guide", "bekman_mamf", "sander2025", "mccalpin1995", "torch_benchmark", "nvml",
              "micikevicius2018", "jacob2018", "seed_003", "seed_000", "catalogue", "probe_results"],
}


def format_references(keys):
    """Numbered reference list for the given keys."""
    return "\n".join(f"[{i}] {REFERENCES[k]}" for i, k in enumerate(keys, 1))


def chapter_references(chapter, devices=None, catalog=None):
    """Text listing the references of a chapter and the sources of the devices shown.

    Parameters
    ----------
    chapter : str
        A key of :data:`CHAPTERS`.
    devices : sequence of str, optional
        Device names on screen; their ``source_url`` is listed.
    """
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    text = "References\n" + format_references(CHAPTERS[chapter])
    devices = [] if devices is None else list(devices)
    if devices:
        from .catalog import load_catalog

        catalog = load_catalog() if catalog is None else catalog
        rows = catalog[catalog["name"].isin(list(devices))]
        lines = [f"  {r['name']}: {r['source_url']}" for _, r in rows.iterrows()]
        text += "\n\nDevice figures from\n" + "\n".join(lines)
    return text
