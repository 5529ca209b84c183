//===- DelayedCopy.h - A kernel that lets dependents start, then writes --===//
//
// Test helper for programmatic dependent launch: the kernel signals
// griddepcontrol.launch_dependents first, spins, and only then copies its
// inputs into place (and records what it read from a watched buffer), so a
// dependent kernel that read its inputs, or wrote its outputs, before
// griddepcontrol.wait would see stale data or be caught writing too early.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_UNITTESTS_RUNTIME_DELAYEDCOPY_H
#define MOSS_UNITTESTS_RUNTIME_DELAYEDCOPY_H

#include <cuda_runtime_api.h>

#include <cstddef>

namespace moss::runtime::test {

struct DelayedCopy {
  static constexpr int kPairs = 4;
  const void *src[kPairs] = {};
  void *dst[kPairs] = {};
  size_t bytes[kPairs] = {};   ///< Multiples of 16; 0 skips the pair.
  const void *watch = nullptr; ///< Copied into `seen` after the spin.
  void *seen = nullptr;
  size_t watchBytes = 0; ///< Multiple of 16.
  long long spinCycles = 0;
};

/// Launches the delayed copy on `stream` (a plain launch: it is the
/// primary). Returns the launch's error.
cudaError_t launchDelayedCopy(const DelayedCopy &copy, cudaStream_t stream);

} // namespace moss::runtime::test

#endif // MOSS_UNITTESTS_RUNTIME_DELAYEDCOPY_H
