// The copy kernel every kernel backend of `ikreport collect bandwidth` times: included by
// copy_bandwidth.cu (nvcc) and compiled by cupy.RawKernel (NVRTC), so both measure alike.
// extern "C": RawKernel finds the kernel by this unmangled name. A grid-stride loop of 16-byte
// int4 words, so the SMs stream at close to what DRAM allows (no copy engine is involved).
// unsigned long long, not size_t: NVRTC compiles this without the standard headers.
extern "C" __global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
