//===- RuntimeImpl.h - The object behind moss_runtime_t --------*- C++ -*-===//

#ifndef MOSS_RUNTIME_RUNTIMEIMPL_H
#define MOSS_RUNTIME_RUNTIMEIMPL_H

#include "KernelSet.h"
#include "ModuleCache.h"
#include "Status.h"

#include "moss/Runtime/moss_runtime.h"

#include <cstdint>
#include <memory>

struct moss_runtime_s {
  /// Unique per runtime in the process: keys the thread-local last errors,
  /// so a new runtime at a freed runtime's address starts clean.
  uint64_t serial = 0;
  moss::runtime::KernelSet kernels;
  std::unique_ptr<moss::runtime::ModuleCache> modules;
};

namespace moss::runtime {

/// Records a failing status as the calling thread's last error for `rt`
/// (nullptr: the runtime-less slot) and returns its code; MOSS_OK passes.
moss_status_t report(moss_runtime_t rt, const Status &status);

} // namespace moss::runtime

#endif // MOSS_RUNTIME_RUNTIMEIMPL_H
