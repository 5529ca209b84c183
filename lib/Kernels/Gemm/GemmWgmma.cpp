//===- GemmWgmma.cpp - Warpgroup MMA stages of the GEMM kernels ----------===//
//
// Warpgroup MMAs (docs/kernel-abi.md). bm = 64: wgmma m64nNk16 with x as A
// and W as B (N = bn). bn >= 64, bm <= 32: the swap of GemmMma.cpp, each 64
// W rows as A of one warpgroup and x as B (N = bm8); warp w of warpgroup n
// then holds the accumulator of an m16n8 warp over W rows 64n + 16w.. (per
// n8 tile j as GemmMma.cpp's c0..c3), so the partial tiles are stored as the
// mma.sync kernels store theirs. The swap fills wgmma's 64-row M side with
// weight rows, where the few x rows of a decode step would leave it mostly
// padding.
//
// Both operands are K-major in shared memory, in the 128-byte swizzled
// layout that swizzledOffset describes.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

using namespace mlir;

namespace moss::gemm {

Value GemmEmitter::swizzledOffset(Value row, Value k, int64_t rows) {
  Value r8 = remU(row, 8);
  Value chunk = arith::XOrIOp::create(b, loc, remU(divU(k, 8), 8), r8);
  Value atom = add(mul(divU(k, 64), rows / 8), divU(row, 8));
  return add(mul(atom, 512), add(mul(r8, 64), mul(chunk, 8)));
}

Value GemmEmitter::matrixDescriptor(Value matrix) {
  Value address = LLVM::PtrToIntOp::create(b, loc, i64, matrix);
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, address, constI64(4)),
      constI64(0x3FFF));
  // Leading offset (bits 16-29) unused by swizzled K-major layouts (1 by
  // convention); stride offset (bits 32-45) = 1024 bytes between 8-row
  // atoms; layout type (bits 62-63) 1 = 128-byte swizzle.
  const int64_t fields =
      (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constI64(fields));
}

SmallVector<Value> GemmEmitter::emitWgmmaStages(Value slab, Value wgN,
                                                Value wgK) {
  const config::GemmLaunch &launch = shape.launch;
  const int64_t groups = launch.warpsK, perStage = shape.chunksPerStage;
  const bool weightsA = launch.wgmmaWeightsA;
  const int64_t n = weightsA ? launch.bm8 : spec.bn, accCount = n / 2;
  Value xDesc =
      matrixDescriptor(elementPtr(slab, bf16, spec.bn * launch.kPerCta));
  // W as A: warpgroup wgN's 64 rows are the 8 atoms from atom 8 wgN of
  // every 64-k block (swizzledOffset's order).
  Value wDesc = matrixDescriptor(launch.wgmmaGroupsN > 1
                                     ? elementPtr(slab, bf16, mul(wgN, 64 * 64))
                                     : slab);
  // k16 step s of a matrix of `rows` rows: 32 bytes into 64-k block s / 4
  // (blocks are rows / 8 atoms of 1024 bytes); the hardware applies the
  // swizzle to the advanced start address.
  auto atStep = [&](Value desc, Value step, int64_t rows) {
    const int64_t blockBytes = rows / 8 * 1024;
    Value s64 = toI64(step);
    Value bytes = add(mul(divU(s64, 4), blockBytes), mul(remU(s64, 4), 32));
    return add(desc, arith::ShRUIOp::create(b, loc, bytes, constI64(4)));
  };

  MLIRContext *ctx = b.getContext();
  Type accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(accCount, f32));
  Value zero = LLVM::PoisonOp::create(b, loc, accType);
  for (int64_t i = 0; i < accCount; ++i)
    zero = LLVM::InsertValueOp::create(b, loc, zero, constF32(0.0), i);
  // One accumulator: the MMAs of a stage are issued back to back and waited
  // for once, so independent chains hide no latency and only add registers
  // and a final sum.
  Value acc = zero;
  auto shapeAttr = NVVM::MMAShapeAttr::get(ctx, 64, n, 16);

  for (int64_t stage = 0; stage < launch.stages; ++stage) {
    // Stage `stage`'s copies have landed for this thread; the proxy fence
    // makes them visible to the tensor core's (async proxy) reads, bar.sync
    // to every warpgroup.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, launch.stages - 1 - stage);
    emitAsyncProxyFence(b, loc);
    gpu::BarrierOp::create(b, loc);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    // Warpgroup set wgK takes chunks begin + wgK, begin + wgK + groups, ...
    for (int64_t i = 0; i < perStage / groups; ++i) {
      Value chunk = add(wgK, stage * perStage + i * groups);
      for (int64_t h = 0; h < 2; ++h) {
        Value step = add(mul(chunk, 2), h);
        Value wStep = atStep(wDesc, step, spec.bn);
        Value xStep = atStep(xDesc, step, launch.bm8);
        acc = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, accType, acc, weightsA ? wStep : xStep,
            weightsA ? xStep : wStep, shapeAttr, NVVM::WGMMATypes::bf16,
            NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32,
            NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
            NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
            /*satfinite=*/nullptr);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> values;
  for (int64_t i = 0; i < accCount; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  return values;
}

void GemmEmitter::storeWgmmaPartials(Value tile, ArrayRef<Value> acc, Value wg,
                                     Value warpInGroup, Value g, Value t) {
  const int64_t stride = shape.launch.partialRowFloats;
  // Tile layout [warpgroup][64][bn + pad], (m, n) as in the output.
  Value row = add(mul(wg, shape.launch.bm8), add(mul(warpInGroup, 16), g));
  Value base = add(mul(row, stride), mul(t, 2));
  for (int64_t j = 0; j < spec.bn / 8; ++j) {
    for (int64_t i = 0; i < 4; ++i) {
      int64_t offset = (i >> 1) * 8 * stride + 8 * j + (i & 1);
      LLVM::StoreOp::create(b, loc, acc[4 * j + i],
                            elementPtr(tile, f32, add(base, offset)),
                            /*alignment=*/4);
    }
  }
}

} // namespace moss::gemm
