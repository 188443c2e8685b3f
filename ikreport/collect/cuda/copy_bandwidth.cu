// Device-to-device copy bandwidth, for `ikreport collect bandwidth` when CuPy is not
// installed (the kernel is in copy_kernel.cuh, shared with the CuPy backend). Usage: copy_bandwidth WARMUP REPEATS SIZE_BYTES...
// Prints "ikbw 1", "device <name>", then one "sample <copied bytes> <seconds>" per timed copy.
// Bytes are counted by the caller (read + write = 2 x copied bytes).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 2; } } while (0)

#include "copy_kernel.cuh"

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s WARMUP REPEATS SIZE_BYTES...\n", argv[0]); return 1; }
  int warmup = atoi(argv[1]), repeats = atoi(argv[2]);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("ikbw 1\ndevice %s\n", prop.name);
  int sms = prop.multiProcessorCount;
  for (int a = 3; a < argc; ++a) {
    size_t bytes = strtoull(argv[a], nullptr, 10) / sizeof(int4) * sizeof(int4);
    int4 *src, *dst;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 1, bytes));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    size_t n = bytes / sizeof(int4);
    for (int i = 0; i < warmup + repeats; ++i) {
      CHECK(cudaEventRecord(start));
      copy_kernel<<<sms * 8, 256>>>(src, dst, n);
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (i >= warmup) printf("sample %zu %.9f\n", bytes, ms / 1e3);
    }
    fflush(stdout);
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
  }
  return 0;
}
