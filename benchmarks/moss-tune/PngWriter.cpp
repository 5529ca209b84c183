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

namespace {

/// Deflate's bit order: values LSB first, Huffman codes MSB first.
class BitWriter {
public:
  void bits(uint32_t value, int count) {
    pending |= uint64_t(value) << used;
    used += count;
    for (; used >= 8; used -= 8, pending >>= 8)
      out += static_cast<char>(pending & 0xFF);
  }
  void code(uint32_t value, int length) {
    uint32_t reversed = 0;
    for (int i = 0; i < length; ++i)
      reversed |= ((value >> i) & 1) << (length - 1 - i);
    bits(reversed, length);
  }
  std::string finish() {
    if (used > 0)
      out += static_cast<char>(pending & 0xFF);
    return std::move(out);
  }

private:
  std::string out;
  uint64_t pending = 0;
  int used = 0;
};

// RFC 1951, 3.2.5: lengths 3..258 (codes 257..285), distances 1..32768.
constexpr int kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                 15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr int kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                  2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr int kDistanceBase[30] = {
    1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr int kDistanceExtra[30] = {0, 0, 0,  0,  1,  1,  2,  2,  3,  3,
                                    4, 4, 5,  5,  6,  6,  7,  7,  8,  8,
                                    9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/// Symbol 0..287 in the fixed literal/length code (RFC 1951, 3.2.6).
void putSymbol(BitWriter &w, int symbol) {
  if (symbol < 144)
    w.code(0x30 + symbol, 8);
  else if (symbol < 256)
    w.code(0x190 + symbol - 144, 9);
  else if (symbol < 280)
    w.code(symbol - 256, 7);
  else
    w.code(0xC0 + symbol - 280, 8);
}

void putMatch(BitWriter &w, int length, int distance) {
  int l = 28;
  while (kLengthBase[l] > length)
    --l;
  putSymbol(w, 257 + l);
  w.bits(length - kLengthBase[l], kLengthExtra[l]);
  int d = 29;
  while (kDistanceBase[d] > distance)
    --d;
  w.code(d, 5); // fixed distance codes are 5 bits
  w.bits(distance - kDistanceBase[d], kDistanceExtra[d]);
}

} // namespace

std::string zlibCompress(const std::vector<uint8_t> &raw) {
  constexpr size_t kWindow = 32768, kMinMatch = 3, kMaxMatch = 258;
  constexpr int kMaxCandidates = 32, kHashBits = 15;
  const size_t n = raw.size();
  std::vector<int32_t> head(size_t(1) << kHashBits, -1);
  std::vector<int32_t> previous(n, -1);
  auto hashAt = [&](size_t i) {
    uint32_t v =
        uint32_t(raw[i]) << 16 | uint32_t(raw[i + 1]) << 8 | raw[i + 2];
    return (v * 2654435761u) >> (32 - kHashBits);
  };
  auto insert = [&](size_t i) {
    if (i + kMinMatch > n)
      return;
    uint32_t h = hashAt(i);
    previous[i] = head[h];
    head[h] = static_cast<int32_t>(i);
  };

  BitWriter w;
  w.bits(1, 1); // BFINAL: one block
  w.bits(1, 2); // BTYPE = 01, fixed Huffman codes
  for (size_t i = 0; i < n;) {
    size_t bestLength = 0, bestDistance = 0;
    if (i + kMinMatch <= n) {
      const size_t limit = std::min(kMaxMatch, n - i);
      int32_t candidate = head[hashAt(i)];
      for (int tries = 0; candidate >= 0 && tries < kMaxCandidates &&
                          i - size_t(candidate) <= kWindow;
           ++tries, candidate = previous[candidate]) {
        size_t length = 0;
        while (length < limit && raw[candidate + length] == raw[i + length])
          ++length;
        if (length > bestLength) {
          bestLength = length;
          bestDistance = i - size_t(candidate);
          if (length == limit)
            break;
        }
      }
    }
    if (bestLength >= kMinMatch) {
      putMatch(w, static_cast<int>(bestLength), static_cast<int>(bestDistance));
      for (size_t j = 0; j < bestLength; ++j)
        insert(i + j);
      i += bestLength;
    } else {
      putSymbol(w, raw[i]);
      insert(i);
      ++i;
    }
  }
  putSymbol(w, 256); // end of block

  std::string out;
  out += static_cast<char>(0x78); // deflate, 32 KiB window
  out += static_cast<char>(0x01); // no dictionary; (0x78*256+1) % 31 == 0
  out += w.finish();
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
  putChunk(png, "IDAT", zlibCompress(raw));
  putChunk(png, "IEND", "");
  return png;
}

} // namespace moss::tune
