//===- HostBf16.h - bf16 on the host for tests and benchmarks ---*- C++ -*-===//
//
// Round-to-nearest-even conversions and random data in bf16, shared by the
// GPU tests and moss-bench so both check against the same host values.
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
} // namespace moss::host

#endif // MOSS_SUPPORT_HOSTBF16_H
