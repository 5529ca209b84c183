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
namespace {

Type paramType(OpBuilder &b, config::AttentionParamKind kind) {
  switch (kind) {
  case config::AttentionParamKind::GlobalPointer:
    return LLVM::LLVMPointerType::get(b.getContext(), kGlobalSpace);
  case config::AttentionParamKind::Int64:
    return b.getI64Type();
  case config::AttentionParamKind::Int32:
    return b.getI32Type();
  case config::AttentionParamKind::Float32:
    return b.getF32Type();
  case config::AttentionParamKind::TensorMap:
    // Generic pointers until the pipeline's moss-kernel-byval-args makes
    // them byval .param grid constants.
    return LLVM::LLVMPointerType::get(b.getContext());
  }
  llvm_unreachable("unknown attention parameter kind");
}

/// The kernel function of `f`, its parameters in config::kAttentionParams
/// order, with the builder at the start of its body.
gpu::GPUFuncOp createKernel(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                            const config::AttentionFunction &f) {
  SmallVector<Type> params;
  for (const config::AttentionParamInfo &param : config::kAttentionParams)
    params.push_back(paramType(b, param.kind));
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, config::attentionKernelSymbol(f),
                                   b.getFunctionType(params, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // blockDim.x is 32 * warps (1..4 warps): a bound, not a fixed size.
  fn->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
              b.getDenseI32ArrayAttr(
                  {static_cast<int32_t>(attention::kMaxThreads), 1, 1}));
  // k_map and v_map: 128-byte CUtensorMaps by value (moss-kernel-byval-args).
  SmallVector<int32_t> byval;
  for (auto [i, param] : llvm::enumerate(config::kAttentionParams))
    if (param.kind == config::AttentionParamKind::TensorMap)
      byval.push_back(static_cast<int32_t>(i));
  fn->setAttr(kByvalArgsAttrName, b.getDenseI32ArrayAttr(byval));
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              b.getI32IntegerAttr(config::attentionMinCtasPerSm(f.kvGroups)));
  b.setInsertionPointToStart(&fn.getBody().front());
  return fn;
}

} // namespace

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
    gpu::GPUFuncOp fn = createKernel(b, loc, module, f);
    attention::AttentionEmitter(b, loc, f, fn.getArguments()).emitBody(smem);
    gpu::ReturnOp::create(b, loc);
  }
  return success();
}

} // namespace moss
