//===- Workspace.cpp - Workspace slots and the runtime's settings ---------===//
//
// The settings a runtime reads from the environment at create, and the
// per-stream workspace slots of a context: reserved at set-up, bound to the
// first streams that need one, and added for a stream that finds none taken
// when its call needs memory of its own (never during capture).
//
//===----------------------------------------------------------------------===//

#include "ModuleCache.h"

#include "moss/Config/AttentionLaunch.h"

#include <cstdlib>
#include <string>

namespace moss::runtime {
namespace {

/// Reads integer variable `name` in [lo, hi] into `value`; unset leaves it.
Status intFromEnv(const char *name, long lo, long hi, long &value) {
  const char *text = std::getenv(name);
  if (!text)
    return success();
  char *end = nullptr;
  long parsed = std::strtol(text, &end, 10);
  if (!*text || *end || parsed < lo || parsed > hi)
    return invalidArgument(std::string(name) + "=\"" + text +
                           "\": expected an integer in " + std::to_string(lo) +
                           ".." + std::to_string(hi));
  value = parsed;
  return success();
}

} // namespace

/// Sub-buffers start on 256-byte boundaries (cuBLASLt's and our kernels'
/// vector loads need 16; 256 keeps each slot on its own cache lines).
constexpr size_t kWorkspaceAlign = 256;

size_t roundUpToWorkspaceAlign(size_t bytes) {
  return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

Status workspaceConfigFromEnv(WorkspaceConfig &out) {
  WorkspaceConfig config;
  long slots = static_cast<long>(config.slots);
  long splits = 0, groups = 0, pdl = 0, attentionPdl = 0, copyWarps = -1,
       tma = 1, trigger = 1, splitKv = 1;
  Status status = intFromEnv("MOSS_RUNTIME_WORKSPACE_SLOTS", 1, 64, slots);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_SPLITS", 1,
                        moss::config::kAttentionMaxSplits, splits);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_KV_GROUPS", 1,
                        moss::config::kAttentionMaxKvGroups, groups);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_COPY_WARPS", 0,
                        moss::config::kAttentionMaxWarps - 1, copyWarps);
  if (status.ok())
    status = intFromEnv("MOSS_CODEC_GEMM_PDL", 0, 1, pdl);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_PDL", 0, 1, attentionPdl);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_TMA", 0, 2, tma);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_EARLY_TRIGGER", 0, 2, trigger);
  if (status.ok())
    status = intFromEnv("MOSS_ATTENTION_SPLIT_KV", 0, 2, splitKv);
  if (!status.ok())
    return status;
  config.slots = static_cast<size_t>(slots);
  config.gemmProgrammaticLaunch = pdl == 1;
  config.attentionProgrammaticLaunch = attentionPdl == 1;
  config.attentionSplits = splits;
  config.attentionKvGroups = groups;
  config.attentionCopyWarps = copyWarps;
  config.attentionTma = static_cast<int>(tma);
  config.attentionTrigger = static_cast<int>(trigger);
  config.attentionSplitKv = static_cast<int>(splitKv);
  out = config;
  return success();
}

const WorkspaceSlot *ContextState::slotForLocked(uint64_t key) {
  auto it = slotOfStream.find(key);
  if (it != slotOfStream.end())
    return &slots[it->second];
  if (slotOfStream.size() >= slots.size())
    return nullptr;
  size_t index = slotOfStream.size();
  slotOfStream.emplace(key, index);
  return &slots[index];
}

Status ContextState::addSlotLocked(const DriverApi &api, uint64_t key,
                                   CUstream stream, size_t bytes,
                                   const WorkspaceSlot *&out) {
  bool capturing = false;
  if (Status status = streamCapturing(api, stream, capturing); !status.ok())
    return status;
  if (capturing)
    return failure(MOSS_ERROR_UNSUPPORTED,
                   "this stream has no workspace slot (all " +
                       std::to_string(slots.size()) +
                       " are bound to other streams) and one cannot be "
                       "reserved during stream capture: make one call on "
                       "this stream before capturing, or raise "
                       "MOSS_RUNTIME_WORKSPACE_SLOTS");
  CUdeviceptr memory = 0;
  CUresult result = api.memAlloc(&memory, roundUpToWorkspaceAlign(bytes));
  if (result != CUDA_SUCCESS)
    return cudaFailure("reserving a workspace slot of " +
                           std::to_string(roundUpToWorkspaceAlign(bytes)) +
                           " bytes",
                       result);
  addedSlots.push_back(memory);
  WorkspaceSlot slot;
  slot.cublas = reinterpret_cast<void *>(memory);
  slot.cublasBytes = roundUpToWorkspaceAlign(bytes);
  slots.push_back(slot);
  slotOfStream[key] = slots.size() - 1;
  out = &slots.back();
  return success();
}

Status streamCapturing(const DriverApi &api, CUstream stream, bool &out) {
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult result = api.streamIsCapturing(stream, &capture);
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return cudaFailure("cuStreamIsCapturing", result);
  out = result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
        capture != CU_STREAM_CAPTURE_STATUS_NONE;
  return success();
}

} // namespace moss::runtime
