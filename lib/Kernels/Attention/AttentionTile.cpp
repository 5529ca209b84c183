//===- AttentionTile.cpp - One key tile: QK^T, online softmax, PV --------===//
//
// The compute of one 64-key tile for a warp's 16 query rows: S = Q K^T on
// mma.sync (Q and K by ldmatrix), the mask bits and the scale applied, the
// online softmax in FP32 and base 2 (the row maximum rounded up to an
// integer, so every rescale is an exact power of two), and O += P V with P
// kept in registers (V by ldmatrix.trans): three pieces, values in and
// out, which computeTile composes with the lane's offsets of the CTA's
// frame.
//
//===----------------------------------------------------------------------===//

#include "Attention/AttentionEmitter.h"
#include "Attention/AttentionPieces.h"

using namespace mlir;

namespace moss {
namespace attention {

RowState AttentionEmitter::computeTile(const Frame &f, Value slot, Value bits,
                                       Value whole, const RowState &in,
                                       Value pvBarrier, Value pvParity) {
  Value kBase = mul(slot, kSlotElems);
  Value vBase = add(kBase, kTileElems);

  // The lane's addresses: chunk (matrix + 4c) ^ swz = (matrix ^ swz) ^ 4c
  // (matrix < 4), so d half c is an XOR of 32 elements; likewise V pair p is
  // an XOR of 16p. The tile bases are multiples of 4096 elements, above
  // every bit the XORs touch.
  Value kLane[2], vLane[kDGroups / 2];
  kLane[0] = add(kBase, f.kLaneOff);
  kLane[1] = bitXor(kLane[0], constI32(4 * 8));
  vLane[0] = add(vBase, f.vLaneOff);
  for (int64_t pair = 1; pair < kDGroups / 2; ++pair)
    vLane[pair] = bitXor(vLane[0], constI32(2 * pair * 8));

  SmallVector<SmallVector<Value>> sAcc = scoresQK(f.kv, f.qLaneOff, kLane);
  SoftmaxStep step = onlineSoftmax(sAcc, bits, whole, f.scaleLog2, in);
  // P V once the V boxes have landed, where they complete on a barrier of
  // their own.
  if (pvBarrier)
    emitSpinOnParity(b, loc, pvBarrier, pvParity);
  step.state.acc = accumulatePV(f.kv, vLane, step.p, step.state.acc);
  return step.state;
}

SmallVector<SmallVector<Value>>
AttentionPieces::scoresQK(Value kv, Value qLaneOff, ArrayRef<Value> kLane) {
  // Q's A fragments from the warp's copy in shared memory (kept there, not
  // in 16 registers, through the trips): k-step kk is chunk 2kk + lane/16,
  // an XOR of 16 kk elements.
  SmallVector<Value> q[4];
  for (int64_t kk = 0; kk < 4; ++kk)
    q[kk] =
        ldmatrix(kv, bitXor(qLaneOff, constI32(16 * kk)), NVVM::MMALayout::row);

  // S = Q K^T: accumulator n holds keys 8n .. 8n+7.
  SmallVector<SmallVector<Value>> sAcc;
  Value zero = constF32(0.0);
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    SmallVector<Value> acc(4, zero);
    for (int64_t c = 0; c < 2; ++c) {
      Value offset = add(kLane[c], 8 * n * kD);
      SmallVector<Value> k = ldmatrix(kv, offset, NVVM::MMALayout::row);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t kk = 2 * c + h;
        Value kFrag[] = {k[2 * h], k[2 * h + 1]};
        acc = mma(q[kk], kFrag, acc);
      }
    }
    sAcc.push_back(acc);
  }
  return sAcc;
}

SoftmaxStep AttentionPieces::onlineSoftmax(ArrayRef<SmallVector<Value>> sAcc,
                                           Value bits, Value whole,
                                           Value scaleLog2,
                                           const RowState &in) {
  Value zero = constF32(0.0);
  // Masked raw scores and the new row maxima. The scale (times log2 e) is
  // applied once to the maximum and folded into p's FMA below: scale > 0, so
  // round(max(s) * c) = max(round(s * c)).
  Value minusInf = negInf();
  // Scores (n-major, 4 per key group), then the lane's two row maxima.
  auto maskScores = [&](bool masked) {
    SmallVector<Value> scores;
    Value rowMax[2] = {minusInf, minusInf};
    for (int64_t n = 0; n < kKeyGroups; ++n) {
      for (int64_t c = 0; c < 4; ++c) {
        Value v = sAcc[n][c];
        if (masked)
          v = select(notZero(bitAnd(shrU(bits, maskBit(n, c / 2, c % 2)), 1)),
                     v, minusInf);
        scores.push_back(v);
        rowMax[c / 2] = fmax(rowMax[c / 2], v);
      }
    }
    scores.append({rowMax[0], rowMax[1]});
    return scores;
  };
  SmallVector<Value> scores;
  if (whole) {
    SmallVector<Type> types(4 * kKeyGroups + 2, f32);
    auto ifOp =
        scf::IfOp::create(b, loc, types, whole, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, maskScores(false));
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, maskScores(true));
    scores.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  } else {
    scores = maskScores(true);
  }
  SmallVector<SmallVector<Value>> x(kKeyGroups);
  for (int64_t n = 0; n < kKeyGroups; ++n)
    x[n].assign(scores.begin() + 4 * n, scores.begin() + 4 * n + 4);
  Value tileMax[2] = {scores[4 * kKeyGroups], scores[4 * kKeyGroups + 1]};
  RowState out;
  Value mUse[2], alpha[2];
  for (int64_t r = 0; r < 2; ++r) {
    // The quad (lanes 4g .. 4g+3) shares rows g and g+8.
    Value rowMax = fmax(tileMax[r], shuffleXor(tileMax[r], 1));
    rowMax = fmax(rowMax, shuffleXor(rowMax, 2));
    // An integer maximum makes every rescale an exact power of two, so a
    // p rounded to bf16 is the same value whichever maximum it was taken
    // against: split-KV and single pass then differ only by FP32 summation
    // order. ceil(-inf) = -inf.
    rowMax = math::CeilOp::create(b, loc, fmul(rowMax, scaleLog2));
    Value mNew = fmax(in.m[r], rowMax);
    Value noKey = fcmp(arith::CmpFPredicate::OEQ, mNew, minusInf);
    mUse[r] = select(noKey, zero, mNew);
    Value same = fcmp(arith::CmpFPredicate::OEQ, mNew, in.m[r]);
    alpha[r] = select(same, constF32(1.0), exp2(fsub(in.m[r], mUse[r])));
    out.m[r] = mNew;
  }
  // p = exp2(s * c - m), one FMA: masked keys give exp2(-inf) = 0 exactly.
  SmallVector<SmallVector<Value>> p(kKeyGroups);
  Value rowSum[2], negM[2];
  for (int64_t r = 0; r < 2; ++r) {
    rowSum[r] = fmul(in.l[r], alpha[r]);
    negM[r] = arith::NegFOp::create(b, loc, mUse[r]);
  }
  for (int64_t n = 0; n < kKeyGroups; ++n) {
    for (int64_t c = 0; c < 4; ++c) {
      Value pv = exp2(fma(x[n][c], scaleLog2, negM[c / 2]));
      p[n].push_back(pv);
      rowSum[c / 2] = fadd(rowSum[c / 2], pv);
    }
  }
  out.l[0] = rowSum[0];
  out.l[1] = rowSum[1];
  for (int64_t i = 0; i < kDGroups * 4; ++i)
    out.acc.push_back(fmul(in.acc[i], alpha[(i % 4) / 2]));
  return {std::move(p), std::move(out)};
}

SmallVector<Value> AttentionPieces::accumulatePV(Value kv,
                                                 ArrayRef<Value> vLane,
                                                 ArrayRef<SmallVector<Value>> p,
                                                 ArrayRef<Value> accIn) {
  SmallVector<Value> out(accIn.begin(), accIn.end());
  // O += P V, k-step j = keys 16j .. 16j+15.
  for (int64_t j = 0; j < kKeys / 16; ++j) {
    Value a[] = {packBf16x2(p[2 * j][0], p[2 * j][1]),
                 packBf16x2(p[2 * j][2], p[2 * j][3]),
                 packBf16x2(p[2 * j + 1][0], p[2 * j + 1][1]),
                 packBf16x2(p[2 * j + 1][2], p[2 * j + 1][3])};
    for (int64_t pair = 0; pair < kDGroups / 2; ++pair) {
      Value offset = add(vLane[pair], 16 * j * kD);
      SmallVector<Value> v = ldmatrix(kv, offset, NVVM::MMALayout::col);
      for (int64_t half = 0; half < 2; ++half) {
        int64_t n = 2 * pair + half;
        Value vFrag[] = {v[2 * half], v[2 * half + 1]};
        SmallVector<Value> acc =
            mma(a, vFrag, ArrayRef<Value>(out).slice(4 * n, 4));
        std::copy(acc.begin(), acc.end(), out.begin() + 4 * n);
      }
    }
  }
  return out;
}

} // namespace attention
} // namespace moss
