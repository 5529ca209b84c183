//===- Sha256.h - Self-contained SHA-256 (FIPS 180-4) ----------*- C++ -*-===//
//
// Used for the whitelist digest, the cache key and cubin digests. No
// dependencies so that both the compiler and the runtime can use it.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_CONFIG_SHA256_H
#define MOSS_CONFIG_SHA256_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace moss::config {

/// Incremental SHA-256. Feed bytes with update(), then call finish() once.
class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(std::string_view bytes);
  /// Pads, returns the digest. The object must not be used afterwards.
  Digest finish();
  /// finish() as 64 lower-case hex characters.
  std::string finishHex();

private:
  void compressBlock(const uint8_t *block);

  std::array<uint32_t, 8> state;
  std::array<uint8_t, 64> buffer;
  size_t bufferSize = 0;
  uint64_t totalBytes = 0;
};

/// Lower-case hex of a digest (or any bytes).
std::string toHex(const uint8_t *bytes, size_t size);

/// SHA-256 of `bytes` as 64 lower-case hex characters.
std::string sha256Hex(std::string_view bytes);

/// SHA-256 of the file's contents. Returns false with `err` set (naming the
/// path and the OS error) when the file cannot be read.
bool sha256File(const std::string &path, std::string &hexOut, std::string &err);

/// True when `text` is exactly 64 lower-case hex characters.
bool isSha256Hex(std::string_view text);

} // namespace moss::config

#endif // MOSS_CONFIG_SHA256_H
