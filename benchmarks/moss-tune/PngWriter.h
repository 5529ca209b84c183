//===- PngWriter.h - Minimal PNG encoder (no zlib dependency) --*- C++ -*-===//
//
// 8-bit RGB, no interlace, filter 0 on every row; the zlib stream is one
// deflate block with the fixed Huffman codes and greedy LZ77 matches (hash
// chains, 32 KiB window), written here so the tuner needs no zlib. A plot's
// flat background and repeated rows shrink it about 65x (a 1280 x 880 plot:
// 3.4 MB of scanlines, about 50 KB).
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

/// A zlib stream (RFC 1950) of `raw`: one fixed-Huffman deflate block
/// (RFC 1951) with LZ77 matches of length 3..258 at distances up to 32768.
std::string zlibCompress(const std::vector<uint8_t> &raw);

/// PNG bytes of a width x height image, `rgb` row-major, 3 bytes a pixel.
std::string encodePng(int width, int height, const std::vector<uint8_t> &rgb);

} // namespace moss::tune

#endif // MOSS_TUNE_PNGWRITER_H
