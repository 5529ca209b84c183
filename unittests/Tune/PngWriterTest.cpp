//===- PngWriterTest.cpp - The tuner's PNG encoder and plot ---------------===//

#include "PngWriter.h"
#include "Plot.h"

#include <gtest/gtest.h>

#include <cstring>

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

/// Inflates a zlib stream made of stored blocks only.
std::vector<uint8_t> inflateStored(const std::string &z) {
  EXPECT_EQ((uint8_t(z[0]) * 256 + uint8_t(z[1])) % 31, 0u) << "FCHECK";
  EXPECT_EQ(uint8_t(z[0]) & 0x0F, 8) << "CM = deflate";
  std::vector<uint8_t> out;
  size_t at = 2;
  bool last = false;
  while (!last) {
    uint8_t header = uint8_t(z.at(at));
    last = header & 1;
    EXPECT_EQ((header >> 1) & 3, 0) << "stored block";
    uint16_t len = uint8_t(z[at + 1]) | (uint8_t(z[at + 2]) << 8);
    uint16_t nlen = uint8_t(z[at + 3]) | (uint8_t(z[at + 4]) << 8);
    EXPECT_EQ(uint16_t(~len), nlen);
    out.insert(out.end(), z.begin() + at + 5, z.begin() + at + 5 + len);
    at += 5 + len;
  }
  EXPECT_EQ(bigEndian(z, at), adler32(out.data(), out.size()));
  EXPECT_EQ(at + 4, z.size());
  return out;
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
  std::vector<uint8_t> raw = inflateStored(parts[1].data);
  ASSERT_EQ(raw.size(), size_t(height * (1 + 3 * width)));
  for (int y = 0; y < height; ++y) {
    EXPECT_EQ(raw[y * (1 + 3 * width)], 0) << "filter byte of row " << y;
    EXPECT_EQ(0, std::memcmp(&raw[y * (1 + 3 * width) + 1], &rgb[y * 3 * width],
                             3 * width));
  }
}

TEST(PngWriter, LargeImagesSpanSeveralStoredBlocks) {
  const int width = 200, height = 150; // 90150 bytes of scanlines
  std::vector<uint8_t> rgb(width * height * 3, 0x5A);
  std::vector<Chunk> parts = chunks(encodePng(width, height, rgb));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(inflateStored(parts[1].data).size(),
            size_t(height * (1 + 3 * width)));
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
  EXPECT_EQ(inflateStored(parts[1].data).size(),
            size_t(height * (1 + 3 * width)));
}
