//===- AttentionLaunch.h - Launch rule of the attention kernels -*- C++ -*-===//
//
// The one place that turns (B, H, T, S) into the launch of the generated
// streaming-attention kernels (docs/kernel-abi.md, "Attention kernel ABI"):
// warps per CTA, grid and split-KV count (the cluster size). The runtime
// calls it (the compiler's host code calls the runtime), the GPU tests link
// it. No LLVM, no JSON: a stand-alone driver can compile this file directly.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_ATTENTIONLAUNCH_H
#define MOSS_CONFIG_ATTENTIONLAUNCH_H

#include "moss/Config/AttentionParams.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moss::config {

/// Kernel (file-name stem and record name). With splits > 1 the splits of
/// each (b, h, row block) form one thread-block cluster and merge through
/// distributed shared memory.
constexpr const char *kAttentionKernelName = "streaming_attention_d64";

/// Version of the 27-parameter ABI; the manifest's params.abi_version.
/// 2: split-KV merged in the kernel (workspace counters), no combine kernel.
/// 3: one function per key-group count G (attentionKernelSymbol), the
/// groups merged in shared memory, dynamic shared memory sized by the launch
/// rule. 4: griddepcontrol (wait before the first access to global memory,
/// launch_dependents after the last key tile), so the runtime may launch it
/// as a programmatic dependent (MOSS_ATTENTION_PDL=1). 5: the splits of a
/// (b, h, row block) are one cluster (1, 1, splits) and rank 0 merges them
/// from the ranks' shared memory: no workspace parameter, no counters.
/// 6: a one-pass and a split function per G (attentionKernelSymbol).
/// 7: the key groups' and the splits' hand-overs in a merge area after the
/// Q rows (attentionMergeBytes), not in the K/V slots. 8: the splits push
/// their hand-overs into rank 0's receive slots with st.async, completing on
/// an mbarrier after the slots; no cluster barrier after the key tiles.
/// 9: copy warps (blockDim.x = 32 * (rowWarps * G + copyWarps), the kernel
/// takes rowWarps from T), and the key groups' hand-overs as 16-byte vectors
/// at a stride of 36 floats a thread. 10: a ninth function, g4_tma, copies K
/// and V by the TMA engine from k_map and v_map (CUtensorMaps by value,
/// 128-byte swizzle), its trip's mbarrier after the merge area; shared
/// memory aligned to 1024 bytes. 11: parameter 23 is `flags`
/// (kAttentionFlag*) instead of skip_empty_tiles: bit 0 skips empty tiles,
/// bit 1 triggers the dependents at the start instead of after the last key
/// tile. 12: a tenth function, g2_tma, copies K and V of one-trip
/// two-group launches by the TMA engine (no copy warps). 13: an eleventh,
/// g1_tma, the same for one group (long walks of long chunks). 14: a
/// twelfth, g4_tma_kv, g4_tma with K and V on mbarriers of their own.
constexpr int64_t kAttentionAbiVersion = 15;
/// Bits of the kernel's `flags` parameter.
constexpr int64_t kAttentionFlagSkipEmptyTiles = 1;
constexpr int64_t kAttentionFlagEarlyTrigger = 2;
constexpr int64_t kAttentionHeadDim = 64;     ///< D, fixed.
constexpr int64_t kAttentionKeysPerTile = 64; ///< keys per K/V tile.
constexpr int64_t kAttentionRowsPerWarp = 16; ///< query rows per warp (MMA m).
constexpr int64_t kAttentionMaxWarps = 4;     ///< main kernel: 32..128 thr.
/// Key groups: warps of one row block that walk different key tiles of the
/// same trip and merge in shared memory at the end (short chunks).
constexpr int64_t kAttentionMaxKvGroups = 4;
/// Functions of the kernel: for each G a one-pass function (splits == 1)
/// and a split one (splits > 1, launched as clusters). Apart, the one-pass
/// functions carry no merge code and its registers.
/// ABI 10 adds a ninth: the one-pass four-group function copying K and V by
/// the TMA engine (attentionHasTmaCopies), apart so that the cp.async
/// functions keep their code (with both paths in one function, its two-trip
/// launches got slower).
/// ABI 12 adds a tenth, g2_tma, the same for two groups, and ABI 13 an
/// eleventh, g1_tma, for one. ABI 14 adds a twelfth, g4_tma_kv: g4_tma with
/// K and V on mbarriers of their own (AttentionLaunch::splitKvBarriers),
/// apart so that g4_tma keeps its code (with both behind a flag bit in one
/// function its small grids got slower).
constexpr int64_t kAttentionMaskFunctions = 2 * kAttentionMaxKvGroups + 4;
/// ABI 15 adds the same twelve again, reading the mask from positions
/// (slot_positions, query_positions) instead of a bool mask: separate
/// functions, so that the mask functions keep their code and registers.
constexpr int64_t kAttentionFunctions = 2 * kAttentionMaskFunctions;
/// One slot of dynamic shared memory holds a key tile's K then its V.
constexpr int64_t kAttentionSlotBytes = 2 * 64 * 64 * 2;
/// Slots of a launch: groups * stages <= 4 (stages = 2 for <= 2 groups).
constexpr int64_t kAttentionMaxSlots = 4;
/// In the TMA functions (attentionHasTmaCopies), one mbarrier a stage at the
/// very end (8 bytes; one stage for G = 4, two for G = 1 and 2): the trip's TMA
/// copies complete on it; AttentionLaunch::sharedBytes counts it for tmaCopies
/// launches. At the end, so that every other offset stays as in ABI 9.
constexpr int64_t kAttentionTripBarrierBytes = 16;
/// Each warp keeps its 16 Q rows (bf16) after the slots.
constexpr int64_t kAttentionQBytesPerWarp = 16 * 64 * 2;
/// After the Q rows, the merge area: per lane of a row warp, 36 floats
/// (m, l of rows g and g + 8 and their 32 acc) for each key group but the
/// first and, in a split function, one receive slot per split (rank 0
/// merges them) and the 16 bytes of its mbarrier. Kept apart from the
/// slots, so a group or a split hands over without waiting for the other
/// warps to finish their last tile.
constexpr int64_t kAttentionMergeBytesPerWarp = 32 * 36 * 4;
constexpr int64_t kAttentionMergeBarrierBytes = 16;
/// The kernel's largest dynamic shared memory: one group of four row warps
/// (two stages of one slot) split eight ways, 188432 bytes.
constexpr int64_t kAttentionMaxSharedBytes =
    2 * kAttentionSlotBytes + kAttentionMaxWarps * kAttentionQBytesPerWarp +
    8 * kAttentionMaxWarps * kAttentionMergeBytesPerWarp +
    kAttentionMergeBarrierBytes;
/// Split-KV rule: SMs of an H100/H200 and the kernel's resident CTAs per SM,
/// the lesser of the register bound for 1..4 warps (at most 168 registers a
/// thread, __launch_bounds__(128, 3), the one-group function's) and the
/// shared-memory bound for 2 or 4 slots (16 KiB each, 2 KiB of Q a warp and
/// the 1 KiB the system reserves, of 228 KiB). Splits pay while the grid
/// leaves half the GPU's CTA slots empty, and while the split grid has at
/// most one CTA an SM. (The grouped functions guarantee
/// two CTAs of four warps an SM, .minnctapersm 2; the rule launches them for
/// at most kAttentionGroupsMaxCtas CTAs, or kAttentionPairedGroupsMaxCtas
/// 2-warp CTAs, split grids for at most a quarter of this model's slots, so
/// each fits one wave and the model, measured so, stays.)
constexpr int64_t kAttentionSms = 132;
/// Beyond this many CTAs (B*H*row blocks, two an SM) the rule uses one group:
/// the SMs are busy anyway and a group's shared memory costs occupancy.
constexpr int64_t kAttentionGroupsMaxCtas = 2 * kAttentionSms;
/// nvvm.minctasm of the one-group function (at 4 warps: <= 168 registers).
constexpr int64_t kAttentionMinCtasPerSm = 3;
/// nvvm.minctasm of the grouped functions: the rule launches them for at
/// most kAttentionGroupsMaxCtas CTAs (before splits, which fill at most a
/// quarter of the slots), so two an SM suffice, and the registers the cap of
/// three would take back make them faster.
constexpr int64_t kAttentionGroupedMinCtasPerSm = 2;
constexpr int64_t kAttentionCtasPerSmByWarps[5] = {0, 12, 6, 4, 3};
constexpr int64_t kAttentionCtasPerSmBySlots[5] = {0, 0, 6, 0, 3};
constexpr int64_t kAttentionMaxSplits = 8;
/// Up to this many CTAs, two row warps group only for a single trip.
constexpr int64_t kAttentionFewCtas = 32;
/// Beyond kAttentionGroupsMaxCtas, one row warp still takes two groups up to
/// this many CTAs: its 2-warp CTAs fit three an SM (shared memory).
constexpr int64_t kAttentionPairedGroupsMaxCtas = 3 * kAttentionSms;
/// Splits of a launch of two row warps at most (their merge moves 32 rows).
constexpr int64_t kAttentionTwoRowWarpsMaxSplits = 4;
/// A decode pair (chooseAttentionKvGroups) has at most this many query rows.
constexpr int64_t kAttentionDecodePairMaxRows = 4;

/// nvvm.minctasm of the function for `kvGroups` key groups.
int64_t attentionMinCtasPerSm(int64_t kvGroups);

/// Whether the functions for `kvGroups` key groups take copy warps: those
/// of 2 and 3 groups (one row warp leaves them room). The others are built
/// without: four groups never leave room, and the per-thread tests slow the
/// one-group function's large decode grids. (g2_tma is built with them too,
/// but its launches have none.)
bool attentionHasCopyWarps(int64_t kvGroups);

/// Whether launches for `kvGroups` key groups (split ones with `split`)
/// have a function that copies K and V by the TMA engine (ABI 10): the
/// one-pass launches of 4 groups, by streaming_attention_d64_g4_tma, and
/// (ABI 12) of 2 groups, by streaming_attention_d64_g2_tma, whose K/V slots
/// use the engine's 128-byte swizzle. With the engine in every function the
/// one- and two-group functions got slower, their cp.async path too
/// (register allocation), so the TMA functions are functions of their own.
/// ABI 13: one group too, by streaming_attention_d64_g1_tma (two stages, as
/// g2_tma): long chunks walk every key tile with all four row warps, and
/// thread 0's two boxes a trip replace every thread's sixteen cp.async.
bool attentionHasTmaCopies(int64_t kvGroups, bool split);

/// Bytes of the merge area of a launch (kAttentionMergeBytesPerWarp):
/// (kvGroups - 1 + (splits > 1 ? splits : 0)) * rowWarps entries, and the
/// mbarrier when splits > 1.
int64_t attentionMergeBytes(int64_t kvGroups, int64_t rowWarps, int64_t splits);

/// Stages of the K/V slots for `kvGroups` key groups: 2 (the next trip's
/// copies overlap this trip's compute) for <= 2 groups, else 1.
int64_t attentionStages(int64_t kvGroups);

/// Index of the function for `kvGroups` key groups (1..4), one-pass or
/// split, in the manifest's function list: G - 1, or 4 + G - 1 for split;
/// with `tma` the function that copies K and V by the TMA engine, 8 for four
/// groups, 9 for two and 10 for one (only for
/// attentionHasTmaCopies(kvGroups, split); -1 otherwise); with `tma` and
/// `splitKv` too, 11, g4_tma_kv (four groups only; -1 otherwise). With
/// `positions`, the function of the same launch that builds the mask from
/// positions: kAttentionMaskFunctions more.
int64_t attentionFunctionIndex(int64_t kvGroups, bool split, bool tma = false,
                               bool splitKv = false, bool positions = false);
/// The function at `index` (0 .. kAttentionFunctions - 1) of that list.
struct AttentionFunction {
  int64_t kvGroups;
  bool split;
  bool tma = false;
  /// g4_tma_kv: K's boxes complete on one mbarrier, V's on another.
  bool splitKv = false;
  /// The mask from slot_positions and query_positions, not a bool mask.
  bool positions = false;
};
AttentionFunction attentionFunctionAt(int64_t index);
/// Symbol of that function: streaming_attention_d64_g<G>,
/// streaming_attention_d64_g<G>_split, streaming_attention_d64_g<G>_tma or
/// streaming_attention_d64_g4_tma_kv, each with the suffix _pos for the
/// positions functions; its manifest role "g<G>", "g<G>_split", "g<G>_tma"
/// or "g4_tma_kv", likewise.
std::string attentionKernelSymbol(const AttentionFunction &f);
std::string attentionKernelRole(const AttentionFunction &f);

/// Parameter names of the attention kernel, in ABI order (kAttentionParams).
const std::vector<std::string> &attentionKernelArgNames();

/// The constants a generated attention kernel is built with, as recorded in
/// its manifest entry's "params": moss-aot writes them and the runtime
/// refuses a record whose values differ.
const std::map<std::string, int64_t> &attentionKernelParams();

struct AttentionLaunch {
  int64_t rowWarps = 0;     ///< min(4, ceil(T / 16)): warps of distinct rows.
  int64_t kvGroups = 0;     ///< key groups (1..4): rowWarps * kvGroups <= 4.
  int64_t computeWarps = 0; ///< rowWarps * kvGroups.
  /// Warps past the compute warps that only share the K/V copies (none in
  /// a tmaCopies launch).
  int64_t copyWarps = 0;
  int64_t warps = 0;         ///< computeWarps + copyWarps <= 4.
  int64_t threads = 0;       ///< 32 * warps: blockDim.x of the main kernel.
  int64_t rowsPerCta = 0;    ///< 16 * rowWarps query rows of one (b, h).
  int64_t gridX = 0;         ///< B * H.
  int64_t gridY = 0;         ///< ceil(T / rowsPerCta).
  int64_t keyTiles = 0;      ///< ceil(S / 64).
  int64_t tilesPerSplit = 0; ///< ceil(keyTiles / splits).
  int64_t splits = 0;        ///< gridDim.z = cluster size z; no split is empty.
  int64_t stages = 0;        ///< 2 for <= 2 key groups, else 1.
  /// The launch runs the TMA function (attentionHasTmaCopies) when k and v
  /// encode as tensor maps: by the rule (AttentionTmaMode::rule) when it has
  /// one trip a CTA (tilesPerSplit <= kvGroups), for two groups (two stages)
  /// also over more than two trips, for one group over more than two trips
  /// in grids of more than kAttentionGroupsMaxCtas CTAs, and for the decode
  /// pairs of chooseAttentionKvGroups. Launches of two trips in one stage
  /// copy the second after the compute, where the engine cannot overlap it
  /// and cp.async keeps the cheaper issue. Where the maps do not encode, the
  /// launch is derived again with AttentionTmaMode::off.
  bool tmaCopies = false;
  /// griddepcontrol.launch_dependents at the start (kAttentionFlagEarlyTrigger)
  /// rather than after the last key tile: by the rule for one-pass launches
  /// (splits == 1) where a waiting grid of as many CTAs fits beside this
  /// one, one CTA an SM (2 * CTAs <= kAttentionSms): there the next grid's
  /// CTAs take free SMs and start early; in fuller grids they would take the
  /// slots this grid's later CTAs need. Matters only to a programmatic
  /// launch.
  bool earlyTrigger = false;
  /// tmaCopies launches of four key groups and more than kAttentionSms / 2
  /// CTAs run g4_tma_kv instead of g4_tma: K's boxes complete on one
  /// mbarrier and V's on another, so warps start QK^T and the softmax while
  /// V still lands. Smaller grids land fast enough that the second wait
  /// costs more than it hides.
  bool splitKvBarriers = false;
  /// Dynamic shared memory: stages * kvGroups slots, 2 KiB a compute warp,
  /// the merge area, then (tmaCopies) the trip's mbarrier.
  int64_t sharedBytes = 0;
};

/// Key groups of the rule before splitting, for sizes >= 1: the warps that
/// rows leave free, min(4 / rowWarps, keyTiles) (1 from 3 row warps on); 1
/// for more than kAttentionGroupsMaxCtas CTAs (at most 2 for one row warp up
/// to kAttentionPairedGroupsMaxCtas); at most 2 for a decode pair, T <=
/// kAttentionDecodePairMaxRows in more than kAttentionSms and at most
/// kAttentionGroupsMaxCtas CTAs; 1 for two row warps in a grid of
/// at most kAttentionFewCtas CTAs when groups would leave more than one trip;
/// 2 instead of 4 when keyTiles > 4 and ctas * ceil(keyTiles / 2)
/// <= kAttentionSms (the splits of two-group CTAs, each one trip, fit one
/// CTA an SM).
int64_t chooseAttentionKvGroups(int64_t b, int64_t h, int64_t t, int64_t s);

/// Which launches copy K and V by the TMA engine (MOSS_ATTENTION_TMA): none,
/// the rule's (AttentionLaunch::tmaCopies, the default), or every launch
/// whose function has a TMA twin (attentionHasTmaCopies), a tuning knob for
/// measuring the rule.
enum class AttentionTmaMode { off = 0, rule = 1, everywhere = 2 };

/// Which launches trigger their dependents at the start
/// (MOSS_ATTENTION_EARLY_TRIGGER): none, the rule's
/// (AttentionLaunch::earlyTrigger, the default) or all, a tuning knob for
/// measuring the rule.
enum class AttentionTriggerMode { late = 0, rule = 1, early = 2 };

/// Which g4_tma launches run g4_tma_kv (MOSS_ATTENTION_SPLIT_KV): none, the
/// rule's (AttentionLaunch::splitKvBarriers, the default) or all, a tuning
/// knob for measuring the rule.
enum class AttentionSplitKvMode { never = 0, rule = 1, always = 2 };

/// Split-KV count of the rule, for sizes >= 1: with G key groups
/// (chooseAttentionKvGroups), trips = ceil(keyTiles / G), slots = 132 * CTAs
/// per SM and ctas = B*H*ceil(T / rowsPerCta): 1 when trips <= 1, else
/// max(1, min(ceil(trips / minTrips), floor(slots / (f ctas)), floor(132 /
/// ctas), most)) with f = 2 for one group, 4 for more, minTrips = 1 for one
/// or two row warps, else 2, and most = kAttentionTwoRowWarpsMaxSplits for
/// two row warps, else 8. Every split pays a merge (rank 0 merges the other
/// ranks' rows), so splits of many row warps must save more than one trip
/// each. Fitted to sweeps of the decoder's cases on an H200
/// (docs/performance.md).
int64_t chooseAttentionSplits(int64_t b, int64_t h, int64_t t, int64_t s);

/// Fills `out` for sizes >= 1. `splits` / `kvGroups` = 0 apply the rule; a
/// positive value is used instead (groups capped at 4 / rowWarps), reduced
/// so that no split is empty (splits = ceil(keyTiles / ceil(keyTiles /
/// splits))), at most kAttentionMaxSplits, and no group idles for want of
/// tiles (kvGroups <= tilesPerSplit). Fails, with the reason in `err`, on
/// sizes < 1 or a grid past CUDA's limits. `copyWarps` < 0 applies the rule
/// (functions with attentionHasCopyWarps: 4 - rowWarps * kvGroups when the
/// grid, splits included, has at most kAttentionSms CTAs, else 0); a value
/// >= 0 is used instead, capped to fill at most four warps (0 for the other
/// functions and for tmaCopies launches).
/// `tma` picks the launches marked tmaCopies (their sharedBytes count the
/// trip mbarrier), `trigger` those marked earlyTrigger, `splitKv` those
/// marked splitKvBarriers.
bool deriveAttentionLaunch(
    int64_t b, int64_t h, int64_t t, int64_t s, int64_t splits,
    int64_t kvGroups, AttentionLaunch &out, std::string &err,
    int64_t copyWarps = -1, AttentionTmaMode tma = AttentionTmaMode::rule,
    AttentionTriggerMode trigger = AttentionTriggerMode::rule,
    AttentionSplitKvMode splitKv = AttentionSplitKvMode::rule);

} // namespace moss::config

#endif // MOSS_CONFIG_ATTENTIONLAUNCH_H
