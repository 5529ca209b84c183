//===- GemmSplitK.cpp - The split-K hand-over between cluster ranks ------===//
//
// Split-K: the `split` CTAs of an output tile are the ranks of one cluster.
// Each rank sums its warps' partial tiles item by item and pushes the sum
// of an item to the rank that finishes it (st.async into that rank's
// receive slot for this rank, completing bytes on its mbarrier), or stores
// it into its own slot; many ranks with large shares go through a send
// area and one cp.async.bulk per rank instead. A rank waits for the bytes
// the others push, then adds the slots in the fixed order z = 0..split-1
// (deterministic, as the ABI requires). No cluster barrier after the MMAs:
// nobody reads another rank's memory, and a rank's slots stay alive until
// it has received them.
//
//===----------------------------------------------------------------------===//
#include "Gemm/GemmEmitter.h"

#include <algorithm>

using namespace mlir;

namespace moss::gemm {

void GemmEmitter::armReceiveBarrier(Value tid, Value slice, Value barrier) {
  const int64_t share = shape.launch.shareItems;
  // Rank r finishes items [r * share, min((r + 1) * share, items)); each of
  // the other split - 1 ranks pushes 32 bytes an item.
  Value first = mul(slice, share);
  Value count = arith::MaxSIOp::create(
      b, loc, constI32(0),
      arith::MinSIOp::create(b, loc, constI32(share),
                             sub(constI32(shape.epilogueItems), first)));
  Value bytes = mul(count, (spec.split - 1) * 32);
  armReceiveAndArrive(equal(tid, 0), barrier, bytes);
}

void GemmEmitter::pushAsync(Value remote, Value value, Value remoteBarrier) {
  emitStAsyncV4F32(
      b, loc, remote,
      {lane(value, 0), lane(value, 1), lane(value, 2), lane(value, 3)},
      remoteBarrier);
}

void GemmEmitter::handOverSplitK(Value smem, Value tid, Value slice, Value recv,
                                 Value recvBarrier) {
  // A LayerNorm prologue has completed armReceiveBarrier's arrive already.
  if (!shape.launch.layerNorm)
    NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
  const config::GemmLaunch &launch = shape.launch;
  const int64_t share = launch.shareItems;
  Value send = launch.bulkHandover
                   ? elementPtr(smem, b.getI8Type(), launch.sendOffset)
                   : Value();
  forEachPiece(tid, shape.epilogueItems, [&](Value item) {
    Value mLocal = divU(item, shape.colGroups);
    Value nLocal = mul(remU(item, shape.colGroups), 8);
    auto [lo, hi] = sumPartials(smem, mLocal, nLocal);
    Value owner = divU(item, share);
    Value offset = mul(add(mul(slice, share), sub(item, mul(owner, share))), 8);
    auto ifOp =
        scf::IfOp::create(b, loc, equal(owner, slice), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value ptr = elementPtr(recv, f32, offset);
    store16(lo, ptr);
    store16(hi, elementPtr(ptr, f32, 4));
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    if (send) { // item i at 32 i: rank z's share is one contiguous run
      Value sendPtr = elementPtr(send, f32, mul(item, 8));
      store16(lo, sendPtr);
      store16(hi, elementPtr(sendPtr, f32, 4));
      return;
    }
    Value remote = NVVM::MapaOp::create(b, loc, clusterPtr,
                                        elementPtr(recv, f32, offset), owner);
    Value remoteBarrier =
        NVVM::MapaOp::create(b, loc, clusterPtr, recvBarrier, owner);
    pushAsync(remote, lo, remoteBarrier);
    pushAsync(elementPtr(remote, f32, 4), hi, remoteBarrier);
  });
  if (send) // the bulk copies read the send area through the async proxy
    emitAsyncProxyFence(b, loc);
  gpu::BarrierOp::create(b, loc); // this rank's own slot (and the send area)
  if (send)
    emitBulkHandover(tid, slice, send, recv, recvBarrier);
  emitSpinOnParity(b, loc, recvBarrier);
  // A bulk copy reads this CTA's send area after the issuing thread moves
  // on; only its destination learns when it is done. So a rank that has
  // received says so, and no rank exits (freeing its send area) before all
  // have.
  if (send)
    NVVM::ClusterArriveRelaxedOp::create(b, loc, /*aligned=*/UnitAttr());
}

std::pair<Value, Value> GemmEmitter::sumReceived(Value recv, Value slice,
                                                 Value mLocal, Value nLocal) {
  const int64_t share = shape.launch.shareItems;
  Value item = add(mul(mLocal, shape.colGroups), divU(nLocal, 8));
  Value index = sub(item, mul(slice, share));
  return sumGroups(spec.split, [&](int64_t z) {
    return elementPtr(recv, f32, mul(add(index, z * share), 8));
  });
}

void GemmEmitter::emitBulkHandover(Value tid, Value slice, Value send,
                                   Value recv, Value recvBarrier) {
  const int64_t share = shape.launch.shareItems;
  // Thread 0 copies rank z's run of the send area into rank z's slot for
  // this rank; the last ranks may finish fewer items, or none.
  emitIf(equal(tid, 0), [&] {
    for (int64_t z = 0; z < spec.split; ++z) {
      const int64_t count = std::min(share, shape.epilogueItems - z * share);
      if (count <= 0)
        continue;
      emitIf(differ(slice, z), [&] {
        Value slot = elementPtr(recv, f32, mul(mul(slice, share), 8));
        Value dst = NVVM::MapaOp::create(b, loc, clusterPtr, slot, constI32(z));
        Value barrier =
            NVVM::MapaOp::create(b, loc, clusterPtr, recvBarrier, constI32(z));
        Value bytes = constI32(count * 32);
        Value run = elementPtr(send, f32, constI32(z * share * 8));
        emitBulkCopyToCluster(b, loc, dst, run, bytes, barrier);
      });
    }
  });
}

} // namespace moss::gemm
