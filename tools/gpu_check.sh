#!/usr/bin/env bash
# The GPU checks, as one script for a machine with an NVIDIA GPU (run from the repository root):
#   OUT=gpu-out bash tools/gpu_check.sh "H200 SXM, driver ..."
# It needs python3 with torch (CUDA), numpy, pandas, pyyaml and nvidia-ml-py; accelkit runs from
# this checkout (PYTHONPATH), nothing is installed. Everything it measures lands in $OUT:
#   nvidia-smi.txt, topo.txt      the machine
#   nvidia-smi-log.csv            an nvidia-smi --query-gpu log taken while the probes ran
#   probe-full.json               accelkit probe (full sizes): matmul per format, bandwidth, precision
#   llm-*.json, llm-*.txt         accelkit probe --llm: decode step and prefill next to the engine
#   train-*.json, train-*.txt     accelkit probe --train: eager training steps next to the engine, and MFU
#   int8-layout.txt               torch._int_mm with B row- and column-major
#   monitor.json                  accelkit monitor: live NVML samples of a probe run, summarised
#   pytest-gpu.txt                the suite's GPU tests (pytest -m gpu)
set -u
OUT=${OUT:-gpu-out}
LABEL=${1:-"GPU machine"}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
step() { echo "=== $(date -u +%H:%M:%S) $*"; }

step machine
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1
$PY -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])"

FIELDS=timestamp,index,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,power.limit,temperature.gpu,clocks.sm,clocks.max.sm
if nvidia-smi --query-gpu=$FIELDS,clocks_throttle_reasons.active --format=csv >/dev/null 2>&1; then
  FIELDS=$FIELDS,clocks_throttle_reasons.active
else
  FIELDS=$FIELDS,clocks_event_reasons.active
fi
nvidia-smi --query-gpu=$FIELDS --format=csv -lms 500 >"$OUT/nvidia-smi-log.csv" 2>&1 &
SMI=$!

step "accelkit probe (full sizes)"
timeout 240 $PY -m accelkit.cli probe --json "$OUT/probe-full.json" --label "$LABEL" --quiet >"$OUT/probe-full.txt" 2>&1
echo "rc=$?"; tail -n 30 "$OUT/probe-full.txt"

step "accelkit probe --llm Llama-2 7B (sampled by accelkit monitor)"
timeout 200 $PY -m accelkit.cli monitor --interval 0.2 --json "$OUT/monitor.json" -- \
  $PY -m accelkit.cli probe --llm "Llama-2 7B" --llm-batch 1 8 32 64 --llm-input 1024 --llm-output 256 \
  --json "$OUT/llm-llama2-7b.json" >"$OUT/llm-llama2-7b.txt" 2>&1
echo "rc=$?"; cat "$OUT/llm-llama2-7b.txt"

step "accelkit probe --llm Llama-3.1 8B, 2048-token prompts"
timeout 150 $PY -m accelkit.cli probe --llm "Llama-3.1 8B" --llm-batch 1 16 64 --llm-input 2048 --llm-output 256 \
  --json "$OUT/llm-llama31-8b.json" >"$OUT/llm-llama31-8b.txt" 2>&1
echo "rc=$?"; cat "$OUT/llm-llama31-8b.txt"

step "accelkit probe --llm: Llama-3.1 8B at 4,096-token prompts, Qwen2.5 7B at 8,192"
timeout 150 $PY -m accelkit.cli probe --llm "Llama-3.1 8B" --llm-batch 64 128 --llm-input 4096 --llm-output 256 \
  --json "$OUT/llm-llama31-8b-4k.json" --label "$LABEL" >"$OUT/llm-llama31-8b-4k.txt" 2>&1
echo "rc=$?"; cat "$OUT/llm-llama31-8b-4k.txt"
timeout 150 $PY -m accelkit.cli probe --llm "Qwen2.5 7B" --llm-batch 1 32 --llm-input 8192 --llm-output 256 \
  --json "$OUT/llm-qwen25-7b-8k.json" --label "$LABEL" >"$OUT/llm-qwen25-7b-8k.txt" 2>&1
echo "rc=$?"; cat "$OUT/llm-qwen25-7b-8k.txt"

step "accelkit probe --train: GPT-2 XL and GPT-2 small, eager PyTorch"
timeout 200 $PY -m accelkit.cli probe --train "GPT-2 XL" --train-micro-batch 1 4 8 --seq-len 1024 --accumulation 16 \
  --json "$OUT/train-gpt2-xl.json" --label "$LABEL" >"$OUT/train-gpt2-xl.txt" 2>&1
echo "rc=$?"; cat "$OUT/train-gpt2-xl.txt"
timeout 120 $PY -m accelkit.cli probe --train "GPT-2 small" --train-micro-batch 8 32 --seq-len 1024 --accumulation 16 \
  --json "$OUT/train-gpt2-small.json" --label "$LABEL" >"$OUT/train-gpt2-small.txt" 2>&1
echo "rc=$?"; cat "$OUT/train-gpt2-small.txt"

step "int8 matmul: B row-major against column-major"
timeout 60 $PY tools/gpu_int8_layout.py >"$OUT/int8-layout.txt" 2>&1; cat "$OUT/int8-layout.txt"

kill "$SMI" 2>/dev/null
step "pytest -m gpu"
timeout 150 $PY -m pytest -o addopts="" -p no:cacheprovider -m gpu -q -rs tests/test_probes.py tests/test_monitor.py tests/test_probe_llm.py \
  tests/test_probe_training.py >"$OUT/pytest-gpu.txt" 2>&1
echo "rc=$?"; tail -n 15 "$OUT/pytest-gpu.txt"
step done
