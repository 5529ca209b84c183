//===- Sha256Test.cpp - FIPS 180-4 test vectors ---------------------------===//

#include "moss/Config/Sha256.h"

#include "ScratchDir.h"
#include "moss/Config/FileUtil.h"

#include <gtest/gtest.h>

using namespace moss::config;

namespace {

const char *kMillionA =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256Test, EmptyInput) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, Abc) {
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, FourHundredFortyEightBitMessage) {
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, EightHundredNinetySixBitMessage) {
  EXPECT_EQ(
      sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklm"
                "noijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256Test, OneMillionA) {
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')), kMillionA);
}

TEST(Sha256Test, IncrementalUpdatesInOddChunksMatchOneShot) {
  // Chunk sizes that straddle the 64-byte block boundary in every way.
  Sha256 hasher;
  size_t fed = 0, chunk = 1;
  while (fed < 1000000) {
    size_t size = std::min(chunk, size_t(1000000) - fed);
    hasher.update(std::string(size, 'a'));
    fed += size;
    chunk = chunk % 131 + 7;
  }
  EXPECT_EQ(hasher.finishHex(), kMillionA);
}

TEST(Sha256Test, PaddingBoundaryLengths) {
  // 55/56/63/64 bytes are where the length field moves to a second block;
  // compare one-shot against byte-by-byte hashing.
  for (size_t length : {55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u}) {
    std::string message(length, 'x');
    Sha256 byteByByte;
    for (char c : message)
      byteByByte.update(std::string_view(&c, 1));
    EXPECT_EQ(byteByByte.finishHex(), sha256Hex(message)) << length;
  }
  EXPECT_EQ(sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(Sha256Test, FileDigestMatchesBytes) {
  unittest::ScratchDir dir;
  std::string bytes("binary\0with\0nuls\n", 17);
  std::string err, hex;
  ASSERT_TRUE(writeFileAtomic(dir.file("blob"), bytes, err)) << err;
  ASSERT_TRUE(sha256File(dir.file("blob"), hex, err)) << err;
  EXPECT_EQ(hex, sha256Hex(bytes));
}

TEST(Sha256Test, MissingFileReportsPath) {
  std::string err, hex = "unchanged";
  EXPECT_FALSE(sha256File("/nonexistent/moss/file.bin", hex, err));
  EXPECT_NE(err.find("/nonexistent/moss/file.bin"), std::string::npos) << err;
  EXPECT_EQ(hex, "unchanged");
}

TEST(Sha256Test, FileDigestSpansReadChunks) {
  unittest::ScratchDir dir;
  std::string bytes(2 * 65536 + 3, 'q');
  bytes[65535] = '\n'; // a chunk boundary the hasher must carry across
  std::string err, hex;
  ASSERT_TRUE(writeFileAtomic(dir.file("big"), bytes, err)) << err;
  ASSERT_TRUE(sha256File(dir.file("big"), hex, err)) << err;
  EXPECT_EQ(hex, sha256Hex(bytes));
}

TEST(Sha256Test, DirectoryIsRefused) {
  unittest::ScratchDir dir;
  std::string err, hex = "unchanged";
  EXPECT_FALSE(sha256File(dir.path, hex, err));
  EXPECT_NE(err.find(dir.path + ": is a directory"), std::string::npos) << err;
  EXPECT_EQ(hex, "unchanged");
}

TEST(Sha256Test, IsSha256Hex) {
  EXPECT_TRUE(isSha256Hex(sha256Hex("abc")));
  EXPECT_FALSE(isSha256Hex(""));
  EXPECT_FALSE(isSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(isSha256Hex(std::string(64, 'A')));
  EXPECT_FALSE(isSha256Hex(std::string(64, 'g')));
}

} // namespace
