// The copy kernel every kernel backend of `ikreport collect bandwidth` times: included by
// copy_bandwidth.cu (nvcc) and compiled by cupy.RawKernel (NVRTC), so both measure alike.
// extern "C": RawKernel finds the kernel by this unmangled name. A grid-stride loop of 16-byte
// int4 words, so the SMs stream at close to what DRAM allows (no copy engine is involved).
extern "C" __global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
