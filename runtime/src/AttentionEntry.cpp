//===- AttentionEntry.cpp - moss_streaming_attention ----------------------===//
//
// The generated attention kernel comes with a later issue. Arguments are
// validated fully now, so callers get the final contract; with no attention
// kernel in the manifest the call reports MOSS_ERROR_UNSUPPORTED (there is no
// hand-written fallback by design).
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace moss::runtime {
namespace {

constexpr int64_t kHeadDim = 64;

struct Extent {
  const char *name;
  uintptr_t begin = 0, end = 0;
};

/// Byte range [begin, end) a strided tensor can touch.
bool extentOf(const char *name, const void *base, const int64_t *sizes,
              const int64_t *strides, int rank, int64_t elementBytes,
              Extent &out) {
  uint64_t last = 0; // Offset in elements of the last element.
  for (int i = 0; i < rank; ++i) {
    uint64_t step = static_cast<uint64_t>(sizes[i] - 1);
    uint64_t stride = static_cast<uint64_t>(strides[i]);
    if (step && stride > (UINT64_MAX - last) / step)
      return false;
    last += step * stride;
  }
  uintptr_t begin = reinterpret_cast<uintptr_t>(base);
  if (last > (UINT64_MAX - begin) / elementBytes - 1)
    return false;
  out = {name, begin, begin + (last + 1) * elementBytes};
  return true;
}

Status validate(const moss_attention_args &a) {
  std::string where =
      "moss_streaming_attention(B=" + std::to_string(a.B) +
      ", H=" + std::to_string(a.H) + ", T=" + std::to_string(a.T) +
      ", S=" + std::to_string(a.S) + ", D=" + std::to_string(a.D) + "): ";
  const int64_t dims[] = {a.B, a.H, a.T, a.S, a.D};
  for (int64_t dim : dims)
    if (dim < 1 || dim > INT32_MAX)
      return invalidArgument(where + "B, H, T, S and D must be in [1, "
                                     "2147483647]");
  if (a.D != kHeadDim)
    return invalidArgument(where + "D must be 64 (the codec's head size)");
  struct Operand {
    const char *name;
    const void *pointer;
  };
  const Operand pointers[] = {
      {"q", a.q}, {"k", a.k}, {"v", a.v}, {"mask", a.mask}, {"out", a.out}};
  for (const Operand &op : pointers)
    if (!op.pointer)
      return invalidArgument(where + op.name + " is NULL");
  for (const Operand &op : {pointers[0], pointers[1], pointers[2], pointers[4]})
    if (reinterpret_cast<uintptr_t>(op.pointer) % 2)
      return invalidArgument(where + op.name + " is not 2-byte aligned (bf16)");
  if (a.layout != MOSS_LAYOUT_BTHD && a.layout != MOSS_LAYOUT_BHTD)
    return invalidArgument(where + "layout " +
                           std::to_string(static_cast<int>(a.layout)) +
                           " is not 0 (BTHD) or 1 (BHTD)");
  if (!std::isfinite(a.scale) || a.scale < 0.f)
    return invalidArgument(where + "scale must be finite and >= 0 (0 means "
                                   "D^-0.5)");

  const int64_t qSizes[] = {a.B, a.H, a.T, a.D};
  const int64_t kvSizes[] = {a.B, a.H, a.S, a.D};
  const int64_t maskSizes[] = {a.B, a.T, a.S};
  struct Strided {
    const char *name;
    const void *pointer;
    const int64_t *sizes;
    const int64_t *strides;
    int rank;
    int64_t elementBytes;
  };
  const Strided tensors[] = {{"q", a.q, qSizes, a.q_stride, 4, 2},
                             {"k", a.k, kvSizes, a.k_stride, 4, 2},
                             {"v", a.v, kvSizes, a.v_stride, 4, 2},
                             {"mask", a.mask, maskSizes, a.mask_stride, 3, 1}};
  Extent extents[4];
  for (int i = 0; i < 4; ++i) {
    const Strided &t = tensors[i];
    for (int d = 0; d < t.rank; ++d)
      if (t.strides[d] < 0)
        return invalidArgument(where + t.name + " stride " + std::to_string(d) +
                               " is negative");
    if (t.rank == 4 && t.strides[3] != 1)
      return invalidArgument(where + t.name +
                             " must be contiguous in D (stride[3] == 1)");
    if (!extentOf(t.name, t.pointer, t.sizes, t.strides, t.rank, t.elementBytes,
                  extents[i]))
      return invalidArgument(where + t.name +
                             " strides run past the end of the address "
                             "space");
  }
  uintptr_t outBegin = reinterpret_cast<uintptr_t>(a.out);
  uint64_t outBytes = static_cast<uint64_t>(a.B) * a.H * a.T * a.D * 2;
  if (outBegin + outBytes < outBegin)
    return invalidArgument(where + "out runs past the end of the address "
                                   "space");
  for (const Extent &e : extents)
    if (e.begin < outBegin + outBytes && outBegin < e.end)
      return invalidArgument(where + "out overlaps " + e.name);
  return success();
}

} // namespace
} // namespace moss::runtime

using namespace moss::runtime;

extern "C" {

MOSS_RUNTIME_API moss_status_t moss_streaming_attention(
    moss_runtime_t rt, const moss_attention_args *args, void *stream) {
  (void)stream;
  if (!rt)
    return report(nullptr,
                  invalidArgument("moss_streaming_attention: rt is NULL"));
  if (!args)
    return report(rt,
                  invalidArgument("moss_streaming_attention: args is NULL"));
  try {
    Status status = validate(*args);
    if (!status.ok())
      return report(rt, status);
    const KernelSet &kernels = rt->kernels;
    if (kernels.kernelsDir.empty())
      return report(rt, failure(MOSS_ERROR_UNSUPPORTED,
                                "no generated attention kernel: the runtime "
                                "was created without a kernels dir"));
    if (kernels.attention.empty())
      return report(rt,
                    failure(MOSS_ERROR_UNSUPPORTED,
                            "no generated attention kernel in " +
                                kernels.kernelsDir + " (manifest lists none)"));
    return report(rt,
                  failure(MOSS_ERROR_UNSUPPORTED,
                          "the manifest in " + kernels.kernelsDir +
                              " lists attention kernels, but this runtime "
                              "cannot launch them yet (no launch contract)"));
  } catch (...) {
    return report(rt, failure(MOSS_ERROR_CUDA,
                              "moss_streaming_attention: out of host memory"));
  }
}

} // extern "C"
