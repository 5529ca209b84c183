//===- HostBf16.h - bf16 on the host for tests and benchmarks ---*- C++ -*-===//
//
// Round-to-nearest-even conversions, random data and the relative L2 check in
// bf16, shared by the GPU tests and moss-bench so both measure the same way.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_SUPPORT_HOSTBF16_H
#define MOSS_SUPPORT_HOSTBF16_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace moss::host {
/// Rounds to float first (as the GPU holds FP32 values), then to the nearest
/// bf16, ties to even. NaN stays a quiet NaN.
inline uint16_t toBf16(double value) {
  float f = static_cast<float>(value);
  if (std::isnan(f))
    return 0x7FC0;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

inline double fromBf16(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

/// `count` bf16 values drawn uniformly from [lo, hi).
inline std::vector<uint16_t> randomBf16(size_t count, double lo, double hi,
                                        std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<uint16_t> out(count);
  for (uint16_t &v : out)
    v = toBf16(dist(rng));
  return out;
}
/// ||got - ref|| / ||ref||; +inf when got holds NaN or Inf (an unwritten
/// output poisoned with NaN).
inline double relativeL2(const std::vector<uint16_t> &got,
                         const std::vector<double> &ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = fromBf16(got[i]);
    if (!std::isfinite(g))
      return INFINITY;
    diff += (g - ref[i]) * (g - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}
} // namespace moss::host

#endif // MOSS_SUPPORT_HOSTBF16_H
