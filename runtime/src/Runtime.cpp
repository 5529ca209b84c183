//===- Runtime.cpp - moss_runtime_create/destroy and error messages -------===//
//
// create() checks everything it can on the host first (manifest, whitelist,
// cache key, cubin digests), so those checks work and are testable without a
// GPU; only then does it touch CUDA and set up the current context.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include "moss/Version.h"

#include <atomic>
#include <new>
#include <string>
#include <unordered_map>

namespace moss::runtime {
namespace {

std::atomic<uint64_t> nextSerial{1};

/// Last error per runtime serial on this thread (0: no runtime).
std::unordered_map<uint64_t, std::string> &lastErrors() {
  thread_local std::unordered_map<uint64_t, std::string> errors;
  return errors;
}

} // namespace

moss_status_t report(moss_runtime_t rt, const Status &status) {
  if (!status.ok()) {
    try {
      lastErrors()[rt ? rt->serial : 0] = status.message;
    } catch (...) {
      // Out of memory for the message: the status still tells.
    }
  }
  return status.code;
}

} // namespace moss::runtime

using namespace moss::runtime;

extern "C" {

MOSS_RUNTIME_API int moss_runtime_api_version(void) {
  return MOSS_RUNTIME_API_VERSION;
}

MOSS_RUNTIME_API const char *moss_runtime_version(void) { return MOSS_VERSION; }

MOSS_RUNTIME_API moss_status_t moss_runtime_create(const char *kernels_dir,
                                                   const char *whitelist_path,
                                                   moss_runtime_t *out) {
  if (!out)
    return report(nullptr, invalidArgument("moss_runtime_create: out is NULL"));
  *out = nullptr;
  try {
    auto rt = std::make_unique<moss_runtime_s>();
    rt->serial = nextSerial.fetch_add(1);
    WorkspaceConfig config;
    Status status = workspaceConfigFromEnv(config);
    if (status.ok())
      status = loadKernelSet(kernels_dir, whitelist_path, rt->kernels);
    if (status.ok()) {
      rt->modules = std::make_unique<ModuleCache>(rt->kernels, config);
      status = rt->modules->setUpCurrent();
    }
    if (!status.ok())
      return report(nullptr, status);
    *out = rt.release();
    return MOSS_OK;
  } catch (const std::bad_alloc &) {
    return report(nullptr, failure(MOSS_ERROR_CUDA,
                                   "moss_runtime_create: out of host memory"));
  } catch (...) {
    return report(nullptr, failure(MOSS_ERROR_CUDA,
                                   "moss_runtime_create: unexpected C++ "
                                   "exception"));
  }
}

MOSS_RUNTIME_API void moss_runtime_destroy(moss_runtime_t rt) {
  if (!rt)
    return;
  lastErrors().erase(rt->serial);
  delete rt;
}

MOSS_RUNTIME_API const char *moss_runtime_last_error(moss_runtime_t rt) {
  auto &errors = lastErrors();
  auto it = errors.find(rt ? rt->serial : 0);
  return it == errors.end() ? "" : it->second.c_str();
}

} // extern "C"
