//===- PngWriter.cpp - Minimal PNG encoder (no zlib dependency) -----------===//

#include "PngWriter.h"

#include <algorithm>
#include <array>

namespace moss::tune {

namespace {
std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

void putBigEndian(std::string &out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out += static_cast<char>((v >> shift) & 0xFF);
}

/// Length, type, data, CRC over type and data.
void putChunk(std::string &out, const char type[4], const std::string &data) {
  putBigEndian(out, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  out += body;
  putBigEndian(
      out, crc32(reinterpret_cast<const uint8_t *>(body.data()), body.size()));
}
} // namespace

uint32_t crc32(const uint8_t *data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = makeCrcTable();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t adler32(const uint8_t *data, size_t size) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < size; ++i) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string zlibStored(const std::vector<uint8_t> &raw) {
  std::string out;
  out += static_cast<char>(0x78); // deflate, 32 KiB window
  out += static_cast<char>(0x01); // no dictionary; (0x78*256+1) % 31 == 0
  size_t pos = 0;
  do {
    size_t len = std::min<size_t>(65535, raw.size() - pos);
    bool last = pos + len == raw.size();
    out += static_cast<char>(last ? 1 : 0); // BFINAL, BTYPE = 00 (stored)
    out += static_cast<char>(len & 0xFF);
    out += static_cast<char>(len >> 8);
    out += static_cast<char>(~len & 0xFF);
    out += static_cast<char>((~len >> 8) & 0xFF);
    out.append(reinterpret_cast<const char *>(raw.data()) + pos, len);
    pos += len;
  } while (pos < raw.size());
  putBigEndian(out, adler32(raw.data(), raw.size()));
  return out;
}

std::string encodePng(int width, int height, const std::vector<uint8_t> &rgb) {
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(height) * (1 + 3 * width));
  for (int y = 0; y < height; ++y) {
    raw.push_back(0); // filter: none
    raw.insert(raw.end(), rgb.begin() + static_cast<size_t>(y) * 3 * width,
               rgb.begin() + static_cast<size_t>(y + 1) * 3 * width);
  }
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string header;
  putBigEndian(header, width);
  putBigEndian(header, height);
  header += std::string("\x08\x02\x00\x00\x00", 5); // 8-bit RGB
  putChunk(png, "IHDR", header);
  putChunk(png, "IDAT", zlibStored(raw));
  putChunk(png, "IEND", "");
  return png;
}

} // namespace moss::tune
