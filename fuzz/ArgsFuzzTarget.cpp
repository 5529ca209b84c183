//===- ArgsFuzzTarget.cpp - Fuzz target of the C API's argument checks ----===//
//
// checkGemmShape/checkGemmPointers, checkRopeCacheArgs and
// checkAttentionArgs (runtime/src/ArgChecks.h) on arbitrary sizes, strides and
// made-up addresses (compared, never read), against an oracle that computes
// every byte range in 128 bits: a call is accepted exactly when the oracle
// finds it valid, and a rejection is an invalid-argument error that names the
// call.
//
//===----------------------------------------------------------------------===//

#include "ConfigFuzzTargets.h"
#include "FuzzInput.h"

#include "ArgChecks.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace moss::runtime;

namespace moss::fuzz {
namespace {

using u128 = unsigned __int128;
constexpr u128 kAddressSpace = u128(1) << 64;

/// takeSize of the bits left after a choice of `used` bits.
int64_t sizeFrom(uint64_t bits, int used) {
  bits >>= used;
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&bits);
  size_t eight = 8;
  return takeSize(bytes, eight);
}

/// Addresses that often coincide or touch (four regions 1 MiB apart, at
/// offsets that are mostly 16-byte aligned), sit at the top of the address
/// space, are NULL, or are anything.
uintptr_t takeAddress(const uint8_t *&data, size_t &size) {
  uint64_t bits = static_cast<uint64_t>(takeInt(data, size));
  switch (bits & 3) {
  case 0:
    return 0x100000 * (1 + ((bits >> 2) & 3)) +
           ((bits >> 5) & 0xfff) * ((bits >> 4) & 1 ? 16 : 1);
  case 1:
    return UINT64_MAX - ((bits >> 2) & 0xffff);
  case 2:
    return 0;
  default:
    return bits;
  }
}

/// Row strides that are often legal (multiples of 8, or 0), else any size.
int64_t takeStride(const uint8_t *&data, size_t &size) {
  uint64_t bits = static_cast<uint64_t>(takeInt(data, size));
  switch (bits & 3) {
  case 0:
    return 8 * static_cast<int64_t>((bits >> 2) % 600);
  case 1:
    return 0;
  default:
    return sizeFrom(bits, 2);
  }
}

/// Sizes in [1, 600] most of the time, else takeSize's.
int64_t takeDim(const uint8_t *&data, size_t &size) {
  uint64_t bits = static_cast<uint64_t>(takeInt(data, size));
  if (bits & 1)
    return 1 + static_cast<int64_t>((bits >> 1) % 600);
  return sizeFrom(bits, 1);
}

struct Range {
  u128 begin, end; ///< [begin, end) in bytes.
};

bool overlaps(const Range &a, const Range &b) {
  return a.begin < b.end && b.begin < a.end;
}

/// The byte range of a strided tensor; its end may pass 2^64.
Range rangeOf(uintptr_t base, const int64_t *sizes, const int64_t *strides,
              int rank, int elementBytes) {
  u128 last = 0;
  for (int i = 0; i < rank; ++i)
    last += u128(sizes[i] - 1) * u128(strides[i]);
  return {base, base + (last + 1) * u128(elementBytes)};
}

bool inDims(int64_t v, int64_t lo) { return v >= lo && v <= INT32_MAX; }

void checkRejection(const Status &status, const std::string &prefix) {
  MOSS_FUZZ_CHECK(status.code == MOSS_ERROR_INVALID_ARGUMENT,
                  std::to_string(status.code) + ": " + status.message);
  checkError(status.message, prefix);
}

void fuzzGemm(const uint8_t *data, size_t size) {
  GemmArgs a{};
  a.m = takeDim(data, size) - 1; // m = 0 is legal
  a.n = takeDim(data, size);
  a.k = takeDim(data, size);
  a.ep = static_cast<int>(takeInt(data, size) % 4);
  a.x = reinterpret_cast<const void *>(takeAddress(data, size));
  a.w = reinterpret_cast<const void *>(takeAddress(data, size));
  a.scale = reinterpret_cast<const void *>(takeAddress(data, size));
  a.residual = reinterpret_cast<const void *>(takeAddress(data, size));
  a.out = reinterpret_cast<void *>(takeAddress(data, size));
  // moss_layernorm_gemm: gamma, beta and an eps among the edge cases.
  a.layerNorm = takeInt(data, size) & 1;
  a.gamma = reinterpret_cast<const void *>(takeAddress(data, size));
  a.beta = reinterpret_cast<const void *>(takeAddress(data, size));
  const float epsChoices[] = {1e-5f, 0.f, -1e-5f, NAN, INFINITY, 1e30f};
  a.eps = epsChoices[static_cast<uint64_t>(takeInt(data, size)) % 6];

  const bool shapeValid =
      a.ep >= 0 && a.ep <= 2 && inDims(a.m, 0) && inDims(a.n, 1) &&
      inDims(a.k, 1) &&
      (!a.layerNorm || (a.ep <= 1 && std::isfinite(a.eps) && a.eps >= 0));
  Status shape = checkGemmShape(a);
  MOSS_FUZZ_CHECK(shape.ok() == shapeValid, a.label() + ": " + shape.message);
  if (!shapeValid) {
    checkRejection(shape,
                   a.layerNorm ? "moss_layernorm_gemm(m=" : "moss_ffn_gemm(m=");
    return;
  }
  if (a.m == 0) // moss_ffn_gemm returns before the pointers
    return;
  struct Operand {
    const void *pointer;
    u128 bytes;
  };
  // x, w, out, then what the epilogue or the prologue reads.
  std::vector<Operand> operands = {{a.x, u128(a.m) * u128(a.k) * 2},
                                   {a.w, u128(a.n) * u128(a.k) * 2},
                                   {a.out, u128(a.m) * u128(a.n) * 2}};
  if (a.usesScaleResidual()) {
    operands.push_back({a.scale, u128(a.n) * 2});
    operands.push_back({a.residual, u128(a.m) * u128(a.n) * 2});
  }
  if (a.layerNorm) {
    operands.push_back({a.gamma, u128(a.k) * 2});
    operands.push_back({a.beta, u128(a.k) * 2});
  }
  const int used = static_cast<int>(operands.size());
  bool valid = true;
  Range ranges[7];
  for (int i = 0; i < used; ++i) {
    uintptr_t p = reinterpret_cast<uintptr_t>(operands[i].pointer);
    ranges[i] = {p, p + operands[i].bytes};
    valid = valid && p != 0 && p % 2 == 0 && ranges[i].end < kAddressSpace;
  }
  for (int i = 0; i < used && valid; ++i)
    if (i != 2 && overlaps(ranges[i], ranges[2]))
      valid = false;
  Status pointers = checkGemmPointers(a);
  MOSS_FUZZ_CHECK(pointers.ok() == valid, a.label() + ": oracle says " +
                                              (valid ? "valid" : "invalid") +
                                              "; " + pointers.message);
  if (!valid)
    checkRejection(pointers, a.label() + ": ");
}

/// checkRopeCacheArgs after a valid LayerNorm shape: sizes, then every
/// pointer (NULL, alignment, extent) and the overlaps of what it writes.
void fuzzRopeCache(const uint8_t *data, size_t size) {
  RopeCacheArgs r{};
  r.batch = takeDim(data, size);
  r.length = takeDim(data, size);
  r.capacity = takeDim(data, size);
  const int64_t d = takeDim(data, size);
  r.positions = reinterpret_cast<const int64_t *>(takeAddress(data, size));
  r.live = reinterpret_cast<const void *>(takeAddress(data, size));
  r.kCache = reinterpret_cast<void *>(takeAddress(data, size));
  r.vCache = reinterpret_cast<void *>(takeAddress(data, size));
  r.slotPositions = reinterpret_cast<int64_t *>(takeAddress(data, size));
  // What the entry and checkGemmShape establish before this check runs.
  if (!inDims(r.batch, 1) || !inDims(r.length, 1) || !inDims(d, 1) ||
      !inDims(r.batch * r.length, 1) || !inDims(3 * d, 1))
    return;
  GemmArgs a{};
  a.m = r.batch * r.length;
  a.n = 3 * d;
  a.k = d;
  a.ep = MOSS_EPILOGUE_NONE;
  a.layerNorm = true;
  a.eps = 1e-5f;
  a.ropeCache = &r;
  a.x = reinterpret_cast<const void *>(takeAddress(data, size));
  a.w = reinterpret_cast<const void *>(takeAddress(data, size));
  a.gamma = reinterpret_cast<const void *>(takeAddress(data, size));
  a.beta = reinterpret_cast<const void *>(takeAddress(data, size));
  a.out = reinterpret_cast<void *>(takeAddress(data, size));

  const bool sizesValid =
      inDims(r.capacity, 1) && r.length <= r.capacity && d % 64 == 0;
  Status status = checkRopeCacheArgs(a);
  if (!sizesValid) {
    MOSS_FUZZ_CHECK(!status.ok(), a.label() + ": bad sizes accepted");
    checkRejection(status, "moss_qkv_rope_cache(batch=");
    return;
  }
  const u128 heads = u128(d / 64),
             cacheBytes = u128(r.batch) * heads * u128(r.capacity) * 64 * 2;
  struct Operand {
    const void *pointer;
    u128 bytes;
    uintptr_t alignment;
    bool written;
  };
  const Operand operands[] = {
      {a.x, u128(a.m) * u128(d) * 2, 1, false},
      {a.w, u128(a.n) * u128(d) * 2, 1, false},
      {a.gamma, u128(d) * 2, 1, false},
      {a.beta, u128(d) * 2, 1, false},
      {a.out, u128(a.m) * u128(d) * 2, 1, true},
      {r.positions, u128(a.m) * 8, 8, false},
      {r.live, u128(a.m), 1, false},
      {r.kCache, cacheBytes, 2, true},
      {r.vCache, cacheBytes, 2, true},
      {r.slotPositions, u128(r.batch) * u128(r.capacity) * 8, 8, true}};
  // checkRopeCacheArgs checks its own five operands' pointers and every
  // extent; x, w, gamma, beta are checkGemmPointers' (NULL, alignment).
  bool valid = true;
  Range ranges[10];
  for (int i = 0; i < 10; ++i) {
    uintptr_t p = reinterpret_cast<uintptr_t>(operands[i].pointer);
    ranges[i] = {p, p + operands[i].bytes};
    const bool own = i >= 5;
    valid = valid && (!own || (p != 0 && p % operands[i].alignment == 0)) &&
            ranges[i].end < kAddressSpace;
  }
  for (int i = 0; i < 10 && valid; ++i)
    for (int j = 0; j < 10 && valid; ++j)
      if (operands[i].written && i != j && overlaps(ranges[i], ranges[j]))
        valid = false;
  MOSS_FUZZ_CHECK(status.ok() == valid, a.label() + ": oracle says " +
                                            (valid ? "valid" : "invalid") +
                                            "; " + status.message);
  if (!valid)
    checkRejection(status, a.label() + ": ");
}

void fuzzAttention(const uint8_t *data, size_t size) {
  moss_attention_args a{};
  a.B = takeDim(data, size);
  a.H = takeDim(data, size);
  a.T = takeDim(data, size);
  a.S = takeDim(data, size);
  a.D = takeInt(data, size) & 1 ? 64 : takeSize(data, size);
  int64_t *strides[] = {a.q_stride, a.k_stride, a.v_stride};
  for (int64_t *s : strides) {
    for (int i = 0; i < 3; ++i)
      s[i] = takeStride(data, size);
    s[3] = takeInt(data, size) & 7 ? 1 : takeSize(data, size);
  }
  for (int i = 0; i < 3; ++i) // any stride, 1 included
    a.mask_stride[i] = takeSize(data, size);
  a.q = reinterpret_cast<const void *>(takeAddress(data, size));
  a.k = reinterpret_cast<const void *>(takeAddress(data, size));
  a.v = reinterpret_cast<const void *>(takeAddress(data, size));
  a.mask = reinterpret_cast<const void *>(takeAddress(data, size));
  a.out = reinterpret_cast<void *>(takeAddress(data, size));
  // Form 2: the mask from positions; 3: positions beside a mask (refused).
  const int form = static_cast<int>(takeInt(data, size) & 3);
  if (form >= 2) {
    a.slot_positions =
        reinterpret_cast<const int64_t *>(takeAddress(data, size));
    a.query_positions =
        reinterpret_cast<const int64_t *>(takeAddress(data, size));
    a.slot_positions_stride_b = takeStride(data, size);
    a.query_positions_stride_b = takeStride(data, size);
    if (form == 2)
      a.mask = nullptr;
  }
  const bool positions = a.slot_positions || a.query_positions;
  // Any int: the header fixes the enums' underlying type in C++.
  a.layout = static_cast<moss_layout_t>(takeInt(data, size) % 4);
  uint32_t scaleBits = static_cast<uint32_t>(takeInt(data, size));
  switch (scaleBits & 3) {
  case 0:
    a.scale = 0.f;
    break;
  case 1:
    a.scale = static_cast<float>(scaleBits >> 2) / 1024.f;
    break;
  default:
    std::memcpy(&a.scale, &scaleBits, sizeof a.scale);
  }

  bool valid = inDims(a.B, 1) && inDims(a.H, 1) && inDims(a.T, 1) &&
               inDims(a.S, 1) && a.D == 64;
  const void *aligned[] = {a.q, a.k, a.v, a.out};
  for (const void *p : aligned)
    valid = valid && p && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  if (positions) {
    const int64_t *tables[] = {a.slot_positions, a.query_positions};
    valid = valid && !a.mask;
    for (const int64_t *t : tables)
      valid = valid && t && reinterpret_cast<uintptr_t>(t) % 8 == 0;
    valid = valid && a.slot_positions_stride_b >= 0 &&
            a.query_positions_stride_b >= 0;
  } else {
    valid = valid && a.mask;
  }
  valid = valid && (a.layout == 0 || a.layout == 1) && std::isfinite(a.scale) &&
          a.scale >= 0.f;
  for (const int64_t *s : strides)
    valid = valid && s[3] == 1 && s[0] >= 0 && s[1] >= 0 && s[2] >= 0 &&
            s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0;
  for (int i = 0; i < 3; ++i)
    valid = valid && a.mask_stride[i] >= 0;
  if (valid) {
    const int64_t qSizes[] = {a.B, a.H, a.T, a.D};
    const int64_t kvSizes[] = {a.B, a.H, a.S, a.D};
    const int64_t maskSizes[] = {a.B, a.T, a.S};
    const int64_t slotSizes[] = {a.B, a.S}, querySizes[] = {a.B, a.T};
    const int64_t slotStrides[] = {a.slot_positions_stride_b, 1};
    const int64_t queryStrides[] = {a.query_positions_stride_b, 1};
    std::vector<Range> inputs = {
        rangeOf(reinterpret_cast<uintptr_t>(a.q), qSizes, a.q_stride, 4, 2),
        rangeOf(reinterpret_cast<uintptr_t>(a.k), kvSizes, a.k_stride, 4, 2),
        rangeOf(reinterpret_cast<uintptr_t>(a.v), kvSizes, a.v_stride, 4, 2)};
    if (positions) {
      inputs.push_back(rangeOf(reinterpret_cast<uintptr_t>(a.slot_positions),
                               slotSizes, slotStrides, 2, 8));
      inputs.push_back(rangeOf(reinterpret_cast<uintptr_t>(a.query_positions),
                               querySizes, queryStrides, 2, 8));
    } else {
      inputs.push_back(rangeOf(reinterpret_cast<uintptr_t>(a.mask), maskSizes,
                               a.mask_stride, 3, 1));
    }
    const uintptr_t out = reinterpret_cast<uintptr_t>(a.out);
    const Range outRange{out, out + u128(a.B) * u128(a.H) * u128(a.T) * 128};
    valid = outRange.end < kAddressSpace;
    for (const Range &r : inputs)
      valid = valid && r.end < kAddressSpace && !overlaps(r, outRange);
  }
  Status status = checkAttentionArgs(a);
  MOSS_FUZZ_CHECK(status.ok() == valid, std::string("oracle says ") +
                                            (valid ? "valid" : "invalid") +
                                            "; " + status.message);
  if (!valid)
    checkRejection(status, "moss_streaming_attention(B=");
}

} // namespace

void fuzzArgChecks(const uint8_t *data, size_t size) {
  if (size == 0)
    return;
  // Odd: a GEMM call; bit 1 of an even byte: moss_qkv_rope_cache's checks.
  const uint8_t which = data[0];
  ++data, --size;
  if (which & 1)
    fuzzGemm(data, size);
  else if (which & 2)
    fuzzRopeCache(data, size);
  else
    fuzzAttention(data, size);
}

} // namespace moss::fuzz
