//===- CandidatesBuild.cpp - build every tile candidate of some keys ------===//
//
// The tuner's side of moss-aot: every legal tile of every key (legality from
// moss::config::deriveGemmLaunch, the whitelist's own validator), each distinct
// kernel compiled once with the steps of the whitelist build, and round folders
// that are ordinary kernels folders with their whitelist. Tiles ptxas cannot
// build without spilling are listed as refused instead of failing the whole
// build.
//
//===----------------------------------------------------------------------===//
#include "CandidatesBuild.h"
#include "AotSteps.h"
#include "OutputFolder.h"

#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace moss;
using namespace moss::aot;

namespace {
/// The keys to tune, from a file or from the option's text.
bool readKeys(const std::string &shapes, std::vector<config::GemmKey> &keys,
              std::vector<std::string> &texts, std::string &err) {
  if (llvm::sys::fs::is_regular_file(shapes)) {
    std::string bytes;
    return config::readFile(shapes, bytes, err) &&
           config::parseKeyList(bytes, shapes, keys, texts, err);
  }
  return config::parseKeyList(shapes, "--candidates", keys, texts, err);
}

/// One kernel per distinct (N, K, mode, tile), serving every key that has
/// the tile as a candidate; in the order the keys and tiles were enumerated.
std::vector<KernelGroup>
groupCandidates(const std::vector<config::GemmKey> &keys,
                const std::vector<std::string> &texts,
                const config::TileSpace &space, std::string &err) {
  KernelGrouper grouper;
  for (size_t i = 0; i < keys.size(); ++i) {
    const config::GemmKey &key = keys[i];
    std::vector<config::GemmTile> tiles =
        config::enumerateCandidateTiles(key, space);
    if (tiles.empty()) {
      err = "key \"" + texts[i] +
            "\": no tile of the tile space is legal for it (see "
            "docs/kernel-abi.md, \"Generated GEMM constraints\")";
      return {};
    }
    for (const config::GemmTile &t : tiles)
      grouper.add(key, t, texts[i]);
  }
  return grouper.take();
}

/// The round's whitelist: each of its keys with the tile of the kernel that
/// serves it, one key a line.
std::string roundWhitelist(const std::vector<const StagedKernel *> &kernels) {
  std::vector<std::pair<std::string, config::GemmTile>> entries;
  for (const StagedKernel *kernel : kernels)
    for (const std::string &key : kernel->record.keys)
      entries.push_back({key, kernel->record.tile});
  return whitelistText(entries);
}

} // namespace

bool aot::runCandidatesBuild(const CandidatesOptions &options,
                             llvm::raw_ostream &log, std::string &err) {
  std::vector<config::GemmKey> keys;
  std::vector<std::string> texts;
  if (!readKeys(options.shapes, keys, texts, err))
    return false;
  std::vector<KernelGroup> groups =
      groupCandidates(keys, texts, options.space, err);
  if (groups.empty())
    return false;
  BuildEnv env;
  if (!checkOutPath(options.outDir, err) ||
      !prepareBuildEnv(options.chip, options.cudaPath, env, err))
    return false;
  // From here to the last rename this build alone writes the folder.
  FolderLock lock;
  OwnedEntries before;
  if (!lock.acquire(options.outDir, log, err) ||
      !claimCandidatesFolder(options.outDir, before, err))
    return false;
  StagingDir staging(err);
  if (!staging.make(options.outDir))
    return false;

  auto ctx = makeBuildContext();
  config::CandidateList list;
  list.chip = options.chip;
  std::vector<StagedKernel> built;
  for (auto [i, group] : llvm::enumerate(groups)) {
    StagedKernel kernel;
    std::string name =
        config::gemmKernelName(group.n, group.k, group.mode, group.tile);
    config::Whitelist tileOf;
    if (!singleKeyWhitelist(group.keys.front(), group.tile, tileOf, err))
      return staging.fail(err);
    KernelBuildResult result =
        buildGemmKernel(*ctx, env, tileOf, staging.path(), group, kernel, err);
    if (result == KernelBuildResult::Failed)
      return staging.fail("candidate kernel " + name + " (keys " +
                          llvm::join(group.keys, " ") + "): " + err);
    if (result == KernelBuildResult::Spills) {
      log << llvm::formatv("[{0}/{1}] {2}: refused: {3}\n", i + 1,
                           groups.size(), name, err);
      for (const std::string &key : group.keys)
        list.refused.push_back({key, group.tile, err});
      continue;
    }
    const config::KernelFunctionRecord &main = kernel.record.functions[0];
    log << llvm::formatv("[{0}/{1}] {2}: {3}\n", i + 1, groups.size(), name,
                         describeGemmKernel(group, main));
    built.push_back(std::move(kernel));
  }

  std::vector<std::vector<std::string>> kernelKeys;
  for (const StagedKernel &kernel : built)
    kernelKeys.push_back(kernel.record.keys);
  std::vector<int> roundOf = config::assignCandidateRounds(kernelKeys);
  int rounds = 0;
  for (int r : roundOf)
    rounds = std::max(rounds, r + 1);

  // Each round: an ordinary whitelist and kernels folder, checked by the
  // whitelist validator and the manifest writer like any other build.
  std::map<std::string, std::string> roundOfKernel; // kernel name -> round
  for (int r = 0; r < rounds; ++r) {
    std::vector<const StagedKernel *> members;
    for (size_t i = 0; i < built.size(); ++i)
      if (roundOf[i] == r)
        members.push_back(&built[i]);
    std::string name = config::candidateRoundName(r);
    std::string dir = joinPath(staging.path(), name);
    std::string whitelistPath = joinPath(dir, config::kRoundWhitelistFileName);
    std::string bytes = roundWhitelist(members);
    config::Whitelist whitelist;
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return staging.fail("cannot create " + dir + ": " + ec.message());
    if (!config::Whitelist::parse(bytes, whitelistPath, whitelist, err) ||
        !config::writeFileAtomic(whitelistPath, bytes, err))
      return staging.fail(err);
    config::Manifest manifest = newManifest(env, bytes);
    for (const StagedKernel *kernel : members) {
      const config::GemmKernelRecord &record = kernel->record;
      if (!moveInto(kernel->stagedCubin, joinPath(dir, record.cubin), err) ||
          !moveInto(kernel->stagedPtx, joinPath(dir, record.ptx), err))
        return staging.fail(err);
      manifest.gemmKernels.push_back(record);
      roundOfKernel[record.name] = name;
    }
    if (!config::writeManifestAtomic(dir, manifest, err))
      return staging.fail(err);
    list.rounds.push_back(name);
  }

  for (size_t i = 0; i < keys.size(); ++i) {
    config::CandidateKey entry{texts[i], keys[i], {}};
    for (const config::GemmTile &t :
         config::enumerateCandidateTiles(keys[i], options.space)) {
      std::string kernel =
          config::gemmKernelName(keys[i].n, keys[i].k, keys[i].mode, t);
      auto round = roundOfKernel.find(kernel);
      if (round != roundOfKernel.end()) // Else refused above.
        entry.candidates.push_back({t, round->second, kernel});
    }
    list.keys.push_back(std::move(entry));
  }

  // Publish: the old list goes first, so an interrupted publish never leaves
  // a candidates.json naming rounds that are gone; the new list comes last.
  // Only the rounds the old list named go (claimCandidatesFolder checked
  // that they hold nothing else).
  std::string listPath = joinPath(options.outDir, config::kCandidatesFileName);
  if (!writeMoveJournal(staging.path(), list.rounds, err))
    return staging.fail(err);
  llvm::sys::fs::remove(listPath);
  for (const std::string &round : before.folders)
    llvm::sys::fs::remove_directories(joinPath(options.outDir, round));
  for (const std::string &round : list.rounds)
    if (!moveInto(joinPath(staging.path(), round),
                  joinPath(options.outDir, round), err))
      return staging.fail(err);
  if (!config::writeCandidateList(options.outDir, list, err))
    return staging.fail(err);
  staging.remove();
  log << "moss-aot: wrote " << listPath << " (" << keys.size() << " keys, "
      << built.size() << " candidate kernels in " << rounds << " rounds, "
      << list.refused.size() << " refused key/tile pairs)\n";
  return true;
}
