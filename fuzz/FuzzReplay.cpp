//===- FuzzReplay.cpp - Run a fuzz target over saved inputs ---------------===//
//
// moss-fuzz-replay TARGET PATH...: feeds every file named, and every file in
// every folder named, to the target (ConfigFuzzTargets.h), so the corpus and
// the inputs libFuzzer once crashed on stay checked under ctest without
// libFuzzer. Fails when a path is missing or no input was found, so a moved
// corpus cannot pass by replaying nothing.
//
//===----------------------------------------------------------------------===//

#include "ConfigFuzzTargets.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

bool readBytes(const fs::path &path, std::string &bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  bytes.assign(std::istreambuf_iterator<char>(in),
               std::istreambuf_iterator<char>());
  return !in.bad();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET PATH...\n", argv[0]);
    return 2;
  }
  moss::fuzz::FuzzTarget target = moss::fuzz::fuzzTargetNamed(argv[1]);
  if (!target) {
    std::fprintf(stderr,
                 "moss-fuzz-replay: unknown target \"%s\" (expected whitelist, "
                 "manifest, candidates, keys, launch or args)\n",
                 argv[1]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    fs::path path(argv[i]);
    if (fs::is_directory(path, ec)) {
      for (const fs::directory_entry &entry : fs::directory_iterator(path, ec))
        if (entry.is_regular_file())
          inputs.push_back(entry.path());
    } else if (fs::is_regular_file(path, ec)) {
      inputs.push_back(path);
    }
    if (ec || !fs::exists(path)) {
      std::fprintf(stderr, "moss-fuzz-replay: %s: no such file or folder\n",
                   argv[i]);
      return 1;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "moss-fuzz-replay: no inputs found\n");
    return 1;
  }
  for (const fs::path &path : inputs) {
    std::string bytes;
    if (!readBytes(path, bytes)) {
      std::fprintf(stderr, "moss-fuzz-replay: cannot read %s\n", path.c_str());
      return 1;
    }
    std::fprintf(stderr, "%s\n", path.c_str());
    target(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("moss-fuzz-replay %s: %zu inputs, every property held\n", argv[1],
              inputs.size());
  return 0;
}
