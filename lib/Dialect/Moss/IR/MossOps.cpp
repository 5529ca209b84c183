//===- MossOps.cpp - moss operations and their verifiers ------------------===//
#include "moss/Dialect/Moss/IR/MossOps.h"
#include "moss/Config/GemmMode.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace moss;

namespace {
/// Checks that `value` is a ranked tensor of `rank` with elements `elemType`;
/// the message names the operand, the expected form and what was found.
FailureOr<RankedTensorType> expectTensor(Operation *op, StringRef name,
                                         Type type, int64_t rank, Type elemType,
                                         StringRef shapeDoc) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != rank ||
      tensor.getElementType() != elemType) {
    op->emitOpError() << "operand '" << name << "' must be a rank-" << rank
                      << " tensor " << shapeDoc << " of " << elemType
                      << ", found " << type;
    return failure();
  }
  return tensor;
}

/// Two extents agree when either is dynamic or they are equal.
bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string dimText(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

std::string shapeText(ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + dimText(d);
  return s + "]";
}

/// Emits "operand 'name' must have <what> = <expected>, found <found>".
LogicalResult dimMismatch(Operation *op, StringRef name, StringRef what,
                          int64_t expected, int64_t found) {
  return op->emitOpError() << "operand '" << name << "' must have " << what
                           << " = " << dimText(expected) << ", found "
                           << dimText(found);
}

/// The LayerNorm's gamma and beta of moss.linear and moss.qkv_rope_cache:
/// bf16 vectors of length `k` (named `kName`, taken from `kSource`).
LogicalResult verifyGammaBeta(Operation *op, Value gamma, Value beta, int64_t k,
                              StringRef kName, StringRef kSource) {
  Type bf16 = BFloat16Type::get(op->getContext());
  const std::string shapeDoc = ("[" + kName + "]").str();
  const std::string what =
      ("length " + kName + " (from '" + kSource + "')").str();
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"gamma", gamma}, {"beta", beta}}) {
    auto vec = expectTensor(op, name, value.getType(), 1, bf16, shapeDoc);
    if (failed(vec))
      return failure();
    if (!compatible(vec->getDimSize(0), k))
      return dimMismatch(op, name, what, k, vec->getDimSize(0));
  }
  return success();
}

/// The LayerNorm's eps: finite and >= 0.
LogicalResult verifyEps(Operation *op, FloatAttr epsAttr) {
  float eps = epsAttr.getValueAsDouble();
  if (!std::isfinite(eps) || eps < 0)
    return op->emitOpError()
           << "attribute 'eps' must be finite and >= 0, found " << eps;
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

int LinearOp::getMode() {
  return config::gemmModeOf(getGamma() != nullptr,
                            static_cast<int>(getEpilogue()));
}

LogicalResult LinearOp::verifyLayerNorm(int64_t k) {
  Operation *op = getOperation();
  if (!getGamma() || !getBeta()) {
    if (getGamma() || getBeta())
      return emitOpError("operands 'gamma' and 'beta' come together");
    if (getEpsAttr())
      return emitOpError("attribute 'eps' is only allowed with "
                         "layernorm(gamma, beta)");
    return success();
  }
  if (failed(verifyGammaBeta(op, getGamma(), getBeta(), k, "K", "x")))
    return failure();
  if (!getEpsAttr())
    return emitOpError("layernorm(gamma, beta) requires attribute 'eps'");
  if (failed(verifyEps(op, getEpsAttr())))
    return failure();
  if (getMode() < 0)
    return emitOpError() << "layernorm(gamma, beta) with epilogue '"
                         << stringifyEpilogue(getEpilogue())
                         << "' is no whitelist mode (expected "
                         << config::gemmModeList() << ")";
  return success();
}

LogicalResult LinearOp::verify() {
  Operation *op = getOperation();
  Type bf16 = BFloat16Type::get(getContext());
  auto x = expectTensor(op, "x", getX().getType(), 2, bf16, "[M, K]");
  if (failed(x))
    return failure();
  auto w = expectTensor(op, "w", getW().getType(), 2, bf16, "[N, K]");
  if (failed(w))
    return failure();
  // The weight's shape is the kernel's: a generated kernel is specialised on
  // N and K, and every lowering sizes the output [M, N] by it.
  if (!w->hasStaticShape())
    return emitOpError() << "operand 'w' must have a static shape [N, K], "
                            "found "
                         << shapeText(w->getShape());
  int64_t m = x->getDimSize(0), k = x->getDimSize(1);
  int64_t n = w->getDimSize(0);
  if (!compatible(w->getDimSize(1), k))
    return dimMismatch(op, "w", "K (from 'x')", k, w->getDimSize(1));
  if (failed(verifyLayerNorm(w->getDimSize(1)))) // w's shape is static
    return failure();

  bool wantsScaleResidual = getEpilogue() == Epilogue::layerscale_residual;
  if (wantsScaleResidual && !getScale())
    return emitOpError("epilogue 'layerscale_residual' requires operand "
                       "'scale' [N]");
  if (wantsScaleResidual && !getResidual())
    return emitOpError("epilogue 'layerscale_residual' requires operand "
                       "'residual' [M, N]");
  if (!wantsScaleResidual && (getScale() || getResidual() || getRowLive()))
    return emitOpError() << "operand '"
                         << (getScale()      ? "scale"
                             : getResidual() ? "residual"
                                             : "row_live")
                         << "' is only allowed with epilogue "
                            "'layerscale_residual', found epilogue '"
                         << stringifyEpilogue(getEpilogue()) << "'";

  if (getScale()) {
    auto scale =
        expectTensor(op, "scale", getScale().getType(), 1, bf16, "[N]");
    if (failed(scale))
      return failure();
    if (!compatible(scale->getDimSize(0), n))
      return dimMismatch(op, "scale", "length N (from 'w')", n,
                         scale->getDimSize(0));
  }
  if (getResidual()) {
    auto residual = expectTensor(op, "residual", getResidual().getType(), 2,
                                 bf16, "[M, N]");
    if (failed(residual))
      return failure();
    if (!compatible(residual->getDimSize(0), m) ||
        !compatible(residual->getDimSize(1), n))
      return emitOpError() << "operand 'residual' must have shape [M, N] = "
                           << shapeText({m, n}) << ", found "
                           << shapeText(residual->getShape());
  }
  if (getRowLive()) {
    auto live = expectTensor(op, "row_live", getRowLive().getType(), 1,
                             IntegerType::get(getContext(), 1), "[M]");
    if (failed(live))
      return failure();
    if (!compatible(live->getDimSize(0), m))
      return dimMismatch(op, "row_live", "length M (from 'x')", m,
                         live->getDimSize(0));
  }

  // The result's type is the operands' [M, N], exactly: every lowering
  // allocates the output from x's M and w's N.
  auto result = dyn_cast<RankedTensorType>(getResult().getType());
  if (!result || result.getRank() != 2 || result.getElementType() != bf16 ||
      result.getDimSize(0) != m || result.getDimSize(1) != n)
    return emitOpError() << "result must be a rank-2 tensor [M, N] = "
                         << shapeText({m, n}) << " of bf16, found "
                         << getResult().getType();

  if (getTile() && getVendorFallback())
    return emitOpError("has both a 'tile' and 'vendor_fallback': a GEMM runs "
                       "either a generated kernel or the vendor fallback");
  return success();
}

//===----------------------------------------------------------------------===//
// StreamingAttentionOp
//===----------------------------------------------------------------------===//

float StreamingAttentionOp::getSoftmaxScale() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  int64_t d = cast<RankedTensorType>(getQ().getType()).getDimSize(3);
  return 1.0f / std::sqrt(static_cast<float>(d));
}

LogicalResult StreamingAttentionOp::verify() {
  Operation *op = getOperation();
  Type bf16 = BFloat16Type::get(getContext());
  auto q = expectTensor(op, "q", getQ().getType(), 4, bf16, "[B, H, T, D]");
  if (failed(q))
    return failure();
  auto k = expectTensor(op, "k", getK().getType(), 4, bf16, "[B, H, S, D]");
  if (failed(k))
    return failure();
  auto v = expectTensor(op, "v", getV().getType(), 4, bf16, "[B, H, S, D]");
  if (failed(v))
    return failure();
  const bool byPositions = getSlotPositions() || getQueryPositions();
  if (byPositions == bool(getMask()))
    return emitOpError() << (byPositions ? "takes a mask or positions(...), "
                                           "not both"
                                         : "needs a mask or positions(...)");
  if (byPositions && !(getSlotPositions() && getQueryPositions()))
    return emitOpError() << "positions(...) takes slot_positions and "
                            "query_positions";

  int64_t b = q->getDimSize(0), h = q->getDimSize(1), t = q->getDimSize(2),
          d = q->getDimSize(3), s = k->getDimSize(2);
  if (ShapedType::isDynamic(d) || d % 16 != 0 || d <= 0 || d > 256)
    return emitOpError() << "head dim D of 'q' must be a static multiple of "
                            "16 in [16, 256], found "
                         << dimText(d);
  for (auto [name, tensor] :
       {std::pair<StringRef, RankedTensorType>{"k", *k}, {"v", *v}}) {
    if (!compatible(tensor.getDimSize(0), b))
      return dimMismatch(op, name, "batch B (from 'q')", b,
                         tensor.getDimSize(0));
    if (!compatible(tensor.getDimSize(1), h))
      return dimMismatch(op, name, "heads H (from 'q')", h,
                         tensor.getDimSize(1));
    if (!compatible(tensor.getDimSize(3), d))
      return dimMismatch(op, name, "head dim D (from 'q')", d,
                         tensor.getDimSize(3));
  }
  if (!compatible(v->getDimSize(2), s))
    return dimMismatch(op, "v", "keys S (from 'k')", s, v->getDimSize(2));
  if (failed(byPositions ? verifyPositions(b, t, s) : verifyMask(b, t, s)))
    return failure();
  if (getResult().getType() != getQ().getType())
    return emitOpError() << "result must have the type of 'q' (the logical "
                            "[B, H, T, D] tensor) "
                         << getQ().getType() << ", found "
                         << getResult().getType();
  if (auto scale = getScaleAttr();
      scale && !(scale.getValueAsDouble() > 0.0 &&
                 std::isfinite(scale.getValueAsDouble())))
    return emitOpError() << "scale must be a positive finite number, found "
                         << scale.getValueAsDouble();
  return success();
}

LogicalResult StreamingAttentionOp::verifyMask(int64_t b, int64_t t,
                                               int64_t s) {
  auto mask = expectTensor(getOperation(), "mask", getMask().getType(), 4,
                           IntegerType::get(getContext(), 1), "[B, 1, T, S]");
  if (failed(mask))
    return failure();
  SmallVector<int64_t> expected = {b, 1, t, s};
  for (auto [want, found] : llvm::zip_equal(expected, mask->getShape()))
    if (!compatible(want, found))
      return emitOpError() << "operand 'mask' must have shape [B, 1, T, S] = "
                           << shapeText(expected) << ", found "
                           << shapeText(mask->getShape());
  return success();
}

LogicalResult StreamingAttentionOp::verifyPositions(int64_t b, int64_t t,
                                                    int64_t s) {
  Type i64 = IntegerType::get(getContext(), 64);
  struct Positions {
    StringRef name;
    Value value;
    int64_t length;
    StringRef shape;
  };
  for (const Positions &p :
       {Positions{"slot_positions", getSlotPositions(), s, "[B, S]"},
        Positions{"query_positions", getQueryPositions(), t, "[B, T]"}}) {
    auto tensor = expectTensor(getOperation(), p.name, p.value.getType(), 2,
                               i64, p.shape);
    if (failed(tensor))
      return failure();
    SmallVector<int64_t> expected = {b, p.length};
    for (auto [want, found] : llvm::zip_equal(expected, tensor->getShape()))
      if (!compatible(want, found))
        return emitOpError() << "operand '" << p.name << "' must have shape "
                             << p.shape << " = " << shapeText(expected)
                             << ", found " << shapeText(tensor->getShape());
  }
  return success();
}

#define GET_OP_CLASSES
#include "moss/Dialect/Moss/IR/MossOps.cpp.inc"

//===----------------------------------------------------------------------===//
// QkvRopeCacheOp
//===----------------------------------------------------------------------===//

int QkvRopeCacheOp::getMode() { return config::kGemmModeLayerNormRopeCache; }

LogicalResult QkvRopeCacheOp::verify() {
  Operation *op = getOperation();
  MLIRContext *ctx = getContext();
  Type bf16 = BFloat16Type::get(ctx), i64 = IntegerType::get(ctx, 64),
       i1 = IntegerType::get(ctx, 1);
  auto x = expectTensor(op, "x", getX().getType(), 3, bf16, "[B, T, d]");
  auto w = expectTensor(op, "w", getW().getType(), 2, bf16, "[3d, d]");
  if (failed(x) || failed(w))
    return failure();
  // The kernel is specialised on d: w's shape is static, as moss.linear's.
  if (!w->hasStaticShape())
    return emitOpError() << "operand 'w' must have a static shape [3d, d], "
                            "found "
                         << shapeText(w->getShape());
  const int64_t d = w->getDimSize(1);
  const int64_t headDim = config::kRopeHeadDim;
  if (d % headDim != 0 || w->getDimSize(0) != 3 * d)
    return emitOpError() << "operand 'w' must be [3d, d] with d a multiple of "
                         << headDim << " (heads of " << headDim << "), found "
                         << shapeText(w->getShape());
  const int64_t b = x->getDimSize(0), t = x->getDimSize(1), heads = d / headDim;
  if (!compatible(x->getDimSize(2), d))
    return dimMismatch(op, "x", "d (from 'w')", d, x->getDimSize(2));
  if (failed(verifyGammaBeta(op, getGamma(), getBeta(), d, "d", "w")) ||
      failed(verifyEps(op, getEpsAttr())))
    return failure();
  // [B, T] tables of the chunk's frames.
  for (auto [name, value, elem] :
       {std::tuple<StringRef, Value, Type>{"positions", getPositions(), i64},
        {"live", getLive(), i1}}) {
    auto table = expectTensor(op, name, value.getType(), 2, elem, "[B, T]");
    if (failed(table))
      return failure();
    if (!compatible(table->getDimSize(0), b) ||
        !compatible(table->getDimSize(1), t))
      return emitOpError() << "operand '" << name
                           << "' must be [B, T] = " << shapeText({b, t})
                           << " (from 'x'), found "
                           << shapeText(table->getShape());
  }
  auto k = expectTensor(op, "k_cache", getKCache().getType(), 4, bf16,
                        "[B, H, S, 64]");
  if (failed(k))
    return failure();
  const int64_t s = k->getDimSize(2);
  if (!compatible(k->getDimSize(0), b) ||
      !compatible(k->getDimSize(1), heads) || k->getDimSize(3) != headDim)
    return emitOpError() << "operand 'k_cache' must be [B, H, S, 64] = "
                         << shapeText({b, heads, s, headDim})
                         << " (B from 'x', H = d / 64), found "
                         << shapeText(k->getShape());
  if (getVCache().getType() != getKCache().getType())
    return emitOpError() << "operand 'v_cache' must have k_cache's type "
                         << getKCache().getType() << ", found "
                         << getVCache().getType();
  auto slots = expectTensor(op, "slot_positions", getSlotPositions().getType(),
                            2, i64, "[B, S]");
  if (failed(slots))
    return failure();
  if (!compatible(slots->getDimSize(0), b) ||
      !compatible(slots->getDimSize(1), s))
    return emitOpError() << "operand 'slot_positions' must be [B, S] = "
                         << shapeText({b, s}) << " (from 'k_cache'), found "
                         << shapeText(slots->getShape());
  if (!ShapedType::isDynamic(t) && !ShapedType::isDynamic(s) && t > s)
    return emitOpError() << "a chunk of T = " << t
                         << " frames does not fit a ring of S = " << s
                         << " slots";
  auto q = cast<RankedTensorType>(getQ().getType());
  auto expectedQ = RankedTensorType::get({b, t, heads, headDim}, bf16);
  if (q != expectedQ)
    return emitOpError() << "result 'q' must be " << expectedQ << ", found "
                         << q;
  return success();
}
