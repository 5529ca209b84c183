/* c_api_example.c - the smallest use of libmoss_runtime from C.
 *
 * Creates a runtime (kernels dir and whitelist from the command line, or the
 * fallback only), runs one FFN GEMM with GELU on zero-filled device buffers
 * and prints the status. Usage: c_api_example [kernels_dir [whitelist]] */

#include "moss/Runtime/moss_runtime.h"

#include <cuda_runtime_api.h>

#include <stdio.h>

int main(int argc, char **argv) {
  const char *kernels_dir = argc > 1 ? argv[1] : NULL;
  const char *whitelist = argc > 2 ? argv[2] : NULL;
  const int64_t m = 2, n = 3072, k = 768;

  /* A library built from another header would be called with the wrong
     declarations: check before anything else. */
  if (moss_runtime_api_version() != MOSS_RUNTIME_API_VERSION) {
    printf("libmoss_runtime (moss %s) implements C API %d, this program %d\n",
           moss_runtime_version(), moss_runtime_api_version(),
           MOSS_RUNTIME_API_VERSION);
    return 1;
  }

  moss_runtime_t rt = NULL;
  moss_status_t status = moss_runtime_create(kernels_dir, whitelist, &rt);
  if (status != MOSS_OK) {
    printf("moss_runtime_create: status %d: %s\n", (int)status,
           moss_runtime_last_error(NULL));
    return 1;
  }

  void *x = NULL, *w = NULL, *out = NULL;
  if (cudaMalloc(&x, (size_t)(m * k * 2)) != cudaSuccess ||
      cudaMalloc(&w, (size_t)(n * k * 2)) != cudaSuccess ||
      cudaMalloc(&out, (size_t)(m * n * 2)) != cudaSuccess) {
    printf("cudaMalloc failed\n");
    moss_runtime_destroy(rt);
    return 1;
  }
  cudaMemset(x, 0, (size_t)(m * k * 2));
  cudaMemset(w, 0, (size_t)(n * k * 2));

  printf("shape %lldx%lldx%lld gelu: %s\n", (long long)m, (long long)n,
         (long long)k,
         moss_gemm_is_selected(rt, m, n, k, MOSS_EPILOGUE_GELU)
             ? "generated kernel"
             : "cuBLASLt fallback");
  status = moss_ffn_gemm(rt, m, n, k, MOSS_EPILOGUE_GELU, x, w, NULL, NULL, out,
                         NULL);
  cudaError_t synced = cudaDeviceSynchronize();
  printf("moss_ffn_gemm: status %d%s%s, cudaDeviceSynchronize: %s\n",
         (int)status, status == MOSS_OK ? "" : ": ",
         status == MOSS_OK ? "" : moss_runtime_last_error(rt),
         cudaGetErrorName(synced));

  cudaFree(out);
  cudaFree(w);
  cudaFree(x);
  moss_runtime_destroy(rt);
  return status == MOSS_OK && synced == cudaSuccess ? 0 : 1;
}
