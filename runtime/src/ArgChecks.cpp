//===- ArgChecks.cpp - The C API's argument checks -----------------------===//
//
// Sizes are bounded first, so the byte ranges below are computed in 64 bits
// with every product and sum checked: a range that would wrap around the
// address space is an error, never a wrong overlap verdict.
//
//===----------------------------------------------------------------------===//

#include "ArgChecks.h"

#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/GemmMode.h"

#include <initializer_list>

#include <climits>
#include <cmath>
#include <cstdio>
#include <vector>

namespace moss::runtime {
namespace {

constexpr int64_t kBf16Bytes = 2;

std::string pointerText(const void *p) {
  char text[32];
  snprintf(text, sizeof(text), "%p", p);
  return text;
}

struct Extent {
  const char *name;
  uintptr_t begin = 0, end = 0;
};

/// Byte range [begin, end) a strided tensor can touch; false when it runs
/// past the end of the address space.
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
  uintptr_t begin = reinterpret_cast<uintptr_t>(base), end = 0;
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<uint64_t>(elementBytes),
                             &bytes) ||
      __builtin_add_overflow(begin, bytes, &end))
    return false;
  out = {name, begin, end};
  return true;
}

bool overlaps(const Extent &a, const Extent &b) {
  return a.begin < b.end && b.begin < a.end;
}

} // namespace

Status checkGemmShape(const GemmArgs &c) {
  if (c.ep != MOSS_EPILOGUE_NONE && c.ep != MOSS_EPILOGUE_GELU &&
      c.ep != MOSS_EPILOGUE_LAYERSCALE_RESIDUAL)
    return invalidArgument(c.label() + ": epilogue " + std::to_string(c.ep) +
                           " is not 0 (none), 1 (gelu) or 2 "
                           "(layerscale_residual)");
  if (c.mode() < 0)
    return invalidArgument(c.label() +
                           ": the LayerNorm prologue takes "
                           "epilogue 0 (none) or 1 (gelu), not " +
                           std::to_string(c.ep));
  if (c.layerNorm && !(std::isfinite(c.eps) && c.eps >= 0.f))
    return invalidArgument(c.label() + ": eps = " + std::to_string(c.eps) +
                           " must be finite and >= 0");
  if (c.m < 0 || c.m > INT32_MAX)
    return invalidArgument(c.label() + ": m must be in [0, 2147483647]");
  if (c.n < 1 || c.n > INT32_MAX || c.k < 1 || c.k > INT32_MAX)
    return invalidArgument(c.label() + ": n and k must be in [1, 2147483647]");
  return success();
}

namespace {
/// One bf16 operand of a GEMM call: its name and its contiguous extent.
struct GemmOperand {
  const char *name;
  const void *pointer;
  int64_t elements;
};

/// The operands the call reads or writes: x, w, out, then what its
/// epilogue (scale, residual) or prologue (gamma, beta) reads. A fixed
/// array: every GEMM call checks them.
struct GemmOperands {
  GemmOperand list[7];
  size_t count = 0;
};

GemmOperands gemmOperandsOf(const GemmArgs &c) {
  GemmOperands ops;
  auto add = [&](const char *name, const void *pointer, int64_t elements) {
    ops.list[ops.count++] = {name, pointer, elements};
  };
  add("x", c.x, c.m * c.k);
  add("w", c.w, c.n * c.k);
  // moss_qkv_rope_cache's out is q: the first d of the 3 d columns.
  add("out", c.out, c.m * (c.ropeCache ? c.n / 3 : c.n));
  if (c.usesScaleResidual()) {
    add("scale", c.scale, c.n);
    add("residual", c.residual, c.m * c.n);
  }
  if (c.layerNorm) {
    add("gamma", c.gamma, c.k);
    add("beta", c.beta, c.k);
  }
  return ops;
}
} // namespace

Status checkGemmPointers(const GemmArgs &c) {
  const GemmOperands operands = gemmOperandsOf(c);
  Extent ranges[7];
  const int64_t contiguous = 1;
  for (size_t i = 0; i < operands.count; ++i) {
    const GemmOperand &op = operands.list[i];
    if (!op.pointer)
      return invalidArgument(c.label() + ": " + op.name + " is NULL" +
                             (i < 3 ? ""
                              : c.usesScaleResidual()
                                  ? " (layerscale_residual needs scale and "
                                    "residual)"
                                  : " (the LayerNorm needs gamma and beta)"));
    if (reinterpret_cast<uintptr_t>(op.pointer) % kBf16Bytes)
      return invalidArgument(c.label() + ": " + op.name + " = " +
                             pointerText(op.pointer) +
                             " is not 2-byte aligned (bf16)");
    if (!extentOf(op.name, op.pointer, &op.elements, &contiguous, 1, kBf16Bytes,
                  ranges[i]))
      return invalidArgument(c.label() + ": " + op.name +
                             " runs past the end of the address space");
  }
  for (size_t i = 0; i < operands.count; ++i)
    if (i != 2 && overlaps(ranges[i], ranges[2]))
      return invalidArgument(c.label() + ": out overlaps " + ranges[i].name +
                             " (in-place GEMMs are not supported)");
  if (c.usesScaleResidual() && c.rowLive) {
    Extent live;
    if (!extentOf("live", c.rowLive, &c.m, &contiguous, 1, 1, live))
      return invalidArgument(c.label() +
                             ": live runs past the end of the address space");
    if (overlaps(live, ranges[2]))
      return invalidArgument(c.label() + ": out overlaps live");
  }
  return success();
}

bool gemmPointersAligned16(const GemmArgs &c) {
  const GemmOperands operands = gemmOperandsOf(c);
  for (size_t i = 0; i < operands.count; ++i)
    if (reinterpret_cast<uintptr_t>(operands.list[i].pointer) % 16)
      return false;
  // The QKV epilogue stores 8 bf16 at a time into the caches too.
  if (c.ropeCache)
    for (const void *cache : {c.ropeCache->kCache, c.ropeCache->vCache})
      if (reinterpret_cast<uintptr_t>(cache) % 16)
        return false;
  return true;
}

Status checkRopeCacheShape(const GemmArgs &c) {
  const RopeCacheArgs &r = *c.ropeCache;
  const std::string where = c.label() + ": ";
  if (r.length < 1 || r.capacity < 1 || r.capacity > INT32_MAX)
    return invalidArgument(where + "length and the cache's capacity must be in "
                                   "[1, 2147483647]");
  if (r.length > r.capacity)
    return invalidArgument(
        where + "length = " + std::to_string(r.length) +
        " exceeds the cache's capacity = " + std::to_string(r.capacity) +
        " (a chunk's frames need distinct ring slots)");
  if (c.k % config::kRopeHeadDim != 0 || c.n != 3 * c.k)
    return invalidArgument(where + "d_model must be a multiple of " +
                           std::to_string(config::kRopeHeadDim) +
                           " (heads of 64)");
  return success();
}

Status checkRopeCacheArgs(const GemmArgs &c) {
  Status shape = checkRopeCacheShape(c);
  if (!shape.ok())
    return shape;
  const RopeCacheArgs &r = *c.ropeCache;
  const std::string where = c.label() + ": ";
  struct Operand {
    const char *name;
    const void *pointer;
    int64_t alignment;
  };
  const Operand operands[] = {{"positions", r.positions, 8},
                              {"live", r.live, 1},
                              {"cache->k", r.kCache, kBf16Bytes},
                              {"cache->v", r.vCache, kBf16Bytes},
                              {"cache->slot_positions", r.slotPositions, 8}};
  for (const Operand &op : operands) {
    if (!op.pointer)
      return invalidArgument(where + op.name + " is NULL");
    if (reinterpret_cast<uintptr_t>(op.pointer) % op.alignment)
      return invalidArgument(where + op.name + " = " + pointerText(op.pointer) +
                             " is not " + std::to_string(op.alignment) +
                             "-byte aligned");
  }
  // Elements of each operand; the cache's products are checked.
  const int64_t heads = c.k / config::kRopeHeadDim;
  int64_t tableElements = 0, cacheElements = 0;
  if (__builtin_mul_overflow(r.batch, r.capacity, &tableElements) ||
      __builtin_mul_overflow(tableElements, heads * config::kRopeHeadDim,
                             &cacheElements))
    return invalidArgument(where + "the cache's batch * heads * capacity * 64 "
                                   "overflows");
  const int64_t one = 1;
  struct Sized {
    const char *name;
    const void *pointer;
    int64_t elements, bytes;
    bool written;
  };
  const Sized all[] = {
      {"x", c.x, c.m * c.k, kBf16Bytes, false},
      {"w_qkv", c.w, c.n * c.k, kBf16Bytes, false},
      {"gamma", c.gamma, c.k, kBf16Bytes, false},
      {"beta", c.beta, c.k, kBf16Bytes, false},
      {"q", c.out, c.m * c.k, kBf16Bytes, true},
      {"positions", r.positions, c.m, 8, false},
      {"live", r.live, c.m, 1, false},
      {"cache->k", r.kCache, cacheElements, kBf16Bytes, true},
      {"cache->v", r.vCache, cacheElements, kBf16Bytes, true},
      {"cache->slot_positions", r.slotPositions, tableElements, 8, true}};
  constexpr size_t kCount = sizeof(all) / sizeof(all[0]);
  Extent extents[kCount];
  for (size_t i = 0; i < kCount; ++i)
    if (!extentOf(all[i].name, all[i].pointer, &all[i].elements, &one, 1,
                  all[i].bytes, extents[i]))
      return invalidArgument(where + all[i].name +
                             " runs past the end of the address space");
  for (size_t i = 0; i < kCount; ++i)
    for (size_t j = 0; j < kCount; ++j)
      if (all[i].written && i != j && overlaps(extents[i], extents[j]))
        return invalidArgument(where + all[i].name + " overlaps " +
                               all[j].name);
  return success();
}

namespace {
/// The kernel copies K/V rows with 16-byte cp.async (or as TMA boxes, whose
/// tensor maps need the same) and reads q in 4-byte pairs from 16-byte
/// aligned rows: pointers 16-byte aligned, row strides multiples of 8 bf16
/// elements.
constexpr uintptr_t kPointerAlign = 16;
constexpr int64_t kStrideMultiple = 8;

} // namespace

Status checkAttentionArgs(const moss_attention_args &a) {
  std::string where =
      "moss_streaming_attention(B=" + std::to_string(a.B) +
      ", H=" + std::to_string(a.H) + ", T=" + std::to_string(a.T) +
      ", S=" + std::to_string(a.S) + ", D=" + std::to_string(a.D) + "): ";
  const int64_t dims[] = {a.B, a.H, a.T, a.S, a.D};
  for (int64_t dim : dims)
    if (dim < 1 || dim > INT32_MAX)
      return invalidArgument(where + "B, H, T, S and D must be in [1, "
                                     "2147483647]");
  if (a.D != config::kAttentionHeadDim)
    return invalidArgument(where + "D must be 64 (the codec's head size)");
  struct Operand {
    const char *name;
    const void *pointer;
  };
  // The mask comes from a bool mask or from positions, never both.
  const bool positions = a.slot_positions || a.query_positions;
  if (positions && a.mask)
    return invalidArgument(where + "mask and slot_positions/query_positions "
                                   "are both given: pass one form of the "
                                   "mask");
  const Operand rows[] = {{"q", a.q}, {"k", a.k}, {"v", a.v}, {"out", a.out}};
  const Operand positionTables[] = {{"slot_positions", a.slot_positions},
                                    {"query_positions", a.query_positions}};
  for (const Operand &op : rows)
    if (!op.pointer)
      return invalidArgument(where + op.name + " is NULL");
  if (!positions && !a.mask)
    return invalidArgument(where + "mask is NULL (pass a mask, or "
                                   "slot_positions and query_positions)");
  for (const Operand &op : positionTables) {
    if (positions && !op.pointer)
      return invalidArgument(where + op.name +
                             " is NULL (the mask from positions needs "
                             "slot_positions and query_positions)");
    if (reinterpret_cast<uintptr_t>(op.pointer) % 8)
      return invalidArgument(where + op.name + " = " + pointerText(op.pointer) +
                             " is not 8-byte aligned (int64)");
  }
  for (const Operand &op : rows)
    if (reinterpret_cast<uintptr_t>(op.pointer) % kPointerAlign)
      return invalidArgument(where + op.name + " = " + pointerText(op.pointer) +
                             " is not 16-byte aligned (the kernel copies "
                             "rows of 8 bf16 at a time)");
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
  // Positions: int64 [B,S] and [B,T], each row contiguous.
  const int64_t slotSizes[] = {a.B, a.S}, querySizes[] = {a.B, a.T};
  const int64_t slotStrides[] = {a.slot_positions_stride_b, 1};
  const int64_t queryStrides[] = {a.query_positions_stride_b, 1};
  struct Strided {
    const char *name;
    const void *pointer;
    const int64_t *sizes;
    const int64_t *strides;
    int rank;
    int64_t elementBytes;
  };
  const Strided kv[] = {{"q", a.q, qSizes, a.q_stride, 4, 2},
                        {"k", a.k, kvSizes, a.k_stride, 4, 2},
                        {"v", a.v, kvSizes, a.v_stride, 4, 2}};
  const Strided mask[] = {{"mask", a.mask, maskSizes, a.mask_stride, 3, 1}};
  const Strided byPositions[] = {
      {"slot_positions", a.slot_positions, slotSizes, slotStrides, 2, 8},
      {"query_positions", a.query_positions, querySizes, queryStrides, 2, 8}};
  std::vector<Strided> tensors(std::begin(kv), std::end(kv));
  if (positions)
    tensors.insert(tensors.end(), std::begin(byPositions),
                   std::end(byPositions));
  else
    tensors.insert(tensors.end(), std::begin(mask), std::end(mask));
  std::vector<Extent> extents(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Strided &t = tensors[i];
    for (int d = 0; d < t.rank; ++d)
      if (t.strides[d] < 0)
        return invalidArgument(
            where + t.name + (t.rank == 2 ? "_stride_b" : " stride ") +
            (t.rank == 2 ? "" : std::to_string(d)) + " is negative");
    if (t.rank == 4 && t.strides[3] != 1)
      return invalidArgument(where + t.name +
                             " must be contiguous in D (stride[3] == 1)");
    if (t.rank == 4)
      for (int d = 0; d < 3; ++d)
        if (t.strides[d] % kStrideMultiple)
          return invalidArgument(
              where + t.name + " stride " + std::to_string(d) + " = " +
              std::to_string(t.strides[d]) +
              " is not a multiple of 8 elements (rows must stay 16-byte "
              "aligned)");
    if (!extentOf(t.name, t.pointer, t.sizes, t.strides, t.rank, t.elementBytes,
                  extents[i]))
      return invalidArgument(where + t.name +
                             " strides run past the end of the address "
                             "space");
  }
  // out is contiguous [B, T, H, D] or [B, H, T, D]: the same bytes.
  const int64_t outSizes[] = {a.B, a.H, a.T, a.D};
  int64_t headStride = 0, batchStride = 0;
  const bool stridesFit =
      !__builtin_mul_overflow(a.T, a.D, &headStride) &&
      !__builtin_mul_overflow(a.H, headStride, &batchStride);
  const int64_t outStrides[] = {batchStride, headStride, a.D, 1};
  Extent out;
  if (!stridesFit || !extentOf("out", a.out, outSizes, outStrides, 4, 2, out))
    return invalidArgument(where + "out runs past the end of the address "
                                   "space");
  for (const Extent &e : extents)
    if (overlaps(e, out))
      return invalidArgument(where + "out overlaps " + e.name);
  return success();
}

int GemmArgs::mode() const {
  if (ropeCache)
    return ep == MOSS_EPILOGUE_NONE && layerNorm
               ? config::kGemmModeLayerNormRopeCache
               : -1;
  return config::gemmModeOf(layerNorm, ep);
}

std::string GemmArgs::label() const {
  if (ropeCache)
    return "moss_qkv_rope_cache(batch=" + std::to_string(ropeCache->batch) +
           ", length=" + std::to_string(ropeCache->length) +
           ", d_model=" + std::to_string(k) + ")";
  return std::string(layerNorm ? "moss_layernorm_gemm" : "moss_ffn_gemm") +
         "(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
         ", k=" + std::to_string(k) + ", ep=" + std::to_string(ep) + ")";
}

} // namespace moss::runtime
