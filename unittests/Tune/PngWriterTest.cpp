//===- PngWriterTest.cpp - The tuner's PNG encoder and plot ---------------===//

#include "PngWriter.h"
#include "Plot.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace moss::tune;

namespace {
uint32_t bigEndian(const std::string &s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) |
         (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

struct Chunk {
  std::string type, data;
};

/// Splits a PNG into chunks, checking each CRC.
std::vector<Chunk> chunks(const std::string &png) {
  std::vector<Chunk> out;
  size_t at = 8;
  while (at + 12 <= png.size()) {
    uint32_t length = bigEndian(png, at);
    Chunk c{png.substr(at + 4, 4), png.substr(at + 8, length)};
    std::string body = png.substr(at + 4, 4 + length);
    EXPECT_EQ(
        bigEndian(png, at + 8 + length),
        crc32(reinterpret_cast<const uint8_t *>(body.data()), body.size()))
        << "CRC of chunk " << c.type;
    out.push_back(c);
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size());
  return out;
}

/// LSB-first bit reader over a deflate stream.
struct BitReader {
  const std::string &z;
  size_t bit = 0;
  uint32_t bits(int count) {
    uint32_t v = 0;
    for (int i = 0; i < count; ++i, ++bit)
      v |= uint32_t((uint8_t(z.at(bit / 8)) >> (bit % 8)) & 1) << i;
    return v;
  }
};

/// One symbol of the fixed literal/length code (codes read MSB first).
int fixedSymbol(BitReader &r) {
  uint32_t code = 0;
  for (int length = 1; length <= 9; ++length) {
    code = (code << 1) | r.bits(1);
    if (length == 7 && code <= 0x17)
      return 256 + int(code);
    if (length == 8 && code >= 0x30 && code <= 0xBF)
      return int(code) - 0x30;
    if (length == 8 && code >= 0xC0 && code <= 0xC7)
      return 280 + int(code) - 0xC0;
    if (length == 9 && code >= 0x190)
      return 144 + int(code) - 0x190;
  }
  ADD_FAILURE() << "invalid fixed code";
  return 256;
}

/// Inflates a zlib stream of stored and fixed-Huffman blocks (what a
/// minimal encoder may write; dynamic blocks fail the test).
std::vector<uint8_t> inflateZlib(const std::string &z) {
  static const int lengthBase[29] = {
      3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const int lengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
                                      1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                      4, 4, 4, 4, 5, 5, 5, 5, 0};
  static const int distanceBase[30] = {
      1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
      33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
      1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  EXPECT_EQ((uint8_t(z[0]) * 256 + uint8_t(z[1])) % 31, 0u) << "FCHECK";
  EXPECT_EQ(uint8_t(z[0]) & 0x0F, 8) << "CM = deflate";
  std::vector<uint8_t> out;
  BitReader r{z, 16};
  for (bool last = false; !last;) {
    last = r.bits(1);
    uint32_t type = r.bits(2);
    if (type == 0) {
      r.bit = (r.bit + 7) / 8 * 8;
      uint32_t len = r.bits(16), nlen = r.bits(16);
      EXPECT_EQ(uint16_t(~len), nlen);
      for (uint32_t i = 0; i < len; ++i)
        out.push_back(uint8_t(r.bits(8)));
      continue;
    }
    if (type != 1) {
      ADD_FAILURE() << "block type " << type;
      return out;
    }
    for (int symbol = fixedSymbol(r); symbol != 256; symbol = fixedSymbol(r)) {
      if (symbol < 256) {
        out.push_back(uint8_t(symbol));
        continue;
      }
      if (symbol > 285) {
        ADD_FAILURE() << "length symbol " << symbol;
        return out;
      }
      int l = symbol - 257;
      int length = lengthBase[l] + int(r.bits(lengthExtra[l]));
      uint32_t d = 0;
      for (int i = 0; i < 5; ++i)
        d = (d << 1) | r.bits(1);
      if (d > 29) {
        ADD_FAILURE() << "distance code " << d;
        return out;
      }
      int extra = d < 4 ? 0 : int(d / 2) - 1;
      size_t distance = distanceBase[d] + r.bits(extra);
      if (distance > out.size()) {
        ADD_FAILURE() << "distance " << distance << " before the start";
        return out;
      }
      for (int i = 0; i < length; ++i)
        out.push_back(out[out.size() - distance]);
    }
  }
  size_t at = (r.bit + 7) / 8;
  EXPECT_EQ(bigEndian(z, at), adler32(out.data(), out.size()));
  EXPECT_EQ(at + 4, z.size());
  return out;
}

/// Filter-0 scanlines of an RGB image, as a PNG stores them.
std::vector<uint8_t> scanlines(int width, int height,
                               const std::vector<uint8_t> &rgb) {
  std::vector<uint8_t> raw;
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + size_t(y) * 3 * width,
               rgb.begin() + size_t(y + 1) * 3 * width);
  }
  return raw;
}
} // namespace

TEST(PngWriter, KnownChecksums) {
  const char *text = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t *>(text), 9), 0xCBF43926u);
  const char *wiki = "Wikipedia";
  EXPECT_EQ(adler32(reinterpret_cast<const uint8_t *>(wiki), 9), 0x11E60398u);
}

TEST(PngWriter, ValidSignatureChunksAndPixels) {
  const int width = 3, height = 2;
  std::vector<uint8_t> rgb(width * height * 3);
  for (size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = uint8_t(i * 7);
  std::string png = encodePng(width, height, rgb);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::vector<Chunk> parts = chunks(png);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].type, "IHDR");
  EXPECT_EQ(bigEndian(parts[0].data, 0), uint32_t(width));
  EXPECT_EQ(bigEndian(parts[0].data, 4), uint32_t(height));
  EXPECT_EQ(parts[0].data.substr(8), std::string("\x08\x02\x00\x00\x00", 5));
  EXPECT_EQ(parts[1].type, "IDAT");
  EXPECT_EQ(parts[2].type, "IEND");
  std::vector<uint8_t> raw = inflateZlib(parts[1].data);
  ASSERT_EQ(raw.size(), size_t(height * (1 + 3 * width)));
  for (int y = 0; y < height; ++y) {
    EXPECT_EQ(raw[y * (1 + 3 * width)], 0) << "filter byte of row " << y;
    EXPECT_EQ(0, std::memcmp(&raw[y * (1 + 3 * width) + 1], &rgb[y * 3 * width],
                             3 * width));
  }
}

TEST(PngWriter, CompressedStreamsRoundTrip) {
  // Runs, repeated rows, long matches (258), far matches (a row of 3 * 4000
  // bytes back) and noise that matches nothing.
  std::mt19937 rng(7);
  const int width = 4000, height = 12;
  std::vector<uint8_t> rgb(size_t(width) * height * 3, 0xFF);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      uint8_t *p = &rgb[(size_t(y) * width + x) * 3];
      if (y % 3 == 1)
        p[0] = p[1] = p[2] = uint8_t(rng()); // noise row
      else if (x % 97 < 5)
        p[0] = uint8_t(x), p[2] = uint8_t(y); // sparse marks
    }
  std::vector<uint8_t> expected = scanlines(width, height, rgb);
  std::string z = zlibCompress(expected);
  EXPECT_TRUE(inflateZlib(z) == expected);
  EXPECT_LT(z.size(), expected.size() / 2) << "matches were found";

  for (const std::vector<uint8_t> &raw :
       {std::vector<uint8_t>{}, std::vector<uint8_t>{42},
        std::vector<uint8_t>{1, 2}, std::vector<uint8_t>(1000, 0)})
    EXPECT_TRUE(inflateZlib(zlibCompress(raw)) == raw) << raw.size();
}

TEST(PngWriter, PlotIsADecodablePngOfTwoColumns) {
  PlotPanel panel{
      "N=3072 K=768 gelu",
      {{"FALLBACK HOT", 40, 90, 200, {{1, 4.5}, {8, 4.6}, {64, 5.0}}},
       {"CHOSEN HOT", 210, 30, 30, {{1, 2.6}, {8, -1}, {64, 4.0}}}}};
  std::string png = renderPlotPng({panel, panel, panel});
  std::vector<Chunk> parts = chunks(png);
  ASSERT_EQ(parts.size(), 3u);
  uint32_t width = bigEndian(parts[0].data, 0),
           height = bigEndian(parts[0].data, 4);
  EXPECT_EQ(width, 2 * 640u);
  EXPECT_EQ(height, 2 * 440u);
  EXPECT_EQ(inflateZlib(parts[1].data).size(),
            size_t(height * (1 + 3 * width)));
  // Flat background and repeated rows: far below the 3.4 MB of scanlines.
  EXPECT_LT(parts[1].data.size(), size_t(height * (1 + 3 * width)) / 20);
}
