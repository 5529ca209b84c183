//===- HostAttentionReference.h - FP64 masked attention ---------*- C++ -*-===//
//
// The reference the attention GPU tests and moss-bench --attention both
// check against: masked softmax attention in FP64 on bf16 inputs.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_SUPPORT_HOSTATTENTIONREFERENCE_H
#define MOSS_SUPPORT_HOSTATTENTIONREFERENCE_H

#include "moss/Support/HostBf16.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace moss::host {
/// Inputs as the decoder lays them out: q is slot 0 of a fused QKV buffer
/// [B,T,3,H,D]; k and v are [B,H,S,D]; mask is one byte per [B,T,S].
struct AttentionProblemView {
  int64_t B, H, T, S, D;
  const uint16_t *qkv, *k, *v;
  const uint8_t *mask;
  double scale;
};

/// out [B,T,H,D] = softmax over allowed keys of scale * q·k, times v, in
/// FP64; a row without an allowed key is exactly 0.
inline std::vector<double> referenceAttention(const AttentionProblemView &p) {
  std::vector<double> out(size_t(p.B * p.T * p.H * p.D), 0.0);
  auto work = [&](int64_t first, int64_t step) {
    std::vector<double> s(size_t(p.S)), acc(size_t(p.D));
    for (int64_t bh = first; bh < p.B * p.H; bh += step) {
      int64_t b = bh / p.H, h = bh % p.H;
      for (int64_t t = 0; t < p.T; ++t) {
        const uint8_t *m = &p.mask[size_t((b * p.T + t) * p.S)];
        const uint16_t *q =
            &p.qkv[size_t((((b * p.T + t) * 3 + 0) * p.H + h) * p.D)];
        double mx = -INFINITY;
        for (int64_t j = 0; j < p.S; ++j) {
          if (!m[j])
            continue;
          const uint16_t *kr = &p.k[size_t(((b * p.H + h) * p.S + j) * p.D)];
          double dot = 0;
          for (int64_t d = 0; d < p.D; ++d)
            dot += fromBf16(q[d]) * fromBf16(kr[d]);
          s[size_t(j)] = dot * p.scale;
          mx = std::max(mx, s[size_t(j)]);
        }
        if (mx == -INFINITY)
          continue;
        double l = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < p.S; ++j) {
          if (!m[j])
            continue;
          double e = std::exp(s[size_t(j)] - mx);
          l += e;
          const uint16_t *vr = &p.v[size_t(((b * p.H + h) * p.S + j) * p.D)];
          for (int64_t d = 0; d < p.D; ++d)
            acc[size_t(d)] += e * fromBf16(vr[d]);
        }
        double *o = &out[size_t(((b * p.T + t) * p.H + h) * p.D)];
        for (int64_t d = 0; d < p.D; ++d)
          o[d] = acc[size_t(d)] / l;
      }
    }
  };
  unsigned n = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; ++i)
    threads.emplace_back(work, int64_t(i), int64_t(n));
  for (std::thread &th : threads)
    th.join();
  return out;
}
} // namespace moss::host

#endif // MOSS_SUPPORT_HOSTATTENTIONREFERENCE_H
