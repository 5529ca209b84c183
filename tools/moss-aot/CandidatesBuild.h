//===- CandidatesBuild.h - build every tile candidate of some keys -*- C++
//-*-===//
#ifndef MOSS_TOOLS_MOSSAOT_CANDIDATESBUILD_H
#define MOSS_TOOLS_MOSSAOT_CANDIDATESBUILD_H

#include "moss/Config/CandidateSet.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace moss::aot {
struct CandidatesOptions {
  /// A file of "M,N,K,mode" keys, or the keys themselves (space or ';'
  /// separated) when no such file exists.
  std::string shapes;
  std::string outDir;
  std::string chip = "sm_90a";
  std::string cudaPath;
  config::TileSpace space;
};

/// Enumerates the legal tiles of every key, builds each distinct
/// (N, K, mode, tile) kernel once into round folders of `options.outDir` and
/// writes candidates.json (see moss/Config/CandidateSet.h). Everything is
/// built in a staging folder first; the previous rounds and candidates.json
/// are replaced only once the new ones are complete.
bool runCandidatesBuild(const CandidatesOptions &options,
                        llvm::raw_ostream &log, std::string &err);
} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_CANDIDATESBUILD_H
