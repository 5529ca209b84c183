//===- OutputFolder.cpp - what moss-aot may write and remove --------------===//
#include "OutputFolder.h"

#include "moss/Config/CandidateSet.h"
#include "moss/Config/FileUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

using namespace moss;
using namespace moss::aot;

namespace fs = llvm::sys::fs;

namespace {
std::string join(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The entry's own type: a symbolic link is not followed.
fs::file_type ownType(const std::string &path) {
  fs::file_status st;
  std::error_code ec = fs::status(path, st, /*follow=*/false);
  if (ec == std::errc::no_such_file_or_directory)
    return fs::file_type::file_not_found;
  return ec ? fs::file_type::status_error : st.type();
}

/// Names in `dir`, sorted (so the first foreign one is the same every run).
bool listFolder(const std::string &dir, std::vector<std::string> &names,
                std::string &err) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  if (ec) {
    err = "cannot list " + dir + ": " + ec.message();
    return false;
  }
  std::sort(names.begin(), names.end());
  return true;
}

/// What a killed build of moss-aot leaves: its staging folder and the
/// temporary file of an atomic write. With the folder's lock held no other
/// build is running, so every such entry is dead.
bool isLeftover(llvm::StringRef name) {
  static const llvm::Regex leftover(
      "^(\\.staging-[0-9]+|(manifest|candidates)\\.json\\.tmp\\.[0-9]+)$");
  return leftover.match(name);
}

constexpr const char *kMoveJournalName = "moved";

/// The entries that the dead builds' staging folders among `names` moved, or
/// were about to move, into `dir`.
std::set<std::string> movedByDeadBuilds(const std::string &dir,
                                        const std::vector<std::string> &names) {
  static const llvm::Regex staging("^\\.staging-[0-9]+$");
  std::set<std::string> moved;
  for (const std::string &name : names) {
    std::string text, err;
    if (!staging.match(name) ||
        !config::readFile(join(join(dir, name), kMoveJournalName), text, err))
      continue;
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(text).split(lines, '\n', -1, /*KeepEmpty=*/false);
    // Only names of the kind a build moves in (content-addressed kernel
    // files, round folders), whatever a journal says.
    static const llvm::Regex movable(
        "^([A-Za-z0-9_]+\\.[0-9a-f]{12}\\.(cubin|ptx)|r[0-9]{3})$");
    for (llvm::StringRef line : lines)
      if (config::isPlainFileName(line) && movable.match(line))
        moved.insert(line.str());
  }
  return moved;
}

void removeEntry(const std::string &path) {
  if (ownType(path) == fs::file_type::directory_file)
    fs::remove_directories(path);
  else
    fs::remove(path);
}

std::string refusal(const std::string &dir, const std::string &name,
                    const std::string &why, size_t foreign) {
  std::string more =
      foreign > 1 ? "; " + std::to_string(foreign) + " such entries in all"
                  : "";
  return "refusing to write into " + dir + ": " + name + " " + why + more +
         " (moss-aot writes only into a folder that is missing, empty or one "
         "it built, and removes only what its own record names; pick another "
         "--out or empty this one)";
}

/// Checks the entries of `dir` against `owned` (plus its record file
/// `recordName` and `alsoOwned`), removing leftovers; refuses on the first
/// foreign entry.
bool checkEntries(const std::string &dir, const std::string &recordName,
                  const OwnedEntries &owned,
                  const std::set<std::string> &alsoOwned, bool removeLeftovers,
                  std::string &err) {
  std::vector<std::string> names;
  if (!listFolder(dir, names, err))
    return false;
  const std::set<std::string> moved = movedByDeadBuilds(dir, names);
  std::vector<std::pair<std::string, std::string>> foreign; // name, why
  std::vector<std::string> leftovers;
  for (const std::string &name : names) {
    std::string path = join(dir, name);
    if (name == recordName)
      continue;
    if (isLeftover(name)) {
      leftovers.push_back(path);
      continue;
    }
    if (owned.folders.count(name)) {
      if (ownType(path) != fs::file_type::directory_file)
        foreign.push_back({name, "is named as a round folder but is no "
                                 "folder (a symbolic link?)"});
      continue;
    }
    if (owned.files.count(name) || alsoOwned.count(name)) {
      std::string why = notRegularFileReason(dir, name);
      if (!why.empty())
        foreign.push_back({name, why});
      continue;
    }
    if (moved.count(name)) { // A killed build's, not yet in any record.
      leftovers.push_back(path);
      continue;
    }
    foreign.push_back({name, "is not named by a moss record there"});
  }
  if (!foreign.empty()) { // Refused: nothing is removed, leftovers neither.
    err = refusal(dir, foreign.front().first, foreign.front().second,
                  foreign.size());
    return false;
  }
  if (removeLeftovers)
    for (const std::string &path : leftovers)
      removeEntry(path);
  return true;
}

/// Reads the record file `name` of `dir` (which must be a regular file) with
/// `read`; a missing one is an empty record.
template <typename Read>
bool readRecord(const std::string &dir, const std::string &name, bool &present,
                Read read, std::string &err) {
  std::string path = join(dir, name);
  present = ownType(path) != fs::file_type::file_not_found;
  if (!present)
    return true;
  std::string why = notRegularFileReason(dir, name);
  if (why.empty() && read())
    return true;
  if (why.empty())
    why = "is not a valid moss " + name + " (" + err + ")";
  err = refusal(dir, name, why, 1);
  return false;
}
} // namespace

bool aot::writeMoveJournal(const std::string &stagingDir,
                           const std::vector<std::string> &names,
                           std::string &err) {
  std::string text;
  for (const std::string &name : names)
    text += name + "\n";
  return config::writeFileAtomic(join(stagingDir, kMoveJournalName), text, err);
}

bool aot::checkOutPath(const std::string &dir, std::string &err) {
  if (dir.empty()) {
    err = "--out is empty: name the kernels folder to write (for example "
          "--out kernels_generated)";
    return false;
  }
  fs::file_type type = ownType(dir);
  if (type == fs::file_type::file_not_found ||
      type == fs::file_type::directory_file)
    return true;
  if (type == fs::file_type::symlink_file && fs::is_directory(dir))
    return true; // A link to a folder is the user's choice of folder.
  err = "--out " + dir + " is not a folder";
  return false;
}

aot::FolderLock::~FolderLock() {
  if (fd >= 0)
    ::close(fd); // Drops the flock.
}

bool aot::FolderLock::acquire(const std::string &dir, llvm::raw_ostream &log,
                              std::string &err) {
  if (std::error_code ec = fs::create_directories(dir)) {
    err = "--out " + dir + ": cannot create the folder: " + ec.message();
    return false;
  }
  fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    err = "--out " + dir + ": cannot open the folder: " + std::strerror(errno);
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
    return true;
  if (errno != EWOULDBLOCK) {
    err = "cannot lock " + dir + ": " + std::strerror(errno);
    return false;
  }
  log << "moss-aot: another moss-aot is building " << dir
      << "; waiting for it to finish (one build at a time per folder)\n";
  log.flush();
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      err = "cannot lock " + dir + ": " + std::strerror(errno);
      return false;
    }
  return true;
}

bool aot::FolderLock::acquireShared(const std::string &dir, std::string &err) {
  fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    err = "--out " + dir + ": cannot open the folder: " + std::strerror(errno);
    return false;
  }
  while (::flock(fd, LOCK_SH) != 0)
    if (errno != EINTR) {
      err = "cannot lock " + dir + ": " + std::strerror(errno);
      return false;
    }
  return true;
}

OwnedEntries aot::manifestEntries(const config::Manifest &manifest) {
  OwnedEntries owned;
  for (const config::GemmKernelRecord &k : manifest.gemmKernels)
    owned.files.insert({k.cubin, k.ptx});
  for (const config::AttentionKernelRecord &k : manifest.attentionKernels)
    owned.files.insert({k.cubin, k.ptx});
  return owned;
}

std::string aot::notRegularFileReason(const std::string &dir,
                                      const std::string &name) {
  switch (ownType(join(dir, name))) {
  case fs::file_type::regular_file:
  case fs::file_type::file_not_found:
    return "";
  case fs::file_type::symlink_file:
    return "is a symbolic link (moss-aot writes regular files; a link may "
           "point outside the folder)";
  default:
    return "is not a regular file";
  }
}

namespace {
bool claimKernels(const std::string &dir, OwnedEntries &owned,
                  const std::set<std::string> &alsoOwned, bool removeLeftovers,
                  std::string &err) {
  owned = {};
  bool present = false;
  config::Manifest manifest;
  std::vector<std::string> earlier; // the files of an older moss-aot's record
  bool isEarlier = false;
  auto read = [&] {
    if (config::readManifest(dir, manifest, err))
      return true;
    std::string why;
    isEarlier = config::readEarlierManifestFiles(dir, earlier, why);
    return isEarlier;
  };
  if (!readRecord(dir, config::kManifestFileName, present, read, err))
    return false;
  if (present && isEarlier)
    owned.files.insert(earlier.begin(), earlier.end());
  else if (present)
    owned = manifestEntries(manifest);
  return checkEntries(dir, config::kManifestFileName, owned, alsoOwned,
                      removeLeftovers, err);
}
} // namespace

bool aot::claimKernelsFolder(const std::string &dir, OwnedEntries &owned,
                             std::string &err,
                             const std::set<std::string> &alsoOwned) {
  return claimKernels(dir, owned, alsoOwned, /*removeLeftovers=*/true, err);
}

bool aot::inspectKernelsFolder(const std::string &dir, OwnedEntries &owned,
                               std::string &err) {
  return claimKernels(dir, owned, {}, /*removeLeftovers=*/false, err);
}

bool aot::claimCandidatesFolder(const std::string &dir, OwnedEntries &owned,
                                std::string &err) {
  owned = {};
  bool present = false;
  config::CandidateList list;
  if (!readRecord(
          dir, config::kCandidatesFileName, present,
          [&] { return config::readCandidateList(dir, list, err); }, err))
    return false;
  owned.folders.insert(list.rounds.begin(), list.rounds.end());
  if (!checkEntries(dir, config::kCandidatesFileName, owned, {},
                    /*removeLeftovers=*/true, err))
    return false;
  for (const std::string &round : list.rounds) {
    std::string roundDir = join(dir, round);
    OwnedEntries inRound;
    if (ownType(roundDir) == fs::file_type::directory_file &&
        !claimKernelsFolder(roundDir, inRound, err,
                            {config::kRoundWhitelistFileName}))
      return false;
  }
  return true;
}

void aot::removeReleasedFiles(const std::string &dir,
                              const OwnedEntries &before,
                              const OwnedEntries &after) {
  for (const std::string &name : before.files)
    if (!after.files.count(name) && notRegularFileReason(dir, name).empty())
      fs::remove(join(dir, name));
}
