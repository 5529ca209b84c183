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
} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_AOTBUILD_H
