//===- Whitelist.h - Offline GEMM tile whitelist ---------------*- C++ -*-===//
//
// The whitelist JSON maps "M,N,K,mode" to [bm, bn, bk, split]
// (docs/kernel-abi.md, "Whitelist"). Parsing validates every entry, including
// that the generated kernel can be built for its tile, and keeps the file's
// exact bytes so the cache key is computed from exactly what was parsed.
//
// The API never throws: failures return false with a message
// "<file>: key \"<key>\": <reason>" or "<file>: <reason>".
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_WHITELIST_H
#define MOSS_CONFIG_WHITELIST_H

#include "moss/Config/GemmLaunch.h"
#include "moss/Config/GemmMode.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace moss::config {

/// Symbol of the generated kernel for (N, K, mode, tile), e.g.
/// linear_n3072_k768_gelu_bm16_bn64_bk64_s1; shared by compiler and tools.
std::string gemmKernelName(int64_t n, int64_t k, int mode,
                           const GemmTile &tile);

struct GemmKey {
  int64_t m = 0, n = 0, k = 0;
  int mode = 0;
};

/// Parses a whitelist key "M,N,K,mode" (plain decimal, no spaces, signs or
/// leading zeros; M, N, K >= 1; known mode). On failure sets `reason` without
/// a file or key prefix.
bool parseGemmKey(std::string_view text, GemmKey &key, std::string &reason);

struct WhitelistEntry {
  GemmKey key;
  GemmTile tile;
  std::string keyText; ///< The key exactly as written in the file.
};

class Whitelist {
public:
  /// Parses and validates whitelist JSON. `fileNameForMessages` prefixes every
  /// error. On failure `out` is left unchanged.
  static bool parse(std::string_view bytes,
                    const std::string &fileNameForMessages, Whitelist &out,
                    std::string &err);

  /// Reads the file's exact bytes and parses them.
  static bool load(const std::string &path, Whitelist &out, std::string &err);

  /// The entry for this exact shape and mode, or nullptr.
  const WhitelistEntry *find(int64_t m, int64_t n, int64_t k, int mode) const;

  /// Entries in file order.
  const std::vector<WhitelistEntry> &entries() const { return entryList; }

  /// The exact bytes that were parsed (input of the cache key).
  const std::string &bytes() const { return sourceBytes; }

  /// The file name given to parse() or the path given to load().
  const std::string &fileName() const { return sourceName; }

private:
  std::string sourceName;
  std::string sourceBytes;
  std::vector<WhitelistEntry> entryList;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, size_t> indexByKey;
};

} // namespace moss::config

#endif // MOSS_CONFIG_WHITELIST_H
