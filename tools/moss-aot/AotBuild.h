//===- AotBuild.h - build every whitelist kernel into a folder --*- C++ -*-===//
#ifndef MOSS_TOOLS_MOSSAOT_AOTBUILD_H
#define MOSS_TOOLS_MOSSAOT_AOTBUILD_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace moss::aot {
struct AotOptions {
  std::string whitelistPath;
  std::string outDir = "kernels_generated";
  std::string chip = "sm_90a";
  std::string cudaPath;
  bool force = false; ///< Rebuild even when the cache key matches.
};

/// Builds the cubins, PTX and manifest.json of `options.whitelistPath` into
/// `options.outDir`. Progress goes to `log`, one line per kernel; errors to
/// `err`. The previous manifest and kernels stay intact until the new ones
/// are complete.
bool runAotBuild(const AotOptions &options, llvm::raw_ostream &log,
                 std::string &err);

enum class CheckResult { UpToDate, Stale, Error };

/// --check: whether `options.outDir` holds the build runAotBuild would make
/// of `options.whitelistPath` with this moss-aot (same cache key, every
/// kernel file present with its recorded sha256). Writes nothing. Stale:
/// `err` says what differs; Error: the whitelist or toolkit is unusable.
CheckResult runAotCheck(const AotOptions &options, llvm::raw_ostream &log,
                        std::string &err);
} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_AOTBUILD_H
