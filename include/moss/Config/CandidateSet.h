//===- CandidateSet.h - Tile candidates of the offline tuner ---*- C++ -*-===//
//
// `moss-aot --candidates` enumerates legal tiles per whitelist key and builds
// them; `moss-tune` times them. They meet in a candidates folder:
//
//   DIR/candidates.json    key -> candidate tiles, each with its round folder
//   DIR/r000/ r001/ ...    one kernels folder per round: whitelist.json,
//                          manifest.json and the cubins, as moss-aot writes
//
// A manifest serves each key with exactly one kernel, so candidates are split
// into rounds: every distinct (N, K, mode, tile) kernel is built once and
// lives in exactly one round, and no two kernels of a round serve one key.
// Each round is then an ordinary whitelist plus kernels folder that the
// runtime (and the GPU tests) load as they are.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_CANDIDATESET_H
#define MOSS_CONFIG_CANDIDATESET_H

#include "moss/Config/GemmLaunch.h"
#include "moss/Config/Whitelist.h"

#include <string>
#include <string_view>
#include <vector>

namespace moss::config {

constexpr int64_t kCandidatesFormatVersion = 1;
constexpr const char *kCandidatesFileName = "candidates.json";
/// Inside each round folder, beside manifest.json.
constexpr const char *kRoundWhitelistFileName = "whitelist.json";

/// The sizes the enumeration tries; every combination is checked with
/// checkTileLegal, the validator of whitelists.
struct TileSpace {
  std::vector<int64_t> bm = {8, 16, 32, 64};
  std::vector<int64_t> bn = {16, 32, 64, 128, 256};
  std::vector<int64_t> bk = {32, 64, 128, 256};
  std::vector<int64_t> split = {1, 2, 4, 8};
};

/// Legal tiles of `space` for `key`, in the order bm, bn, bk, split, one per
/// distinct kernel: a tile that builds the same kernel as an earlier one
/// (sameGemmKernel: another bk giving the same copy stages) is left out. bm
/// is capped at max(8, M rounded up to a power of two): a taller tile
/// computes rows that do not exist.
std::vector<GemmTile> enumerateCandidateTiles(const GemmKey &key,
                                              const TileSpace &space);

/// Parses a list of "M,N,K,mode" keys separated by white space or ';'
/// ('#' starts a comment to the end of the line). Errors read
/// "<source>: key \"<text>\": <reason>"; an empty list and a repeated key are
/// errors.
bool parseKeyList(std::string_view text, const std::string &source,
                  std::vector<GemmKey> &keys, std::vector<std::string> &texts,
                  std::string &err);

/// Greedy round assignment: `kernelKeys[i]` are the keys kernel i serves;
/// returns each kernel's round so that no two kernels of a round share a
/// key, using the fewest rounds the order allows (first fit).
std::vector<int>
assignCandidateRounds(const std::vector<std::vector<std::string>> &kernelKeys);

/// "r000", "r001", ...
std::string candidateRoundName(int round);

struct Candidate {
  GemmTile tile;
  std::string round;  ///< Folder under the candidates folder.
  std::string kernel; ///< gemmKernelName of the tile.
};

struct CandidateKey {
  std::string keyText;
  GemmKey key;
  std::vector<Candidate> candidates;
};

/// A tile the enumeration allowed but ptxas could not build without spills.
struct RefusedCandidate {
  std::string keyText;
  GemmTile tile;
  std::string reason;
};

struct CandidateList {
  std::string chip;
  std::vector<std::string> rounds;
  std::vector<CandidateKey> keys; ///< In the order they were asked for.
  std::vector<RefusedCandidate> refused;
};

/// Pretty-printed JSON of `list` (see the top of this file).
std::string serializeCandidateList(const CandidateList &list);

/// Parses and validates candidates.json: format version, keys (kept in file
/// order, none listed twice), legal tiles, plain round names listed in
/// "rounds". Errors name the file and the key.
bool parseCandidateList(std::string_view bytes, const std::string &fileName,
                        CandidateList &out, std::string &err);

/// Reads "<dir>/candidates.json".
bool readCandidateList(const std::string &dir, CandidateList &out,
                       std::string &err);

/// Writes "<dir>/candidates.json" atomically (writeFileAtomic): a failed
/// write leaves the previous file as it was.
bool writeCandidateList(const std::string &dir, const CandidateList &list,
                        std::string &err);

} // namespace moss::config

#endif // MOSS_CONFIG_CANDIDATESET_H
