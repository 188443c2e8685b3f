#!/usr/bin/env bash
# Collect real evidence on a GPU machine: environment, measured copy bandwidth, and an ncu
# profile of scripts/gpu/workload.py with --clock-control none. Writes OUT/evidence.tar.gz
# (the archive) and OUT/log.txt. On the device tool's machine:
#   run(command="bash scripts/gpu/run.sh", carry=[".whl"], timeout_s=420)
# after scripts/gpu/fetch_wheels.sh here. OUT defaults to $OUT, else ./gpu-out.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
export PYTHONUNBUFFERED=1
py="${PYTHON:-python3}"
wheels="${WHEELS:-.whl}"  # from scripts/gpu/fetch_wheels.sh
if compgen -G "$wheels/*.whl" > /dev/null; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/ik-site "$wheels"/*.whl || exit 1
  export PYTHONPATH="$PWD:/tmp/ik-site${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
ik() { "$py" -m ikreport "$@"; }
archive="$(mktemp -d)/evidence"
export IKREPORT_ARCHIVE="$archive"
torch_version="$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo unknown)"
context="$(mktemp)"
cat > "$context" <<TOML
engine = "PyTorch $torch_version"
limitations = ["Collected by scripts/gpu/run.sh on a GPU machine lent to an ikreport development session: a real run, once, on one machine."]
TOML
step() { echo "== $*"; }
fail=0
step "environment"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
ncu --version | tail -1 || fail=1
ik collect env --context "$context" --title "Environment of the H200 run" || fail=1
step "bandwidth"
ik collect bandwidth --context "$context" --title "Device-to-device copy bandwidth (measured)" \
  --workload "device-to-device copy, 256 to 4096 MiB buffers" --size-mib 256 --size-mib 1024 --size-mib 4096 \
  --repeats 20 || fail=1
step "ncu"
profile() {
  ik collect ncu --context "$context" --clock-control none --nvtx-include "measure/" \
    --title "Prefill and decode GEMMs, softmax and layernorm in PyTorch (bf16, ncu, clocks not locked)" \
    --model "one 8192-wide layer, random bf16 weights" \
    --workload "prefill GEMM 4096x8192x8192, decode GEMM 16x8192x8192, softmax 1024x4096, layernorm 16x8192" \
    "$@" -- "$py" scripts/gpu/workload.py
}
# FLOP counters for the roofline; if this ncu lacks one, profile again without them.
flops=(sm__ops_path_tensor_src_bf16_dst_fp32.sum smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
       smsp__sass_thread_inst_executed_op_fadd_pred_on.sum smsp__sass_thread_inst_executed_op_fmul_pred_on.sum)
metric_args=(); for m in "${flops[@]}"; do metric_args+=(--metrics "$m"); done
profile "${metric_args[@]}" || { echo "== ncu again, without the FLOP counters"; profile || fail=1; }
step "verify"; ik verify || fail=1
tar -czf "$out/evidence.tar.gz" -C "$(dirname "$archive")" evidence
ls -l "$out"
exit $fail
