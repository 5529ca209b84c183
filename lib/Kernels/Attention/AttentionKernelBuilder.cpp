//===- AttentionKernelBuilder.cpp - attention kernels as gpu.func ---------===//
//
// Flash-attention style kernel for D = 64, one CTA per (b, h, block of query
// rows, key split). Each warp owns 16 query rows (the MMA's m side). The CTA
// has rowWarps x kvGroups warps: warp w takes rows of row warp w % rowWarps
// and the key tiles of group w / rowWarps. A trip loads kvGroups key tiles
// (one per group) at once; group g computes tile trip * kvGroups + g, so short
// chunks (T <= 32) keep four warps busy on one row block, and the groups'
// online-softmax states merge in shared memory at the end.
//
// Copies. Every thread takes part in every tile of a trip with 16-byte
// cp.async (one commit group per trip), except in g4_tma, g2_tma, g1_tma and
// g4_tma_kv, the ninth to twelfth functions, which the runtime launches
// instead of g4, g2 (without copy warps) and g1 for the launches the rule
// marks whenever the driver encodes k and v as tensor maps: there thread 0
// has the TMA engine copy each tile as one box of K and one of V (64 keys x
// 128 bytes, swizzled, keys past S zero-filled), completing on the stage's
// mbarrier, and every thread spins on its phase (g4_tma_kv: K's boxes first
// on an mbarrier of their own, V's on another that a warp waits for only
// before P V).
// One thread issuing a box frees every other thread from address work while
// the tile lands; where a launch has many trips or splits the cp.async
// functions keep their own copies, because holding both paths in one
// function made ptxas schedule the cp.async path worse. 128-byte rows by
// cp.async.bulk are no alternative: the engine serializes small copies.
// Copy warps: a CTA of two or three key groups of one row warp may carry
// warps past its rowWarps x kvGroups compute warps (the launch rule adds them
// in grids of at most one CTA an SM). They take part in every copy and
// barrier, and have no rows, no tile, no Q area and nothing to compute. A
// warp puts its cp.async copies in flight at about 16 bytes a cycle, so four
// warps instead of two halve the time a trip of 32 KiB takes. The one- and
// four-group functions are built without them: there `computes` is the
// constant true (the per-thread tests slow the one-group function's large
// decode grids).
// Two stages double-buffer the trips for 1..2 groups; 3..4 groups use one
// stage (copy after the compute), so dynamic shared memory stays <= 4 slots
// of 16 KiB.
//
// QK^T. Q is A (row), K^T is B (col), k = d. Lane (g = lane/4, t = lane%4)
// holds the standard m16n8k16 fragments: q[row g / g+8][16kk + 2t (+8)] from
// the warp's Q rows, copied once into shared memory and read per tile with
// ldmatrix.x4 (the trips need the 16 registers they would hold), and
// k[key g][16kk + 2t (+8)] from shared memory with ldmatrix.x4 (four 8x8
// blocks: one key group, four d chunks). Accumulator n (keys 8n..8n+7): c0, c1
// = S[row g][8n+2t, +1], c2, c3 = S[row g+8][same keys].
//
// PV. P is A: the S accumulators of key groups 2j and 2j+1, rounded to bf16,
// are exactly the A fragment of k-step j (FA2's register reuse). V is B
// ("col": two keys of one d per register), read transposed from shared memory
// with ldmatrix.x4.trans.
//
// Shared memory. K and V tiles are [64 keys][64 d] bf16, 128 bytes a row; the
// 16-byte chunk c of key row r sits at chunk c ^ swz(r % 8) with
// swz(r) = ((r & 1) << 2) | (r >> 1), a bijection on 0..7 (Q's rows too), in
// the TMA functions at c ^ (r % 8), the TMA engine's 128-byte swizzle (slots
// start at multiples of 1024 bytes): either way each ldmatrix phase (8
// consecutive keys, one logical chunk) hits 32 distinct banks.
//
// Online softmax in FP32 and base 2: c = scale * log2(e), masked s -> -inf;
// per row m = running max of s * c rounded up to an integer (every rescale is
// then an exact power of two), p = ex2.approx.ftz(fma(s, c, -m)), l = running
// sum (lane partials, summed over the quad
// at the end). A key tile that is fully masked for a row changes
// nothing: m stays, alpha = 1 by select (not by exp2(0)), p = exp2(-inf) = 0,
// and P·V adds exact zeros. That makes `skip_empty_tiles` (a CTA-wide OR of
// the mask bits through bar.red.or, one tile ahead) bit-exact, and lets a
// warp skip the compute of a tile its rows all mask (vote.any) and the
// mask selects of a tile its rows see whole (vote.all). Rows without
// an allowed key keep m = -inf, l = 0, acc = 0 and are written as 0 (1/l is
// guarded; exp2 never sees -inf - -inf).
//
// Mask. The bits of the tile two ahead are packed at the end of each trip:
// its L1 lines are prefetched before the compute and its bytes loaded after
// it, so they do not occupy 32 registers across the compute. Bit
// maskBit(n, r, e) of a lane's word is (row g + 8r, key 8n + 2t + e). A full
// tile of a mask contiguous in S loads as words (16 bytes of a row per lane,
// nonzero bytes to bits, exchanged in the quad: quadMaskWords and
// exchangeMaskWords), and so does the tail tile in the one-pass one-group
// function (words clamped to the row's last word, keys past S cleared);
// other tails and strided masks load bytes (the rows g + 8 only where the
// warp has them) and pack them in the same order.
//
// Registers. The one-group function keeps three CTAs of 4 warps an SM (168
// registers, .minnctapersm 3); the grouped ones, launched for small grids
// only, two (.minnctapersm 2: up to 255).
//
// Split-KV. Each G has a one-pass function (every key tile, the output
// written directly; splits is not read) and a split one: split z of
// gridDim.z walks key tiles [z*tps, min(tiles, (z+1)*tps)), and the splits
// of a (b, h, row block) are one thread-block cluster (1, 1, splits), rank
// z: each pushes its FP32 (m, l, acc) with st.async into its receive slot
// in rank 0's shared memory, completing on rank 0's mbarrier, and rank 0
// merges the slots in order z = 0, 1, ... and writes the output
// (docs/kernel-abi.md, ABI version 8 and on). Pushing into rank 0 lets it
// wait for exactly its slots, where reading every rank between two cluster
// barriers made all ranks wait for the slowest, and a global-memory merge
// (a workspace, a fence and a counter per row block) paid a round trip
// through L2. One-pass and split launches are separate functions: one
// function serving both carried the merge's registers into every launch.
//
//===----------------------------------------------------------------------===//

#include "moss/Kernels/AttentionKernelBuilder.h"
#include "Attention/AttentionEmitter.h"
#include "moss/Conversion/MossToGPU/MossToGPU.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace moss {
namespace attention {

gpu::GPUFuncOp
AttentionEmitter::createKernel(gpu::GPUModuleOp module, StringRef name,
                               std::optional<int64_t> knownThreads) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, name, kernelType());
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  if (knownThreads) {
    fn.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(*knownThreads), 1, 1}));
  } else {
    // blockDim.x is 32 * warps (1..4 warps): a bound, not a fixed size.
    fn->setAttr(
        NVVM::NVVMDialect::getMaxntidAttrName(),
        b.getDenseI32ArrayAttr({static_cast<int32_t>(kMaxThreads), 1, 1}));
  }
  // k_map and v_map: 128-byte CUtensorMaps by value (moss-kernel-byval-args).
  SmallVector<int32_t> byval;
  for (auto [i, param] : llvm::enumerate(config::kAttentionParams))
    if (param.kind == config::AttentionParamKind::TensorMap)
      byval.push_back(static_cast<int32_t>(i));
  fn->setAttr(kByvalArgsAttrName, b.getDenseI32ArrayAttr(byval));
  b.setInsertionPointToStart(&fn.getBody().front());
  kernelArgs.assign(fn.getArguments().begin(), fn.getArguments().end());
  return fn;
}

SmallVector<Value>
AttentionEmitter::ifHighRows(ArrayRef<Value> otherwise,
                             llvm::function_ref<SmallVector<Value>()> body) {
  if (!mv.warpHasHighRows)
    return body();
  if (otherwise.empty()) {
    emitIf(mv.warpHasHighRows, [&] { body(); });
    return {};
  }
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(otherwise).getTypes(),
                                mv.warpHasHighRows, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, body());
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, otherwise);
  return SmallVector<Value>(ifOp.getResults());
}

std::array<Value, 2> AttentionEmitter::placeRows(Value lane, Value row0) {
  mv.g = divU(lane, 4);
  mv.t = remU(lane, 4);
  Value tq = arg(kT);
  Value lastRow = sub(tq, constI32(1));
  std::array<Value, 2> rowValid;
  for (int64_t r = 0; r < 2; ++r) {
    mv.row[r] = add(add(row0, mv.g), 8 * r);
    rowValid[r] = lessU(mv.row[r], tq);
    mv.safeRow[r] = toI64(select(rowValid[r], mv.row[r], lastRow));
  }
  mv.laneCol = toI64(mul(mv.t, 2));
  return rowValid;
}

void AttentionEmitter::emitMainKernel(gpu::GPUModuleOp module,
                                      StringRef smemName,
                                      const config::AttentionFunction &f) {
  gpu::GPUFuncOp fn =
      createKernel(module, config::attentionKernelSymbol(f), std::nullopt);
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              b.getI32IntegerAttr(config::attentionMinCtasPerSm(f.kvGroups)));
  tmaCopies = f.tma;
  splitKvBarriers = f.splitKv;
  emitBody(smemName, f.kvGroups, f.split);
  gpu::ReturnOp::create(b, loc);
}

void AttentionEmitter::emitBody(StringRef smemName, int64_t kvGroups,
                                bool split) {
  mv.tid = threadIdx();
  mv.threads = blockDim();
  mv.laneId = remU(mv.tid, 32);
  Value warp = divU(mv.tid, 32);
  Value heads = arg(kH), tq = arg(kT), s = arg(kS);
  Value bh = blockIdx(gpu::Dimension::x);
  mv.b = divU(bh, heads);
  mv.h = remU(bh, heads);
  // A one-pass function walks every key tile whatever gridDim.z says.
  mv.z = split ? blockIdx(gpu::Dimension::z) : constI32(0);
  groupCount = kvGroups;
  mv.groups = constI32(kvGroups);
  // The launch rule's row warps, min(4, ceil(T / 16)); the warps past
  // rowWarps * groups are copy warps.
  if (config::attentionHasCopyWarps(kvGroups)) {
    mv.rowWarps = minU(divU(add(tq, constI32(kRowsPerWarp - 1)), kRowsPerWarp),
                       constI32(config::kAttentionMaxWarps));
    mv.computeThreads = mul(mul(mv.rowWarps, mv.groups), 32);
    mv.computes = lessU(mv.tid, mv.computeThreads);
  } else {
    mv.rowWarps = divU(divU(mv.threads, 32), mv.groups);
    mv.computeThreads = mv.threads;
    mv.computes = constBool(true);
  }
  // With one group every compute warp is a row warp of group 0: constants,
  // so no group bookkeeping stays live through the trips. (A copy warp's
  // rows are past its row block's and never valid.)
  mv.rowWarp = kvGroups == 1 ? warp : remU(warp, mv.rowWarps);
  mv.group = kvGroups == 1 ? constI32(0) : divU(warp, mv.rowWarps);
  const bool twoStages = config::attentionStages(kvGroups) == 2;
  Value row0 =
      add(mul(blockIdx(gpu::Dimension::y), mul(mv.rowWarps, kRowsPerWarp)),
          mul(mv.rowWarp, kRowsPerWarp));
  Value warpHasRows = both(lessU(row0, tq), mv.computes);
  // Short chunks: a warp without rows g + 8 (T <= row0 + 8, every decode
  // step) skips their mask bytes.
  if (kvGroups > 1)
    mv.warpHasHighRows = lessU(add(row0, 8), tq);
  std::array<Value, 2> rowValid = placeRows(mv.laneId, row0);
  for (Value &valid : rowValid)
    valid = both(valid, mv.computes);

  // This split's key tiles [tBegin, tBegin + nTiles), in trips of G.
  Value keyTiles = divU(add(s, kKeys - 1), kKeys);
  Value splits = split ? arg(kSplits) : constI32(1);
  Value perSplit = divU(sub(add(keyTiles, splits), constI32(1)), splits);
  mv.tBegin = mul(mv.z, perSplit);
  Value tEnd = minU(add(mv.tBegin, perSplit), keyTiles);
  mv.nTiles = select(lessU(mv.tBegin, tEnd), sub(tEnd, mv.tBegin), constI32(0));
  mv.warpTiles = select(mv.computes, mv.nTiles, constI32(0));
  Value trips = divU(sub(add(mv.nTiles, mv.groups), constI32(1)), mv.groups);

  // Q, once, into the warp's own 16 x 64 area after the slots (chunks
  // swizzled like K's) by cp.async, so no load latency blocks the K/V
  // copies behind it: lane l copies chunk l % 8 of rows l / 8 + 4i. Rows
  // past T read row T-1 and are never stored.
  Value b64 = toI64(mv.b), h64 = toI64(mv.h);
  mv.kv = LLVM::AddressOfOp::create(b, loc, sharedPtr, smemName);
  Value slotElems =
      constI32(config::attentionStages(kvGroups) * kvGroups * kSlotElems);
  Value qOff = add(slotElems, mul(warp, kRowsPerWarp * kD));
  mv.mergeBase = divU(
      add(slotElems, mul(divU(mv.computeThreads, 32), kRowsPerWarp * kD)), 2);
  if (tmaCopies) {
    // The trips' mbarriers after the key groups' merge entries (a one-pass
    // function has no split area).
    assert(!split && "TMA copies only in one-pass functions");
    mv.tripBarriers = groupEntriesEnd().first;
    // Shared memory only, so before the wait: it overlaps the previous
    // kernel.
    initTripBarriers(config::attentionStages(kvGroups));
  }
  // Programmatic dependent launch (docs/kernel-abi.md, ABI 4): every read of
  // q, k, v and mask and every write follow this wait, so a
  // programmatic launch overlaps only the launch and the index math above
  // with the previous kernel. Without one it does nothing.
  emitIf(notZero(flag(config::kAttentionFlagEarlyTrigger)), [&] {
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  });
  NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Value qHead = elementPtr(
      arg(kQ), bf16, add(mul(b64, arg(kQStrideB)), mul(h64, arg(kQStrideH))));
  if (split)
    armSplitBarrier();
  {
    Value chunk = remU(mv.laneId, kChunksPerRow);
    Value firstRow = divU(mv.laneId, kChunksPerRow);
    Value lastRow = sub(tq, constI32(1));
    // Copy warps have no Q rows (nor room for them).
    emitIf(mv.computes, [&] {
      for (int64_t i = 0; i < kRowsPerWarp * kChunksPerRow / 32; ++i) {
        Value row = add(firstRow, 4 * i); // row % 8 = firstRow % 8 + 4 (i % 2)
        Value tRow = minU(add(row0, row), lastRow);
        Value src = elementPtr(
            qHead, bf16,
            add(mul(toI64(tRow), arg(kQStrideT)), toI64(mul(chunk, 8))));
        Value phys = bitXor(chunk, swizzle(bitAnd(row, 7)));
        Value dst = add(qOff, add(mul(row, kD), mul(phys, 8)));
        NVVM::CpAsyncOp::create(b, loc, elementPtr(mv.kv, bf16, dst), src, 16,
                                NVVM::LoadCacheModifierKind::CG,
                                /*cpSize=*/Value());
      }
    });
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    Value lane = mv.laneId;
    Value qRowInTile = add(remU(lane, 8), mul(bitAnd(shrU(lane, 3), 1), 8));
    Value qChunk = bitXor(shrU(lane, 4), swizzle(remU(lane, 8)));
    mv.qLaneOff = add(add(qOff, mul(qRowInTile, kD)), mul(qChunk, 8));
  }
  mv.kHead = elementPtr(
      arg(kK), bf16, add(mul(b64, arg(kKStrideB)), mul(h64, arg(kKStrideH))));
  mv.vHead = elementPtr(
      arg(kV), bf16, add(mul(b64, arg(kVStrideB)), mul(h64, arg(kVStrideH))));
  Value maskHead = elementPtr(arg(kMask), i8, mul(b64, arg(kMaskStrideB)));
  for (int64_t r = 0; r < 2; ++r)
    mv.maskRow[r] =
        elementPtr(maskHead, i8, mul(mv.safeRow[r], arg(kMaskStrideT)));
  mv.rowBits =
      bitOr(select(rowValid[0], constI32(static_cast<int32_t>(rowMaskBits(0))),
                   constI32(0)),
            select(rowValid[1], constI32(static_cast<int32_t>(rowMaskBits(1))),
                   constI32(0)));
  // Tiles of a mask contiguous in S load as words (quadMaskWords); full
  // ones as one 16-byte vector per lane and row when the base and the row
  // strides are multiples of 16 (a tile starts at a multiple of 64 keys):
  // S = 400 rows, not S = 125 or 250.
  mv.maskUnitStride =
      cmp(arith::CmpIPredicate::eq, arg(kMaskStrideS), constI64(1));
  Value maskBase = LLVM::PtrToIntOp::create(b, loc, i64, arg(kMask));
  Value alignBits =
      bitOr(maskBase, bitOr(arg(kMaskStrideB), arg(kMaskStrideT)));
  mv.maskAligned = isZero(bitAnd(alignBits, 15));
  // The tail tile on the word path too (tailWords), in the one-pass
  // one-group function (long chunks): its covering words stop at each row's
  // last word, which the mask's own bytes (the first element to the last,
  // whatever the strides) must hold whole. Only warps holding the mask's
  // last row, where that row does not end on a word boundary, take the byte
  // path instead. Words pay over bytes where a function walks many trips (the
  // long chunks); in the functions that serve decode steps, a trip or two,
  // the extra address work of the word path outweighs the loads it saves.
  tailWords = kvGroups == 1 && !split;
  if (tailWords) {
    Value one64 = constI64(1), wordMask = constI64(~int64_t{3});
    Value lastKey = sub(toI64(s), one64);
    Value maskEnd = maskBase;
    const std::pair<KernelArg, KernelArg> dims[] = {
        {kB, kMaskStrideB}, {kT, kMaskStrideT}, {kS, kMaskStrideS}};
    for (auto [size, stride] : dims)
      maskEnd = add(maskEnd, mul(sub(toI64(arg(size)), one64), arg(stride)));
    Value safeWord = bitAnd(sub(maskEnd, constI64(3)), wordMask);
    Value inside = constBool(true);
    for (int64_t r = 0; r < 2; ++r) {
      mv.maskLastWord[r] = bitAnd(
          add(LLVM::PtrToIntOp::create(b, loc, i64, mv.maskRow[r]), lastKey),
          wordMask);
      inside = both(
          inside, cmp(arith::CmpIPredicate::ule, mv.maskLastWord[r], safeWord));
    }
    mv.maskTailWords = warpAll(inside);
  }

  mv.scaleLog2 = fmul(arg(kScale), constF32(kLog2e));
  Value noSkip = isZero(flag(config::kAttentionFlagSkipEmptyTiles));

  // ldmatrix: lane l addresses row l % 8 of 8x8 block l / 8. K: block i is
  // d chunk 4c + i of key group n. V (transposed): blocks 1 and 3 are keys
  // 8..15 of the k-step, blocks 2 and 3 the second d group of the pair.
  Value matrix = divU(mv.laneId, 8), matrixRow = remU(mv.laneId, 8);
  // Only the first chunk's offsets stay live: the others differ by an XOR
  // of the chunk bits (computeTile), which frees registers for the trips.
  mv.kLaneOff = add(mul(matrixRow, kD), mul(kvChunk(matrix, matrixRow), 8));
  Value vRow = add(mul(bitAnd(matrix, 1), 8), matrixRow);
  mv.vLaneOff = add(mul(vRow, kD), mul(kvChunk(shrU(matrix, 1), matrixRow), 8));

  // Prologue: trip 0's copies (at once unless tiles may be skipped) and the
  // mask bits of this warp's tiles of trips 0 and 1. The grouped functions
  // (short grids: decode steps, first chunks) issue trip 0's mask loads
  // first, so that their latency hides behind the copies' issue, and pack
  // them after. It costs two-trip walks of two row warps with unaligned
  // mask rows; choosing the order by trip count at run time lost the gains
  // (the loads twice, more code), and so did loading trip 1's mask early
  // too.
  Value zeroI32 = constI32(0), oneI32 = constI32(1);
  Value hasTrip = lessU(zeroI32, trips);
  std::optional<PendingMask> pending0;
  if (kvGroups > 1)
    pending0 = loadMaskBits(myTile(zeroI32), myTileValid(zeroI32));
  emitIf(both(noSkip, hasTrip),
         [&] { issueTrip(zeroI32, zeroI32, validGroups(zeroI32)); });
  Value bits0 = pending0 ? packMaskBits(*pending0)
                         : maskBits(myTile(zeroI32), myTileValid(zeroI32));
  // Trip t's mask bits only where trip t exists: the branch is uniform over
  // the CTA, and a decode step's one trip (the last two of any walk) need
  // not pack the zeros of tiles past its end. Only in the grouped functions
  // (decode steps, short chunks): g1_split spills with the branch under its
  // 168 registers.
  auto tripMaskBits = [&](Value trip) {
    if (kvGroups == 1)
      return maskBits(myTile(trip), myTileValid(trip));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{i32}, lessU(trip, trips),
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, maskBits(myTile(trip), myTileValid(trip)));
    b.setInsertionPointToEnd(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, constI32(0));
    return ifOp.getResult(0);
  };
  Value bits1 = tripMaskBits(oneI32);
  Value active0 = activeGroups(kvGroups, noSkip, zeroI32, bits0,
                               /*tripBarrier=*/false);
  emitIf(both(isZero(noSkip), hasTrip),
         [&] { issueTrip(zeroI32, zeroI32, active0); });

  // The first waits on the trip's mbarrier follow thread 0's
  // initialization.
  if (tmaCopies)
    barrier();

  SmallVector<Value> init = {bits0, bits1, active0};
  Value minusInf = negInf(), zeroF = constF32(0.0);
  init.append({minusInf, minusInf, zeroF, zeroF});
  init.append(kDGroups * 4, zeroF);
  auto loop = scf::ForOp::create(b, loc, zeroI32, trips, oneI32, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(loop.getBody());
    Value k = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value bitsCur = carried[0], bitsNext = carried[1], activeCur = carried[2];
    RowState state = RowState::fromValues(carried.drop_front(3));

    // Two stages alternate (trip k uses stage k % 2); one stage takes every
    // trip.
    Value stage = twoStages ? bitAnd(k, 1) : zeroI32;
    waitTrip(k, stage, twoStages ? 2 : 1);
    // The groups' barriers make every thread's copies of this trip visible
    // and, with two stages, free the other stage (computed last trip).
    Value next = add(k, 1);
    Value hasNext = lessU(next, trips);
    Value activeNext = activeGroups(kvGroups, noSkip, next, bitsNext,
                                    /*tripBarrier=*/true);
    if (twoStages)
      emitIf(hasNext,
             [&] { issueTrip(next, bitXor(stage, oneI32), activeNext); });
    // Trip k+2's mask: lines into L1 now, loaded and packed after the
    // compute (holding its 32 bytes across the compute costs 32 registers).
    Value tripAfter = add(k, 2);
    Value tileAfter = myTile(tripAfter);
    prefetchMask(tileAfter);

    Value mine =
        notZero(bitAnd(arith::ShRUIOp::create(b, loc, activeCur, mv.group), 1));
    // A warp whose rows allow no key of the tile skips its compute: such a
    // tile changes nothing (see the header), so this is exact. The
    // one-group function (long chunks, large grids) does so whatever
    // skip_empty_tiles says; the
    // grouped ones only with it (the extra vote spilled them under the
    // 168-register cap they had then; not re-measured since).
    Value anyKey = warpAny(notZero(bitsCur));
    Value compute = both(both(mine, warpHasRows),
                         kvGroups == 1 ? anyKey : either(noSkip, anyKey));
    // g4_tma_kv: the trip's V mbarrier and phase, spun on before P V and
    // after the tile.
    Value vBarrier, vParity;
    if (splitKvBarriers) {
      vBarrier = tripBarrier(stage, /*v=*/true);
      vParity = tripParity(k, twoStages ? 2 : 1);
    }
    SmallVector<Value> stateValues = state.values();
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(stateValues).getTypes(),
                                  compute, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToEnd(ifOp.thenBlock());
      Value slot = add(mul(stage, mv.groups), mv.group);
      // A tile every row of the warp sees whole (most tiles of a full
      // window) skips the 32 mask selects of each lane (not in the
      // two-group function, whose decode steps it made slower).
      Value whole =
          kvGroups != 2
              ? warpAll(cmp(arith::CmpIPredicate::eq, bitsCur, mv.rowBits))
              : Value();
      pvBarrier = vBarrier;
      pvParity = vParity;
      scf::YieldOp::create(b, loc,
                           computeTile(slot, bitsCur, whole, state).values());
      pvBarrier = pvParity = Value();
      b.setInsertionPointToEnd(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, stateValues);
    }
    // Every thread sees the trip's V bytes land, also where it computed
    // nothing: before the next trip's copies reuse the barrier and before
    // the CTA may exit with boxes in flight to its shared memory.
    if (splitKvBarriers)
      emitSpinOnParity(b, loc, vBarrier, vParity);
    // One stage: the next trip overwrites the slots just computed.
    if (!twoStages)
      emitIf(hasNext, [&] {
        barrier();
        issueTrip(next, zeroI32, activeNext);
      });
    Value bitsAfter = tripMaskBits(tripAfter);
    SmallVector<Value> yielded = {bitsNext, bitsAfter, activeNext};
    llvm::append_range(yielded, ifOp.getResults());
    scf::YieldOp::create(b, loc, yielded);
  }
  // The next kernel may be scheduled once every CTA got past its last key
  // tile (or triggered at the start, kAttentionFlagEarlyTrigger: a CTA's
  // first trigger counts, as when each of its threads executes one).
  // Triggering here rather than at the start keeps a waiting grid from
  // taking the SM slots this grid's later CTAs need (the launch rule's early
  // trigger is for grids that leave slots free). Unconditional, so that
  // no flag stays live across the key loop (g1_split spilled with one).
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
  RowState walked = RowState::fromValues(loop.getResults().drop_front(3));
  RowState final = kvGroups > 1 ? mergeGroups(walked) : walked;
  // Group 0's warps hold the merged rows; the others only take part in the
  // barriers of the store.
  Value writer = both(isZero(mv.group), mv.computes);
  for (int64_t r = 0; r < 2; ++r)
    mv.rowValid[r] = both(rowValid[r], writer);
  if (split)
    mergeAndStoreSplits(final);
  else
    storeResult(final);
}

} // namespace attention

LogicalResult buildAttentionKernels(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module) {
  std::string smem = "__" + std::string(config::kAttentionKernelName) + "_smem";
  SmallVector<std::string> symbols = {smem};
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    config::AttentionFunction f = config::attentionFunctionAt(i);
    symbols.push_back(config::attentionKernelSymbol(f));
  }
  for (const std::string &symbol : symbols)
    if (SymbolTable::lookupSymbolIn(module, symbol))
      return emitError(loc)
             << "cannot build the attention kernels: symbol '" << symbol
             << "' already exists in " << module.getName();
  OpBuilder::InsertionGuard guard(b);
  // Dynamic shared memory (the launch rule's sharedBytes), shared by the
  // functions: stages * kv_groups slots, then each warp's Q rows, the merge
  // area and in the TMA functions the trips' mbarriers. Aligned to 1024 bytes:
  // the TMA's 128-byte swizzle repeats every 1024 bytes from such an address.
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                         /*isConstant=*/false, LLVM::Linkage::External, smem,
                         Attribute(),
                         /*alignment=*/1024, kSharedSpace);
  // In the manifest's order: the one-pass functions, then the split ones.
  for (int64_t i = 0; i < config::kAttentionFunctions; ++i) {
    config::AttentionFunction f = config::attentionFunctionAt(i);
    attention::AttentionEmitter emitter(b, loc);
    emitter.emitMainKernel(module, smem, f);
  }
  return success();
}

} // namespace moss
