//===- FuzzInput.h - What the fuzz targets share ----------------*- C++ -*-===//
//
// The property check that aborts (so libFuzzer keeps the input and the
// replay test fails) and the readers that turn fuzz bytes into integers.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_FUZZ_FUZZINPUT_H
#define MOSS_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace moss::fuzz {

/// A property that must hold for every input; abort() so that libFuzzer
/// saves the input and the replay tool's test fails.
[[noreturn]] inline void violated(const char *what, const std::string &detail) {
  std::fprintf(stderr, "moss-fuzz: property violated: %s\n%s\n", what,
               detail.c_str());
  std::abort();
}

#define MOSS_FUZZ_CHECK(cond, detail)                                          \
  do {                                                                         \
    if (!(cond))                                                               \
      ::moss::fuzz::violated(#cond, detail);                                   \
  } while (false)

/// Errors start with the name given for messages (a file, a call), so a user
/// sees where, and say more than that name.
inline void checkError(const std::string &err, const std::string &source) {
  MOSS_FUZZ_CHECK(err.size() > source.size() + 2, err);
  MOSS_FUZZ_CHECK(err.compare(0, source.size(), source) == 0, err);
}

/// Reads an int64 from the next 8 bytes (zero-padded at the end).
inline int64_t takeInt(const uint8_t *&data, size_t &size) {
  uint64_t bits = 0;
  size_t n = size < 8 ? size : 8;
  std::memcpy(&bits, data, n);
  data += n;
  size -= n;
  return static_cast<int64_t>(bits);
}

/// Small sizes most of the time, so the rules' inner branches are reached;
/// any 64-bit value otherwise.
inline int64_t takeSize(const uint8_t *&data, size_t &size) {
  int64_t raw = takeInt(data, size);
  uint64_t bits = static_cast<uint64_t>(raw);
  switch (bits & 3) {
  case 0:
    return static_cast<int64_t>(bits >> 2) % 1100 - 2;
  case 1:
    return int64_t(1) << ((bits >> 2) % 63);
  default:
    return raw;
  }
}

} // namespace moss::fuzz

#endif // MOSS_FUZZ_FUZZINPUT_H
