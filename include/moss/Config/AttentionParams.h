//===- AttentionParams.h - The attention kernel's parameter list -*- C++
//-*-===//
//
// The one list of the attention kernel's parameters, in ABI order. The kernel
// signature (lib/Conversion/MossToGPU), the manifest's "args", the runtime's
// launch packing and the table of docs/kernel-abi.md (held to it by
// AttentionParamsTest) all come from it, so a parameter is added, moved or
// renamed in one place.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_CONFIG_ATTENTIONPARAMS_H
#define MOSS_CONFIG_ATTENTIONPARAMS_H

#include <cstddef>

/// X(Id, "name", Kind) for every parameter, in order.
#define MOSS_ATTENTION_PARAMS(X)                                               \
  X(Q, "q", GlobalPointer)                                                     \
  X(K, "k", GlobalPointer)                                                     \
  X(V, "v", GlobalPointer)                                                     \
  X(Mask, "mask", GlobalPointer)                                               \
  X(Out, "out", GlobalPointer)                                                 \
  X(QStrideB, "q_stride_b", Int64)                                             \
  X(QStrideH, "q_stride_h", Int64)                                             \
  X(QStrideT, "q_stride_t", Int64)                                             \
  X(KStrideB, "k_stride_b", Int64)                                             \
  X(KStrideH, "k_stride_h", Int64)                                             \
  X(KStrideS, "k_stride_s", Int64)                                             \
  X(VStrideB, "v_stride_b", Int64)                                             \
  X(VStrideH, "v_stride_h", Int64)                                             \
  X(VStrideS, "v_stride_s", Int64)                                             \
  X(MaskStrideB, "mask_stride_b", Int64)                                       \
  X(MaskStrideT, "mask_stride_t", Int64)                                       \
  X(MaskStrideS, "mask_stride_s", Int64)                                       \
  X(B, "B", Int32)                                                             \
  X(H, "H", Int32)                                                             \
  X(T, "T", Int32)                                                             \
  X(S, "S", Int32)                                                             \
  X(Scale, "scale", Float32)                                                   \
  X(Layout, "layout", Int32)                                                   \
  X(Flags, "flags", Int32)                                                     \
  X(Splits, "splits", Int32)                                                   \
  X(KMap, "k_map", TensorMap)                                                  \
  X(VMap, "v_map", TensorMap)                                                  \
  X(SlotPositions, "slot_positions", GlobalPointer)                            \
  X(SlotPositionsStrideB, "slot_positions_stride_b", Int64)                    \
  X(QueryPositions, "query_positions", GlobalPointer)                          \
  X(QueryPositionsStrideB, "query_positions_stride_b", Int64)

namespace moss::config {

/// How a parameter is passed: a device pointer, a scalar, or a CUtensorMap
/// by value (a 128-byte .param grid constant).
enum class AttentionParamKind {
  GlobalPointer,
  Int64,
  Int32,
  Float32,
  TensorMap
};

/// The parameters by name; their values are the positions.
enum class AttentionParam : int {
#define MOSS_PARAM_ID(id, name, kind) id,
  MOSS_ATTENTION_PARAMS(MOSS_PARAM_ID)
#undef MOSS_PARAM_ID
};

struct AttentionParamInfo {
  const char *name;
  AttentionParamKind kind;
};

inline constexpr AttentionParamInfo kAttentionParams[] = {
#define MOSS_PARAM_INFO(id, name, kind) {name, AttentionParamKind::kind},
    MOSS_ATTENTION_PARAMS(MOSS_PARAM_INFO)
#undef MOSS_PARAM_INFO
};

inline constexpr int kAttentionParamCount =
    static_cast<int>(sizeof(kAttentionParams) / sizeof(kAttentionParams[0]));

/// The position of `p` in the parameter list.
constexpr int paramIndex(AttentionParam p) { return static_cast<int>(p); }

} // namespace moss::config

#endif // MOSS_CONFIG_ATTENTIONPARAMS_H
