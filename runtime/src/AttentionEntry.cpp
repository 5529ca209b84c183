//===- AttentionEntry.cpp - moss_streaming_attention ----------------------===//
//
// One call: validate against the generated kernel's real requirements
// (docs/kernel-abi.md, "Attention kernel ABI"), find the context's state,
// apply the shared launch rule (moss::config::deriveAttentionLaunch) and
// launch the kernel; with split-KV the splits are one thread-block cluster
// and merge in the kernel. No host sync, no
// allocation, no module loading once the context is set up: calls can be
// captured into CUDA graphs. There is no hand-written fallback by design.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"
#include "RuntimeImpl.h"

#include "moss/Config/AttentionLaunch.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace moss::runtime {
namespace {

constexpr int64_t kHeadDim = config::kAttentionHeadDim;

struct AttentionCall {
  const moss_attention_args &a;
  CUstream stream;
};

/// k or v ([B, H, S, 64] bf16, D contiguous) as the kernel's TMA tensor map:
/// boxes of 64 keys x 64 d (128 bytes a row, the 128-byte swizzle of the
/// kernel's K/V slots), keys past S zero-filled. False when the driver
/// refuses the layout (a stride of 0, say): the cp.async function then
/// serves the launch, as it serves every layout checkAttentionArgs accepts.
bool encodeKvMap(const DriverApi &api, const void *base,
                 const moss_attention_args &a, const int64_t *stride,
                 CUtensorMap &out) {
  cuuint64_t dims[4] = {
      static_cast<cuuint64_t>(kHeadDim), static_cast<cuuint64_t>(a.S),
      static_cast<cuuint64_t>(a.H), static_cast<cuuint64_t>(a.B)};
  // Byte strides of S, H and B (checkAttentionArgs: multiples of 16 bytes).
  cuuint64_t strides[3] = {static_cast<cuuint64_t>(stride[2]) * 2,
                           static_cast<cuuint64_t>(stride[1]) * 2,
                           static_cast<cuuint64_t>(stride[0]) * 2};
  cuuint32_t box[4] = {static_cast<cuuint32_t>(kHeadDim),
                       static_cast<cuuint32_t>(config::kAttentionKeysPerTile),
                       1, 1};
  cuuint32_t elementStrides[4] = {1, 1, 1, 1};
  return api.tensorMapEncodeTiled(
             &out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
             const_cast<void *>(base), dims, strides, box, elementStrides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

Status launchAttention(const DriverApi &api, const AttentionKernel &kernel,
                       const LoadedAttention &loaded, const AttentionCall &c,
                       const WorkspaceConfig &tuning) {
  const int64_t forcedSplits = tuning.attentionSplits;
  const int64_t forcedGroups = tuning.attentionKvGroups;
  const moss_attention_args &a = c.a;
  config::AttentionLaunch launch;
  std::string err;
  if (!config::deriveAttentionLaunch(
          a.B, a.H, a.T, a.S, forcedSplits, forcedGroups, launch, err,
          tuning.attentionCopyWarps,
          static_cast<config::AttentionTmaMode>(tuning.attentionTma),
          static_cast<config::AttentionTriggerMode>(tuning.attentionTrigger),
          static_cast<config::AttentionSplitKvMode>(tuning.attentionSplitKv)))
    return invalidArgument(err);
  // K and V by the TMA engine (g4_tma or g4_tma_kv, g2_tma, g1_tma) in the
  // launches marked tmaCopies (MOSS_ATTENTION_TMA picks which) when both maps
  // encode; the maps travel by value in the launch's parameters (a graph
  // keeps its copy). Otherwise g4, g2 or g1 serves the launch by cp.async.
  // CUtensorMap carries the alignment the driver needs (64 bytes in CUDA 12's
  // cuda.h, 128 in 13's); a weaker alignas would be ill-formed (clang rejects
  // it).
  CUtensorMap kMap = {}, vMap = {};
  const bool tma = launch.tmaCopies &&
                   encodeKvMap(api, a.k, a, a.k_stride, kMap) &&
                   encodeKvMap(api, a.v, a, a.v_stride, vMap);
  // Without the maps the launch is the rule's without TMA (g2 gets its copy
  // warps back, g4 drops the trip mbarrier's 16 bytes).
  if (launch.tmaCopies && !tma &&
      !config::deriveAttentionLaunch(
          a.B, a.H, a.T, a.S, forcedSplits, forcedGroups, launch, err,
          tuning.attentionCopyWarps, config::AttentionTmaMode::off,
          static_cast<config::AttentionTriggerMode>(tuning.attentionTrigger)))
    return invalidArgument(err);
  const void *q = a.q, *k = a.k, *v = a.v, *mask = a.mask;
  void *out = a.out;
  int64_t strides[12] = {a.q_stride[0],    a.q_stride[1],    a.q_stride[2],
                         a.k_stride[0],    a.k_stride[1],    a.k_stride[2],
                         a.v_stride[0],    a.v_stride[1],    a.v_stride[2],
                         a.mask_stride[0], a.mask_stride[1], a.mask_stride[2]};
  int32_t sizes[4] = {static_cast<int32_t>(a.B), static_cast<int32_t>(a.H),
                      static_cast<int32_t>(a.T), static_cast<int32_t>(a.S)};
  float scale = a.scale == 0.f
                    ? static_cast<float>(1.0 / std::sqrt(double(kHeadDim)))
                    : a.scale;
  int32_t layout = static_cast<int32_t>(a.layout);
  int32_t flags = static_cast<int32_t>(
      (a.skip_empty_tiles ? config::kAttentionFlagSkipEmptyTiles : 0) |
      (launch.earlyTrigger ? config::kAttentionFlagEarlyTrigger : 0));
  int32_t splits = static_cast<int32_t>(launch.splits);
  // One slot a parameter of config::kAttentionParams, by name.
  void *params[config::kAttentionParamCount] = {};
  auto set = [&](config::AttentionParam p, void *value) {
    params[config::paramIndex(p)] = value;
  };
  using P = config::AttentionParam;
  set(P::Q, &q);
  set(P::K, &k);
  set(P::V, &v);
  set(P::Mask, &mask);
  set(P::Out, &out);
  const P strideParams[12] = {P::QStrideB,    P::QStrideH,    P::QStrideT,
                              P::KStrideB,    P::KStrideH,    P::KStrideS,
                              P::VStrideB,    P::VStrideH,    P::VStrideS,
                              P::MaskStrideB, P::MaskStrideT, P::MaskStrideS};
  for (int i = 0; i < 12; ++i)
    set(strideParams[i], &strides[i]);
  const P sizeParams[4] = {P::B, P::H, P::T, P::S};
  for (int i = 0; i < 4; ++i)
    set(sizeParams[i], &sizes[i]);
  set(P::Scale, &scale);
  set(P::Layout, &layout);
  set(P::Flags, &flags);
  set(P::Splits, &splits);
  set(P::KMap, &kMap);
  set(P::VMap, &vMap);
  // The positions functions read these, the mask functions `mask`.
  const void *slotPositions = a.slot_positions,
             *queryPositions = a.query_positions;
  int64_t slotStride = a.slot_positions_stride_b,
          queryStride = a.query_positions_stride_b;
  set(P::SlotPositions, &slotPositions);
  set(P::SlotPositionsStrideB, &slotStride);
  set(P::QueryPositions, &queryPositions);
  set(P::QueryPositionsStrideB, &queryStride);
  for (int i = 0; i < config::kAttentionParamCount; ++i)
    if (!params[i])
      return failure(MOSS_ERROR_UNSUPPORTED,
                     std::string("attention parameter ") +
                         config::kAttentionParams[i].name +
                         " has no value in this runtime's launch");

  // The function of the launch's key-group count (1..4 by the rule), the
  // split one when the keys are split, the TMA one when it copies by TMA
  // (g4_tma_kv where the launch splits K's and V's mbarriers), the _pos one
  // when the mask comes from positions.
  size_t fn = static_cast<size_t>(config::attentionFunctionIndex(
      launch.kvGroups, launch.splits > 1, tma, tma && launch.splitKvBarriers,
      a.slot_positions != nullptr));
  CUlaunchConfig cfg = {};
  cfg.gridDimX = static_cast<unsigned>(launch.gridX);
  cfg.gridDimY = static_cast<unsigned>(launch.gridY);
  cfg.gridDimZ = static_cast<unsigned>(launch.splits);
  cfg.blockDimX = static_cast<unsigned>(launch.threads);
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = static_cast<unsigned>(launch.sharedBytes);
  cfg.hStream = c.stream;
  // The splits of one (b, h, row block) merge through distributed shared
  // memory: they form one cluster (1, 1, splits).
  CUlaunchAttribute attrs[2] = {};
  unsigned numAttrs = 0;
  if (launch.splits > 1) {
    CUlaunchAttribute &cluster = attrs[numAttrs++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = 1;
    cluster.value.clusterDim.y = 1;
    cluster.value.clusterDim.z = static_cast<unsigned>(launch.splits);
  }
  // The kernel runs griddepcontrol either way; only this attribute lets it
  // be scheduled before the previous kernel in the stream has finished.
  if (tuning.attentionProgrammaticLaunch) {
    CUlaunchAttribute &overlap = attrs[numAttrs++];
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
  }
  cfg.attrs = numAttrs ? attrs : nullptr;
  cfg.numAttrs = numAttrs;
  CUresult result =
      api.launchKernelEx(&cfg, loaded.functions[fn], params, nullptr);
  if (result != CUDA_SUCCESS)
    return cudaFailure("launching " + kernel.record.functions[fn].symbol,
                       result);
  return success();
}

Status runAttention(moss_runtime_s &rt, const AttentionCall &c) {
  Status status = checkAttentionArgs(c.a);
  if (!status.ok())
    return status;
  const KernelSet &kernels = rt.kernels;
  if (kernels.kernelsDir.empty())
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "moss_streaming_attention: no generated attention kernel: "
                   "the runtime was created without a kernels dir");
  if (kernels.attention.empty())
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "moss_streaming_attention: no generated attention kernel "
                   "in " +
                       kernels.kernelsDir + " (manifest lists none)");
  std::string label = "moss_streaming_attention(B=" + std::to_string(c.a.B) +
                      ", H=" + std::to_string(c.a.H) +
                      ", T=" + std::to_string(c.a.T) +
                      ", S=" + std::to_string(c.a.S) + "): ";
  ScopedContext scope;
  ContextState *state = nullptr;
  status = rt.modules->enter(c.stream, scope, state);
  if (!status.ok())
    return failure(status.code, label + status.message);
  const DriverApi &api = *driverApi();
  const WorkspaceConfig &tuning = rt.modules->workspaceConfig();
  status = launchAttention(api, kernels.attention.front(),
                           state->attention.front(), c, tuning);
  if (!status.ok())
    return failure(status.code, label + status.message);
  return success();
}

} // namespace
} // namespace moss::runtime

using namespace moss::runtime;

extern "C" {

MOSS_RUNTIME_API moss_status_t moss_streaming_attention(
    moss_runtime_t rt, const moss_attention_args *args, void *stream) {
  if (!rt)
    return report(nullptr,
                  invalidArgument("moss_streaming_attention: rt is NULL"));
  if (!args)
    return report(rt,
                  invalidArgument("moss_streaming_attention: args is NULL"));
  try {
    return report(rt,
                  runAttention(*rt, {*args, static_cast<CUstream>(stream)}));
  } catch (...) {
    return report(rt, failure(MOSS_ERROR_CUDA,
                              "moss_streaming_attention: out of host memory"));
  }
}

} // extern "C"
