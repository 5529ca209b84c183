//===- FileUtilTest.cpp - readFile / writeFileAtomic ----------------------===//

#include "moss/Config/FileUtil.h"

#include "ScratchDir.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <vector>

using namespace moss::config;

namespace {

TEST(FileUtilTest, RoundTripKeepsExactBytes) {
  unittest::ScratchDir dir;
  std::string bytes("line\r\n\0\xff tail", 13);
  std::string err, readBack;
  ASSERT_TRUE(writeFileAtomic(dir.file("a.bin"), bytes, err)) << err;
  ASSERT_TRUE(readFile(dir.file("a.bin"), readBack, err)) << err;
  EXPECT_EQ(readBack, bytes);
}

TEST(FileUtilTest, OverwritesAndLeavesNoTemporaryFile) {
  unittest::ScratchDir dir;
  std::string err, readBack;
  ASSERT_TRUE(writeFileAtomic(dir.file("a.txt"), "first, longer", err)) << err;
  ASSERT_TRUE(writeFileAtomic(dir.file("a.txt"), "second", err)) << err;
  ASSERT_TRUE(readFile(dir.file("a.txt"), readBack, err)) << err;
  EXPECT_EQ(readBack, "second");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"a.txt"});
}

TEST(FileUtilTest, EmptyFile) {
  unittest::ScratchDir dir;
  std::string err, readBack = "not empty";
  ASSERT_TRUE(writeFileAtomic(dir.file("empty"), "", err)) << err;
  ASSERT_TRUE(readFile(dir.file("empty"), readBack, err)) << err;
  EXPECT_EQ(readBack, "");
}

TEST(FileUtilTest, WriteIntoMissingDirectoryFails) {
  unittest::ScratchDir dir;
  std::string err;
  std::string path = dir.file("missing/a.txt");
  EXPECT_FALSE(writeFileAtomic(path, "x", err));
  EXPECT_NE(err.find(path + ".tmp."), std::string::npos) << err;
  EXPECT_NE(err.find("cannot create temporary file"), std::string::npos) << err;
}

TEST(FileUtilTest, ReadMissingFileNamesPath) {
  std::string err, bytes = "unchanged";
  EXPECT_FALSE(readFile("/nonexistent/moss.json", bytes, err));
  EXPECT_NE(err.find("/nonexistent/moss.json: cannot open for reading"),
            std::string::npos)
      << err;
  EXPECT_EQ(bytes, "unchanged");
}

TEST(FileUtilTest, ChunksCoverLargeFileInOrder) {
  unittest::ScratchDir dir;
  // Three full 64 KiB reads and a tail, in a pattern that shows a chunk
  // dropped, repeated or out of order.
  std::string bytes(3 * 65536 + 77, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = char((i * 131) >> 7);
  std::string err, joined;
  ASSERT_TRUE(writeFileAtomic(dir.file("big"), bytes, err)) << err;
  std::vector<size_t> sizes;
  ASSERT_TRUE(forEachFileChunk(
      dir.file("big"),
      [&](std::string_view chunk) {
        sizes.push_back(chunk.size());
        joined.append(chunk);
      },
      err))
      << err;
  EXPECT_EQ(joined, bytes);
  ASSERT_GE(sizes.size(), 4u);
  for (size_t size : sizes)
    EXPECT_LE(size, 65536u);
  std::string whole;
  ASSERT_TRUE(readFile(dir.file("big"), whole, err)) << err;
  EXPECT_EQ(whole, bytes);
}

TEST(FileUtilTest, ReadDirectoryFails) {
  unittest::ScratchDir dir;
  std::string err, bytes;
  EXPECT_FALSE(readFile(dir.path, bytes, err));
  EXPECT_NE(err.find(dir.path + ": is a directory"), std::string::npos) << err;
  bool called = false;
  EXPECT_FALSE(forEachFileChunk(
      dir.path, [&](std::string_view) { called = true; }, err));
  EXPECT_NE(err.find(dir.path + ": is a directory"), std::string::npos) << err;
  EXPECT_FALSE(called);
}

TEST(FileUtilTest, ReadRegularFileRefusesSymlinkAndReadsFile) {
  unittest::ScratchDir dir;
  std::string err, bytes;
  ASSERT_TRUE(writeFileAtomic(dir.file("real.bin"), "kernel", err)) << err;
  ASSERT_EQ(
      ::symlink(dir.file("real.bin").c_str(), dir.file("link.bin").c_str()), 0);
  ASSERT_TRUE(readRegularFile(dir.file("real.bin"), bytes, err)) << err;
  EXPECT_EQ(bytes, "kernel");
  EXPECT_FALSE(readRegularFile(dir.file("link.bin"), bytes, err));
  EXPECT_NE(err.find(dir.file("link.bin") + ": is a symbolic link"),
            std::string::npos)
      << err;
  // readFile, for whitelists a user may link to, still follows the link.
  ASSERT_TRUE(readFile(dir.file("link.bin"), bytes, err)) << err;
  EXPECT_EQ(bytes, "kernel");
}

} // namespace
