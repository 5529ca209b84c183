//===- PngWriter.h - Minimal PNG encoder (no zlib dependency) --*- C++ -*-===//
//
// 8-bit RGB, no interlace, filter 0 on every row; the zlib stream uses stored
// (uncompressed) blocks, so only CRC-32 and Adler-32 are needed. Plots are
// small; size does not matter, self-containment does.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TUNE_PNGWRITER_H
#define MOSS_TUNE_PNGWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace moss::tune {

uint32_t crc32(const uint8_t *data, size_t size, uint32_t crc = 0);
uint32_t adler32(const uint8_t *data, size_t size);

/// A zlib stream (RFC 1950) of `raw` in stored deflate blocks.
std::string zlibStored(const std::vector<uint8_t> &raw);

/// PNG bytes of a width x height image, `rgb` row-major, 3 bytes a pixel.
std::string encodePng(int width, int height, const std::vector<uint8_t> &rgb);

} // namespace moss::tune

#endif // MOSS_TUNE_PNGWRITER_H
