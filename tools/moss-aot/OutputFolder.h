//===- OutputFolder.h - what moss-aot may write and remove -----*- C++ -*-===//
//
// moss-aot writes into a folder the user names, so it must never take that
// folder for its own when it is not: it writes only into a folder that is
// missing, empty, or holds its own record (a valid manifest.json, or a valid
// candidates.json), and removes only the files that record names and the
// leftovers of its own killed builds. One build at a time holds a folder,
// through an flock on the folder itself kept from before staging to after
// the last rename: no lock file is written (a refused folder stays as it
// was), and the kernel drops the lock when a build dies, so a lock never
// outlives its holder.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TOOLS_MOSSAOT_OUTPUTFOLDER_H
#define MOSS_TOOLS_MOSSAOT_OUTPUTFOLDER_H

#include "moss/Config/Manifest.h"

#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>
#include <vector>

namespace moss::aot {

/// Writes, into a build's staging folder, the names it is about to move into
/// the output folder, before it moves any: if the build dies between those
/// renames and its record, the next build knows the moved entries for its
/// own and removes them instead of refusing them as foreign.
bool writeMoveJournal(const std::string &stagingDir,
                      const std::vector<std::string> &names, std::string &err);

/// Checks `dir` as the value of --out: not empty, and a folder or nothing
/// (it is created), not a file. Errors name the option.
bool checkOutPath(const std::string &dir, std::string &err);

/// The exclusive lock of one output folder, held from acquire() until
/// destruction.
class FolderLock {
public:
  FolderLock() = default;
  FolderLock(const FolderLock &) = delete;
  FolderLock &operator=(const FolderLock &) = delete;
  ~FolderLock();

  /// Creates `dir` (with its parents) when missing and takes its lock. When
  /// another build holds it, says so in `log` and waits for it: that build
  /// is alive (a dead one's lock is gone), and the folder it leaves is
  /// consistent, so this build then starts from it.
  bool acquire(const std::string &dir, llvm::raw_ostream &log,
               std::string &err);

  /// Takes a shared lock of the existing folder `dir`, so that a reader
  /// (--check) never sees a build's renames half done.
  bool acquireShared(const std::string &dir, std::string &err);

private:
  int fd = -1;
};

/// Entries of a folder (plain names) that moss-aot wrote and may replace.
struct OwnedEntries {
  std::set<std::string> files;
  std::set<std::string> folders; ///< Candidate rounds.
};

/// The kernel files `manifest` names.
OwnedEntries manifestEntries(const config::Manifest &manifest);

/// Claims a kernels folder for a build (call it with the lock held): removes
/// the leftovers of killed builds (".staging-<pid>", "manifest.json.tmp.<pid>"
/// and the kernel files or round folders a staging folder's move journal
/// names that the manifest does not) and returns in `owned` the files its
/// manifest names. Refuses, with `err` naming the folder and its first foreign
/// entry, a folder that holds anything else: a manifest.json that is not a
/// valid moss manifest, a file no manifest names, or a named file that is a
/// symbolic link or not a regular file; a refused folder keeps its leftovers
/// too. `alsoOwned` are further names the caller wrote (a round's
/// whitelist.json).
bool claimKernelsFolder(const std::string &dir, OwnedEntries &owned,
                        std::string &err,
                        const std::set<std::string> &alsoOwned = {});

/// claimKernelsFolder for a reader: the same refusals, and nothing removed.
bool inspectKernelsFolder(const std::string &dir, OwnedEntries &owned,
                          std::string &err);

/// The same for a candidates folder: candidates.json and the round folders
/// it names, each a kernels folder with its whitelist.json.
bool claimCandidatesFolder(const std::string &dir, OwnedEntries &owned,
                           std::string &err);

/// Removes the files of `before` that `after` does not name.
void removeReleasedFiles(const std::string &dir, const OwnedEntries &before,
                         const OwnedEntries &after);

/// Why the file `name` of `dir` cannot be a kernel file moss-aot wrote (a
/// symbolic link, which may point outside the folder, or no regular file),
/// or "" when it is a regular file or missing.
std::string notRegularFileReason(const std::string &dir,
                                 const std::string &name);

} // namespace moss::aot

#endif // MOSS_TOOLS_MOSSAOT_OUTPUTFOLDER_H
