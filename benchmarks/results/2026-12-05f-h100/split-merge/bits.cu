// One-off: the same attention calls through two kernel dirs, bit by bit.
#include "moss/Runtime/moss_runtime.h"
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "bits DIR_A DIR_B WHITELIST\n"); return 2; }
  moss_runtime_t a, b;
  if (moss_runtime_create(argv[1], argv[3], &a) || moss_runtime_create(argv[2], argv[3], &b)) {
    fprintf(stderr, "create: %s\n", moss_runtime_last_error(nullptr)); return 1; }
  struct C { int64_t B, H, T, S; } cs[] = {{1,12,1,400},{4,12,1,400},{1,12,32,400},{4,12,32,400},
    {1,12,8,400},{1,12,240,400},{1,12,60,250},{1,12,32,250},{4,12,32,250},{1,20,16,1100},{1,12,16,1024},{2,12,40,896},{1,12,1,2048}};
  int bad = 0;
  for (C c : cs) for (int variant = 0; variant < 2; ++variant) {
    std::mt19937 rng(1234 + c.T + c.S + variant);
    std::normal_distribution<float> nd(0.f, variant ? 3.f : 1.f);
    size_t nq = c.B * c.H * c.T * 64, nk = c.B * c.H * c.S * 64, nm = c.B * c.T * c.S;
    std::vector<__nv_bfloat16> q(nq), k(nk), v(nk);
    for (auto &x : q) x = __float2bfloat16(nd(rng));
    for (auto &x : k) x = __float2bfloat16(nd(rng));
    for (auto &x : v) x = __float2bfloat16(nd(rng));
    std::vector<uint8_t> m(nm);
    for (int64_t bb = 0; bb < c.B; ++bb) for (int64_t t = 0; t < c.T; ++t) {
      bool none = (t % 7) == 3 && variant;
      for (int64_t s = 0; s < c.S; ++s) m[(bb * c.T + t) * c.S + s] = none ? 0 : (rng() % 5 != 0);
    }
    void *dq, *dk, *dv, *dm, *da, *db;
    cudaMalloc(&dq, nq * 2); cudaMalloc(&dk, nk * 2); cudaMalloc(&dv, nk * 2); cudaMalloc(&dm, nm);
    cudaMalloc(&da, nq * 2); cudaMalloc(&db, nq * 2);
    cudaMemcpy(dq, q.data(), nq * 2, cudaMemcpyHostToDevice); cudaMemcpy(dk, k.data(), nk * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, v.data(), nk * 2, cudaMemcpyHostToDevice); cudaMemcpy(dm, m.data(), nm, cudaMemcpyHostToDevice);
    cudaMemset(da, 0xff, nq * 2); cudaMemset(db, 0xee, nq * 2);
    moss_attention_args args{};
    args.B = c.B; args.H = c.H; args.T = c.T; args.S = c.S; args.D = 64;
    args.q = dq; int64_t qs[4] = {c.H * c.T * 64, c.T * 64, 64, 1}; memcpy(args.q_stride, qs, sizeof qs);
    args.k = dk; int64_t ks[4] = {c.H * c.S * 64, c.S * 64, 64, 1}; memcpy(args.k_stride, ks, sizeof ks);
    args.v = dv; memcpy(args.v_stride, ks, sizeof ks);
    args.mask = dm; int64_t ms[3] = {c.T * c.S, c.S, 1}; memcpy(args.mask_stride, ms, sizeof ms);
    args.layout = MOSS_LAYOUT_BTHD; args.scale = 0;
    args.out = da; if (moss_streaming_attention(a, &args, nullptr)) { fprintf(stderr, "A: %s\n", moss_runtime_last_error(a)); return 1; }
    args.out = db; if (moss_streaming_attention(b, &args, nullptr)) { fprintf(stderr, "B: %s\n", moss_runtime_last_error(b)); return 1; }
    std::vector<uint16_t> oa(nq), ob(nq);
    cudaMemcpy(oa.data(), da, nq * 2, cudaMemcpyDeviceToHost); cudaMemcpy(ob.data(), db, nq * 2, cudaMemcpyDeviceToHost);
    size_t diff = 0; for (size_t i = 0; i < nq; ++i) diff += oa[i] != ob[i];
    printf("H=%ld S=%ld T=%ld B=%ld variant %d: %zu of %zu differ\n", (long)c.H, (long)c.S, (long)c.T, (long)c.B, variant, diff, nq);
    bad += diff != 0;
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dm); cudaFree(da); cudaFree(db);
  }
  printf("%s (%s)\n", bad ? "DIFFERENT" : "identical", getenv("MOSS_ATTENTION_SPLITS") ? getenv("MOSS_ATTENTION_SPLITS") : "rule");
  return bad ? 3 : 0;
}
