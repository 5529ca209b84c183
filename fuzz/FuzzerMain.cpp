//===- FuzzerMain.cpp - libFuzzer entry of one MossConfig target ----------===//
//
// Built once per target with MOSS_FUZZ_TARGET set to its name (see
// fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "ConfigFuzzTargets.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const moss::fuzz::FuzzTarget target = [] {
    moss::fuzz::FuzzTarget found =
        moss::fuzz::fuzzTargetNamed(MOSS_FUZZ_TARGET);
    if (!found) {
      std::fprintf(stderr, "moss-fuzz: unknown target %s\n", MOSS_FUZZ_TARGET);
      std::abort();
    }
    return found;
  }();
  target(data, size);
  return 0;
}
