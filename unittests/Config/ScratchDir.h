//===- ScratchDir.h - Per-test scratch directory ---------------*- C++ -*-===//

#ifndef MOSS_UNITTESTS_CONFIG_SCRATCHDIR_H
#define MOSS_UNITTESTS_CONFIG_SCRATCHDIR_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace moss::config::unittest {

class ScratchDir {
public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "moss-config-XXXXXX";
    if (char *made = ::mkdtemp(pattern.data()))
      path = made;
    else
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  std::string file(const std::string &name) const { return path + "/" + name; }

  /// Names of the entries in the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(path))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string path;
};

} // namespace moss::config::unittest

#endif // MOSS_UNITTESTS_CONFIG_SCRATCHDIR_H
