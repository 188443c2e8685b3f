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


# Top (max boost) SM clocks in MHz from NVIDIA's datasheets, for the clock claim when an export
# does not carry the device's own max_gpu_frequency_khz attribute.
MAX_SM_CLOCK_MHZ = {
    "tesla t4": 1590.0,
    "t4": 1590.0,
    "tesla v100-sxm2-16gb": 1530.0,
    "tesla v100-sxm2-32gb": 1530.0,
    "a100-sxm4-40gb": 1410.0,
    "a100-sxm4-80gb": 1410.0,
    "a100-pcie-40gb": 1410.0,
    "h100 80gb hbm3": 1980.0,  # H100 SXM
}


# Base SM clocks in MHz of exact models, each from the source named beside it, so a clock claim
# can set the observed clock beside the base one. A model not listed gets no base clock.
BASE_SM_CLOCK_MHZ = {
    "a100-pcie-40gb": 765.0,  # NVIDIA A100 40GB PCIe product brief PB-10137-001 (boost 1,410)
    "a100-sxm4-40gb": 1095.0,  # TechPowerUp GPU database, A100 SXM4 40 GB (boost 1,410)
    "a100-sxm4-80gb": 1095.0,  # TechPowerUp GPU database, A100 SXM4 80 GB (boost 1,410)
    "geforce rtx 5060 ti": 2407.0,  # NVIDIA GeForce RTX 5060 family specifications (boost 2,572)
}


def base_sm_clock_hz(gpu: str | None) -> float | None:
    """The base SM clock of an exact GPU model in Hz from BASE_SM_CLOCK_MHZ, or None."""
    key = gpu_key(gpu)
    mhz = BASE_SM_CLOCK_MHZ.get(key) if key else None
    return mhz * 1e6 if mhz else None


def max_sm_clock_hz(gpu: str | None) -> float | None:
    """The datasheet's top SM clock of a GPU model in Hz, or None when it is not listed."""
    key = gpu_key(gpu)
    mhz = MAX_SM_CLOCK_MHZ.get(key) if key else None
    return mhz * 1e6 if mhz else None


def compute_peak_tflops(gpu: str | None) -> float | None:
    key = gpu_key(gpu)
    return DENSE_BF16_TFLOPS.get(key) if key else None
