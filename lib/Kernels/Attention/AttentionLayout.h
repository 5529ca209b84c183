//===- AttentionLayout.h - Attention fragment and mask layouts -*- C++ -*-===//
//
// The constants the attention kernel's pieces agree on: the tile sizes, the
// bit of a (row, key) in a lane's packed mask word, the kernel's parameter
// indices and the online-softmax state a lane carries.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_ATTENTION_ATTENTIONLAYOUT_H
#define MOSS_LIB_KERNELS_ATTENTION_ATTENTIONLAYOUT_H

#include "Common/MlirNames.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/AttentionParams.h"

#include <cstdint>

namespace moss::attention {

constexpr int64_t kD = config::kAttentionHeadDim;
constexpr int64_t kKeys = config::kAttentionKeysPerTile;
constexpr int64_t kRowsPerWarp = config::kAttentionRowsPerWarp;
constexpr int64_t kMaxThreads = 32 * config::kAttentionMaxWarps;
constexpr int64_t kTileElems = kKeys * kD;     // one K or V tile (bf16)
constexpr int64_t kSlotElems = 2 * kTileElems; // K then V
constexpr int64_t kChunksPerRow = kD * 2 / 16; // 16-byte chunks of a row
/// Per-lane floats a key group hands over in the merge: acc, m[2], l[2].
constexpr int64_t kMergeFloats = 4 * (kD / 8) + 4;
constexpr int64_t kKeyGroups = kKeys / 8; // n8 tiles of S
constexpr int64_t kDGroups = kD / 8;      // n8 tiles of O
/// Per-lane floats of one row a split hands over: m, l, acc (16).
constexpr int64_t kSplitRowFloats = 2 + 2 * kDGroups;
static_assert(2 * kSplitRowFloats == kMergeFloats,
              "a split's hand-over fits a key group's entry");
constexpr double kLog2e = 1.4426950408889634;
/// quadMaskWords' raw values: per row 5 covering words and a shift.
constexpr int64_t kRawMaskValues = 2 * 6;

static_assert(kD == 64 && kKeys == 64, "the fragment maps assume 64 x 64");
static_assert(config::kAttentionSlotBytes == kSlotElems * 2, "slot size");

/// Bit of (row g + 8r, key 8n + 2t + e) in a lane's packed mask word: key
/// group n = 2t' + h comes from quad lane t' (keys 16t'..16t'+15), the order
/// exchangeMaskWords produces; the byte path packs the same way.
constexpr int64_t maskBit(int64_t n, int64_t r, int64_t e) {
  return 16 * (n / 4) + 8 * e + 4 * r + 2 * (n % 2) + (n / 2) % 2;
}
/// The bits of row r (every key group and e).
constexpr uint32_t rowMaskBits(int64_t r) {
  uint32_t bits = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t e = 0; e < 2; ++e)
      bits |= 1u << maskBit(n, r, e);
  return bits;
}
static_assert((rowMaskBits(0) | rowMaskBits(1)) == 0xFFFFFFFFu &&
                  (rowMaskBits(0) & rowMaskBits(1)) == 0,
              "maskBit is a bijection onto 32 bits");

/// Kernel parameters (moss::config::kAttentionParams): kQ, kK, ... kVMap.
enum KernelArg {
#define MOSS_KERNEL_ARG(id, name, kind) k##id,
  MOSS_ATTENTION_PARAMS(MOSS_KERNEL_ARG)
#undef MOSS_KERNEL_ARG
      kNumArgs
};
static_assert(kNumArgs == config::kAttentionParamCount);

/// Online-softmax state of one lane: rows g and g+8 of its warp.
struct RowState {
  Value m[2], l[2];
  SmallVector<Value> acc; ///< kDGroups x 4 accumulators (O layout).

  /// The order in which loops carry, yield and hand over a state:
  /// m[0], m[1], l[0], l[1], acc.
  SmallVector<Value> values() const {
    SmallVector<Value> v = {m[0], m[1], l[0], l[1]};
    llvm::append_range(v, acc);
    return v;
  }
  static RowState fromValues(ValueRange v) {
    RowState st;
    st.m[0] = v[0];
    st.m[1] = v[1];
    st.l[0] = v[2];
    st.l[1] = v[3];
    st.acc.assign(v.begin() + 4, v.end());
    return st;
  }
};

} // namespace moss::attention

#endif // MOSS_LIB_KERNELS_ATTENTION_ATTENTIONLAYOUT_H
