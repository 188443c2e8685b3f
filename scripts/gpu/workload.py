"""A small inference-like PyTorch workload for `ikreport collect ncu` on a real GPU.

One transformer-layer's worth of kernels at two shapes: a prefill GEMM (4096 tokens, so
compute-bound), a decode GEMM (16 tokens against an 8192x8192 weight, so it streams the
weight from memory), an attention-score softmax and a layernorm, all bf16. Warm-up runs
outside the NVTX range `measure`, so `--nvtx-include measure/` profiles only the steady state.
"""

import argparse

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iters", type=int, default=2, help="profiled iterations")
    args = parser.parse_args()
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    hidden, tokens_prefill, tokens_decode = 8192, 4096, 16
    weight = torch.randn(hidden, hidden, device=dev, dtype=dt) / hidden**0.5
    prefill = torch.randn(tokens_prefill, hidden, device=dev, dtype=dt)
    decode = torch.randn(tokens_decode, hidden, device=dev, dtype=dt)
    scores = torch.randn(tokens_decode * 64, 4096, device=dev, dtype=dt)
    norm = torch.nn.LayerNorm(hidden, device=dev, dtype=dt)

    def step() -> None:
        torch.matmul(prefill, weight.T)
        torch.matmul(decode, weight.T)
        torch.softmax(scores, dim=-1)
        norm(decode)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("measure")
    for _ in range(args.iters):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
