//===- ModuleCache.h - Modules, cuBLASLt and workspace per context -*- C++ -*-//
//
// CUmodules, CUfunctions and device memory belong to one CUDA context, so
// everything a call needs is kept per context, keyed by the context's unique
// id (cuCtxGetId; handles can be reused after a context is destroyed). A
// context is set up once, outside graph capture; afterwards calls only look
// things up, under a short lock.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_RUNTIME_MODULECACHE_H
#define MOSS_RUNTIME_MODULECACHE_H

#include "CublasLtFallback.h"
#include "DriverApi.h"
#include "FallbackEpilogue.h"
#include "KernelSet.h"
#include "Status.h"
#include "moss/Config/AttentionLaunch.h"

#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace moss::runtime {

struct WorkspaceConfig {
  size_t slots = 4;                      ///< Streams with a workspace.
  size_t cublasBytes = size_t(16) << 20; ///< cuBLASLt workspace per slot.
  /// Split-KV count forced on every attention call (0: the launch rule). A
  /// tuning knob for measuring the rule, not a serving setting.
  int64_t attentionSplits = 0;
  /// Key groups forced likewise (0: the launch rule).
  int64_t attentionKvGroups = 0;
  /// MOSS_ATTENTION_COPY_WARPS (0..3): forced copy warps; -1 = rule.
  int64_t attentionCopyWarps = -1;
  /// MOSS_ATTENTION_TMA (config::AttentionTmaMode): 0 = K and V always by
  /// cp.async; 1 (default) = by the TMA engine (g4_tma[_kv], g2_tma, g1_tma) in
  /// launches the rule marks (AttentionLaunch::tmaCopies); 2 = in every launch
  /// that has a TMA function (attentionHasTmaCopies), a tuning knob for
  /// measuring the rule. Either only where the driver encodes k and v as tensor
  /// maps.
  int attentionTma = 1;
  /// MOSS_ATTENTION_EARLY_TRIGGER (config::AttentionTriggerMode): 0 =
  /// attention triggers its dependents after its last key tile; 1 (default)
  /// = at the start in the launches the rule marks
  /// (AttentionLaunch::earlyTrigger); 2 = at the start always, a tuning knob
  /// for measuring the rule. Matters only to programmatic launches.
  int attentionTrigger = 1;
  /// MOSS_ATTENTION_SPLIT_KV (config::AttentionSplitKvMode): 0 = g4_tma
  /// serves every launch of it; 1 (default) = g4_tma_kv (K and V on
  /// mbarriers of their own) serves those the rule marks
  /// (AttentionLaunch::splitKvBarriers); 2 = g4_tma_kv serves every one, a
  /// tuning knob for measuring the rule.
  int attentionSplitKv = 1;
  /// MOSS_CODEC_GEMM_PDL=1: generated GEMMs are launched as programmatic
  /// dependents of the previous kernel in the stream (they fetch W before
  /// waiting for it; docs/kernel-abi.md).
  bool gemmProgrammaticLaunch = false;
  /// MOSS_ATTENTION_PDL=1: attention is launched likewise (it touches
  /// global memory only after griddepcontrol.wait, so nothing is assumed).
  bool attentionProgrammaticLaunch = false;
};

/// Reads MOSS_RUNTIME_WORKSPACE_SLOTS (1..64, default 4),
/// MOSS_ATTENTION_SPLITS (1..8), MOSS_ATTENTION_KV_GROUPS (1..4),
/// MOSS_ATTENTION_COPY_WARPS (0..3; all default to the launch rule),
/// MOSS_CODEC_GEMM_PDL and MOSS_ATTENTION_PDL (0 or 1, default 0) and
/// MOSS_ATTENTION_TMA, MOSS_ATTENTION_EARLY_TRIGGER and
/// MOSS_ATTENTION_SPLIT_KV (0..2, default 1).
Status workspaceConfigFromEnv(WorkspaceConfig &out);

/// `bytes` rounded up to the 256 bytes every workspace sub-buffer starts on
/// (cuBLASLt's and the kernels' vector loads need 16; 256 keeps each slot on
/// its own cache lines). (Workspace.cpp)
size_t roundUpToWorkspaceAlign(size_t bytes);

struct WorkspaceSlot {
  void *cublas = nullptr;
  size_t cublasBytes = 0;
};

struct LoadedGemm {
  CUmodule module = nullptr;
  CUfunction main = nullptr;
};

struct LoadedAttention {
  CUmodule module = nullptr;
  /// functions[attentionFunctionIndex(g, split)].
  CUfunction functions[config::kAttentionFunctions] = {};
};

struct ContextState {
  CUcontext context = nullptr;
  unsigned long long contextId = 0;
  std::vector<LoadedGemm> gemm;           ///< Parallel to KernelSet::gemm.
  std::vector<LoadedAttention> attention; ///< Parallel to KernelSet::attention.
  EpilogueKernels epilogue;
  cublasLtHandle_t cublas = nullptr;
  CUdeviceptr workspace = 0;
  /// A deque: callers keep a slot's address after the lock is released,
  /// and slots are added (addSlotLocked) while others use theirs.
  std::deque<WorkspaceSlot> slots;
  /// Slots added after set-up, each its own allocation.
  std::vector<CUdeviceptr> addedSlots;

  std::mutex mutex; ///< Guards slotOfStream and plans.
  std::unordered_map<uint64_t, size_t> slotOfStream;
  LtPlanCache plans;

  /// The stream's workspace slot, bound on first sight while slots are free;
  /// nullptr for a stream that came after all were taken. Caller locks.
  const WorkspaceSlot *slotForLocked(uint64_t streamKey);
  /// A new slot of `bytes` bound to `streamKey`, which has none (every
  /// reserved slot is taken): allocated now, so refused (UNSUPPORTED) while
  /// `stream` is being captured. Caller locks.
  Status addSlotLocked(const DriverApi &api, uint64_t streamKey,
                       CUstream stream, size_t bytes,
                       const WorkspaceSlot *&out);
};

/// Makes a context current for the lifetime of the object when it isn't.
class ScopedContext {
public:
  ScopedContext() = default;
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  ~ScopedContext();
  Status enter(const DriverApi &api, CUcontext context);

private:
  const DriverApi *api = nullptr;
  bool pushed = false;
};

class ModuleCache {
public:
  ModuleCache(const KernelSet &kernels, WorkspaceConfig config)
      : kernels(kernels), config(config) {}
  ModuleCache(const ModuleCache &) = delete;
  ModuleCache &operator=(const ModuleCache &) = delete;
  ~ModuleCache();

  /// Sets up the context current on this thread (the primary context of
  /// the current device when none is current). Used by create().
  Status setUpCurrent();

  /// Makes the context `stream` belongs to current (via `scope`) and returns
  /// its state, setting it up on first use unless `stream` is capturing.
  Status enter(CUstream stream, ScopedContext &scope, ContextState *&out);

  const WorkspaceConfig &workspaceConfig() const { return config; }

private:
  Status stateForCurrent(CUcontext context, CUstream stream,
                         ContextState *&out);
  Status setUp(ContextState &state);
  void release(ContextState &state);

  const KernelSet &kernels;
  WorkspaceConfig config;
  std::mutex mutex; ///< Guards states; held during a context's setup.
  std::map<unsigned long long, std::unique_ptr<ContextState>> states;
};

/// Key of a stream for workspace binding: its handle, or for the per-thread
/// default stream its unique id (one per thread), 1 for the legacy stream.
uint64_t streamKey(const DriverApi &api, CUstream stream);

/// Whether `stream` is being captured into a CUDA graph (an implicit
/// capture of the legacy stream counts); a failed query is an error.
/// What cannot be captured (allocations, module loads) asks it first.
Status streamCapturing(const DriverApi &api, CUstream stream, bool &out);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_MODULECACHE_H
