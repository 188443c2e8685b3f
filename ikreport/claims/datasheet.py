"""Datasheet compute peaks, used only as a clearly labelled roof when nothing measured exists.

Dense BF16 tensor-core peaks from NVIDIA's published datasheets (no sparsity), in TFLOP/s.
They are not evidence: pages label them "datasheet value, not measured".
"""

from __future__ import annotations

from ikreport.claims.gpus import gpu_key

DENSE_BF16_TFLOPS = {
    "a100": 312.0,
    "a100-sxm4-40gb": 312.0,
    "a100-sxm4-80gb": 312.0,
    "h100 80gb hbm3": 989.0,  # H100 SXM
    "h100 sxm": 989.0,
    "h100 pcie": 756.0,
    "h200": 989.0,
    "b200": 2250.0,
}


def compute_peak_tflops(gpu: str | None) -> float | None:
    key = gpu_key(gpu)
    return DENSE_BF16_TFLOPS.get(key) if key else None
