#!/usr/bin/env bash
# Rebuild sample_evidence/ from the real ncu exports in tests/fixtures/ncu (sources in
# tests/fixtures/SOURCES.md) with ikreport's own importer. Records are content-addressed,
# so running this again adds nothing. SOURCE_DATE_EPOCH pins collected_at to the day the
# sample was first imported, so the same exports always give the same ids: sample_evidence/
# records and blobs are exactly what this script writes into an empty folder (tests/test_sample_evidence.py).
set -euo pipefail
cd "$(dirname "$0")/.."
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1796169600}  # 2026-12-02T00:00:00Z
IK=${IK:-.venv/bin/ikreport}
A=${1:-sample_evidence}
F=tests/fixtures/ncu
GPU="NVIDIA GeForce RTX 5090"
OCR="DeepSeek-OCR on OmniDocBench pages, 64 new tokens"
# kernel 1 states no workload: its profile and kernel 3's are of different kernels, never a series
GPU_STATED="The export says only compute capability 12.0; the GPU model is stated from the env.json the source keeps beside its Nsight Systems run of the same session."
SRC="Real tool output from a public repository (see tests/fixtures/SOURCES.md); ikreport did not run this profile."

$IK collect ncu --from-csv "$F/ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv" -a "$A" \
  --title "FlashAttention split-KV decode on B200 (torch SDPA, MQA, bf16, batch 128, 4k context)" \
  --engine "PyTorch SDPA (flash backend)" --workload "decode attention, MQA, bf16, batch 128, context 4k" \
  --limitation "$SRC"
$IK collect ncu --from-csv "$F/ncu_raw_pmpp_06_gtx1650ti_preamble.csv" -a "$A" \
  --title "PMPP chapter 6 case study kernels on a GTX 1650 Ti" \
  --workload "4096 blocks x 128 threads, identical arithmetic per atom" --limitation "$SRC"
$IK collect ncu --from-csv "$F/ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv" -a "$A" \
  --title "DeepSeek-OCR: CUTLASS bf16 WMMA GEMM (kernel 3)" --model "DeepSeek-OCR" \
  --engine "PyTorch (python3.12)" --gpu "$GPU" --workload "$OCR" --limitation "$SRC" --limitation "$GPU_STATED"
$IK collect ncu --from-csv "$F/ncu_details_llmperfopt_k0001_metrics.csv" -a "$A" \
  --title "DeepSeek-OCR: cuBLAS bf16 GEMV (kernel 1)" --model "DeepSeek-OCR" \
  --engine "PyTorch (python3.12)" --gpu "$GPU" --limitation "$SRC" --limitation "$GPU_STATED"
$IK collect ncu --from-csv "$F/ncu_details_nsightful_copy_blocked_base_units.csv" -a "$A" \
  --title "Numba blocked copy kernel (nsightful test export, base units)" \
  --engine "Numba CUDA" --workload "copy of 262,144 int64 per call, blocked access" --limitation "$SRC"
$IK collect ncu --from-csv "$F/ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv" -a "$A" \
  --title "PolyFHE CKKS kernels: warp-stall reasons (62 launches, Ada)" \
  --workload "CKKS homomorphic encryption, fused NTT kernels" --limitation "$SRC"
$IK collect ncu --from-csv "$F/ncu_details_xplacer_bfs_v100_2020_kerneltime.csv" -a "$A" \
  --title "Rodinia BFS on a V100 (ncu 2020.1)" --gpu "Tesla V100 (AWS p3.2xlarge)" \
  --workload "Rodinia 3.1 bfs, graph4096" --limitation "$SRC"
$IK collect ncu --from-csv "$F/ncu_details_llmperfopt_k0008_bf16_copy_rtx5090.csv" -a "$A" \
  --title "DeepSeek-OCR: PyTorch bf16 copy kernel on an RTX 5090 (kernel 8)" --model "DeepSeek-OCR" \
  --engine "PyTorch (python3.12)" --gpu "NVIDIA GeForce RTX 5090" --limitation "$SRC" \
  --limitation "The export says compute capability 12.0, not the model: the GPU is named from kernel 5 of the same run, whose roofline peak of 21,760 FFMA per cycle is 170 SMs x 128, which among 12.0 parts only the RTX 5090 has."
B=tests/fixtures/bandwidth
S=tests/fixtures/nvidia-smi
$IK collect bandwidth --from-nvbandwidth "$B/nvbandwidth_wubh576_rtx5090x4_v0.8.json" -a "$A" \
  --title "nvbandwidth device_local_copy on four RTX 5090 (JSON output)" --limitation "$SRC"
$IK collect bandwidth --from-babelstream "$B/babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt" -a "$A" \
  --title "BabelStream 4.0 on an A100-SXM4-40GB (ALCF Polaris)" --limitation "$SRC"
$IK collect env --from-nvidia-smi "$S/smi_table_evaldataset_h100x2.txt" -a "$A" \
  --title "Two H100 80GB HBM3, driver 570.133.20 (nvidia-smi table)" --limitation "$SRC"
$IK collect env --from-nvidia-smi "$S/smi_q_gpukernellab_rtx3060laptop.txt" -a "$A" \
  --title "RTX 3060 Laptop GPU under WDDM, driver 610.88 (nvidia-smi -q)" --limitation "$SRC"
$IK collect nsys --from-csv tests/fixtures/nsys/nsys_kern_sum_llmperfopt_dsocr_allstage_rtx5090.csv -a "$A" \
  --title "DeepSeek-OCR on an RTX 5090: kernel time in a real run (nsys, 20 pages)" --model "DeepSeek-OCR" \
  --engine "PyTorch (python3.12)" --gpu "$GPU" --workload "$OCR" --limitation "$SRC" \
  --limitation "The run covers 20 pages; the ncu profiles of this session replayed one launch of one page."
$IK collect serving --from-aiperf tests/fixtures/serving/aiperf_example_run1_gptoss20b_profile_export_aiperf.csv -a "$A" \
  --title "AIPerf: gpt-oss-20b, 100 requests at concurrency 100, streaming chat" --model "openai/gpt-oss-20b" \
  --workload "chat, 550 input tokens, up to 250 output tokens, concurrency 100" --limitation "$SRC" \
  --limitation "From another machine than every profile here (its GPU is not stated), so no kernel figure is set against it."
profile() { $IK list -a "$A" | grep " ncu-profile " | grep "$1" | cut -c1-12; }
$IK compare "$(profile "GEMV (kernel 1)")" "$(profile "GEMM (kernel 3)")" -a "$A" >/dev/null
