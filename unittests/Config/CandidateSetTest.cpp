//===- CandidateSetTest.cpp - Tile candidates of the offline tuner --------===//
//
// Key lists, tile enumeration (pruned by the whitelist's own validator),
// round assignment and candidates.json (round trip, every malformed file,
// atomic write).
//
//===----------------------------------------------------------------------===//

#include "moss/Config/CandidateSet.h"

#include "moss/Config/FileUtil.h"

#include "ScratchDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace moss::config;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

bool operator==(const GemmKey &a, const GemmKey &b) {
  return std::tie(a.m, a.n, a.k, a.mode) == std::tie(b.m, b.n, b.k, b.mode);
}

bool sameTile(const GemmTile &a, const GemmTile &b) {
  return std::tie(a.bm, a.bn, a.bk, a.split) ==
         std::tie(b.bm, b.bn, b.bk, b.split);
}

std::string tileText(const GemmTile &t) {
  return "[" + std::to_string(t.bm) + "," + std::to_string(t.bn) + "," +
         std::to_string(t.bk) + "," + std::to_string(t.split) + "]";
}

//===--- parseKeyList ----------------------------------------------------===//

struct ParsedKeys {
  bool ok = false;
  std::vector<GemmKey> keys;
  std::vector<std::string> texts;
  std::string err;
};

ParsedKeys parseKeys(std::string_view text, const std::string &source = "in") {
  ParsedKeys out;
  out.ok = parseKeyList(text, source, out.keys, out.texts, out.err);
  return out;
}

/// Parses expecting failure; the outputs must stay untouched.
std::string keyListError(std::string_view text) {
  std::vector<GemmKey> keys = {{7, 7, 7, 0}};
  std::vector<std::string> texts = {"sentinel"};
  std::string err;
  EXPECT_FALSE(parseKeyList(text, "keys.txt", keys, texts, err))
      << "parsed without error: " << text;
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(texts, std::vector<std::string>{"sentinel"});
  return err;
}

TEST(CandidateKeyListTest, InlineWithSpacesAndSemicolons) {
  ParsedKeys p = parseKeys("1,3072,768,1 8,3072,768,1;16,768,3072,2\t"
                           " ;; 4,768,768,0;");
  ASSERT_TRUE(p.ok) << p.err;
  EXPECT_EQ(p.texts,
            (std::vector<std::string>{"1,3072,768,1", "8,3072,768,1",
                                      "16,768,3072,2", "4,768,768,0"}));
  ASSERT_EQ(p.keys.size(), 4u);
  EXPECT_TRUE((p.keys[0] == GemmKey{1, 3072, 768, 1}));
  EXPECT_TRUE((p.keys[1] == GemmKey{8, 3072, 768, 1}));
  EXPECT_TRUE((p.keys[2] == GemmKey{16, 768, 3072, 2}));
  EXPECT_TRUE((p.keys[3] == GemmKey{4, 768, 768, 0}));
}

TEST(CandidateKeyListTest, FileWithCommentsAndCrLf) {
  ParsedKeys p = parseKeys("# keys of the decoder\r\n"
                           "1,3072,768,1   # gelu, one frame\r\n"
                           "\n"
                           "#16,768,3072,2 commented out\n"
                           "  8,3072,768,1#comment right after the key\n"
                           "# last line without a new line");
  ASSERT_TRUE(p.ok) << p.err;
  EXPECT_EQ(p.texts,
            (std::vector<std::string>{"1,3072,768,1", "8,3072,768,1"}));
  ASSERT_EQ(p.keys.size(), 2u);
  EXPECT_TRUE((p.keys[1] == GemmKey{8, 3072, 768, 1}));
}

TEST(CandidateKeyListTest, MalformedKeyNamesSourceKeyAndReason) {
  std::string err = keyListError("1,3072,768,1 8,3072,768");
  EXPECT_EQ(err.rfind("keys.txt: key \"8,3072,768\": ", 0), 0u) << err;
  EXPECT_CONTAINS(err, "expected four comma-separated integers");
  EXPECT_CONTAINS(err, "found 3 fields");
}

TEST(CandidateKeyListTest, KeyWithTooManyFields) {
  std::string err = keyListError("1,3072,768,1,0");
  EXPECT_CONTAINS(err, "keys.txt: key \"1,3072,768,1,0\": ");
  EXPECT_CONTAINS(err, "found 5 fields");
}

TEST(CandidateKeyListTest, NonNumericField) {
  std::string err = keyListError("1,30x2,768,1");
  EXPECT_CONTAINS(err, "keys.txt: key \"1,30x2,768,1\": ");
}

TEST(CandidateKeyListTest, ZeroRows) {
  std::string err = keyListError("0,3072,768,1");
  EXPECT_CONTAINS(err, "keys.txt: key \"0,3072,768,1\": ");
  EXPECT_CONTAINS(err, "must be >= 1");
}

TEST(CandidateKeyListTest, UnknownMode) {
  std::string err = keyListError("1,3072,768,1\n4,768,3072,6\n");
  EXPECT_CONTAINS(err, "keys.txt: key \"4,768,3072,6\": ");
  EXPECT_CONTAINS(err, "mode 6 is unknown");
}

TEST(CandidateKeyListTest, DuplicateKey) {
  std::string err = keyListError("1,3072,768,1; 8,3072,768,1\n1,3072,768,1");
  EXPECT_EQ(err, "keys.txt: key \"1,3072,768,1\" is listed twice");
}

TEST(CandidateKeyListTest, EmptyList) {
  for (std::string_view text :
       {std::string_view(""), std::string_view("  ;\n;\t"),
        std::string_view("# only a comment\n# and another")}) {
    std::string err = keyListError(text);
    EXPECT_EQ(err.rfind("keys.txt: no keys", 0), 0u) << err;
    EXPECT_CONTAINS(err, "M,N,K,mode");
  }
}

//===--- enumerateCandidateTiles ------------------------------------------===//

/// What the whitelist validator says of `tile` for `key`.
bool validatorAccepts(const GemmKey &key, const GemmTile &tile) {
  std::string reason;
  return checkTileLegal(key.n, key.k, key.mode, tile, reason);
}

int64_t bmCapOf(int64_t m) {
  int64_t cap = 8;
  while (cap < m)
    cap *= 2;
  return cap;
}

/// Every combination of `space`, in enumeration order.
std::vector<GemmTile> allTiles(const TileSpace &space) {
  std::vector<GemmTile> tiles;
  for (int64_t bm : space.bm)
    for (int64_t bn : space.bn)
      for (int64_t bk : space.bk)
        for (int64_t split : space.split)
          tiles.push_back({bm, bn, bk, split});
  return tiles;
}

/// The space includes sizes the validator refuses outright (bn 48, bk 512,
/// split 3, bm 128) and sizes it refuses for some keys only.
TileSpace wideSpace() {
  TileSpace space;
  space.bm = {8, 16, 32, 64, 128};
  space.bn = {16, 32, 48, 64, 128, 256};
  space.bk = {32, 64, 128, 256, 512};
  space.split = {1, 2, 3, 4, 8};
  return space;
}

/// The copy stages of a legal tile: what bk decides in a kernel.
int64_t stagesOf(const GemmKey &key, const GemmTile &tile) {
  GemmLaunch launch;
  std::string reason;
  EXPECT_TRUE(deriveGemmLaunch(key.n, key.k, key.mode, tile, launch, reason))
      << reason;
  return launch.stages;
}

/// `tiles` less those that repeat an earlier tile's kernel: the same bm, bn
/// and split with as many copy stages (an oracle apart from sameGemmKernel,
/// which compares whole launches).
std::vector<GemmTile> onePerKernel(const GemmKey &key,
                                   const std::vector<GemmTile> &tiles) {
  std::vector<GemmTile> kept;
  for (const GemmTile &t : tiles) {
    bool repeat = std::any_of(kept.begin(), kept.end(), [&](const GemmTile &u) {
      return u.bm == t.bm && u.bn == t.bn && u.split == t.split &&
             stagesOf(key, u) == stagesOf(key, t);
    });
    if (!repeat)
      kept.push_back(t);
  }
  return kept;
}

TEST(CandidateTilesTest, ExactlyTheTilesTheValidatorAcceptsOnePerKernel) {
  const GemmKey keys[] = {{1, 3072, 768, 1},    {8, 3072, 768, 1},
                          {16, 768, 3072, 2},   {30, 768, 3072, 2},
                          {64, 768, 768, 0},    {1000, 1536, 768, 0},
                          {65536, 3072, 768, 1}};
  TileSpace space = wideSpace();
  for (const GemmKey &key : keys) {
    SCOPED_TRACE("key M=" + std::to_string(key.m) +
                 " N=" + std::to_string(key.n) + " K=" + std::to_string(key.k));
    std::vector<GemmTile> accepted;
    for (const GemmTile &t : allTiles(space))
      if (t.bm <= bmCapOf(key.m) && validatorAccepts(key, t))
        accepted.push_back(t);
    std::vector<GemmTile> expected = onePerKernel(key, accepted);
    std::vector<GemmTile> got = enumerateCandidateTiles(key, space);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(sameTile(got[i], expected[i]))
          << i << ": " << tileText(got[i]) << " vs " << tileText(expected[i]);
    EXPECT_FALSE(got.empty());
    for (const GemmTile &t : got) {
      EXPECT_TRUE(validatorAccepts(key, t)) << tileText(t);
      EXPECT_NE(t.bn, 48);
      EXPECT_NE(t.bk, 512);
      EXPECT_NE(t.split, 3);
      EXPECT_NE(t.bm, 128);
    }
  }
}

TEST(CandidateTilesTest, DeriveGemmLaunchRefusalsNeverAppear) {
  // K = 768: bk*split must divide 768 and not exceed it, so bk 256 with
  // split 4 (1024) is refused, and split 2 with bk 256 (512, 768 % 512 != 0)
  // too; K = 3072 keeps both.
  GemmKey small{8, 3072, 768, 1}, large{8, 768, 3072, 2};
  auto has = [](const std::vector<GemmTile> &tiles, GemmTile t) {
    return std::any_of(tiles.begin(), tiles.end(),
                       [&](const GemmTile &u) { return sameTile(t, u); });
  };
  TileSpace space;
  std::vector<GemmTile> smallTiles = enumerateCandidateTiles(small, space);
  std::vector<GemmTile> largeTiles = enumerateCandidateTiles(large, space);
  EXPECT_FALSE(has(smallTiles, {8, 32, 256, 4}));
  EXPECT_FALSE(has(smallTiles, {8, 32, 256, 2}));
  EXPECT_TRUE(has(smallTiles, {8, 32, 256, 1}));
  EXPECT_TRUE(has(largeTiles, {8, 32, 256, 4}));
  EXPECT_TRUE(has(largeTiles, {8, 32, 128, 2}));
  // N = 768 is a multiple of bn 256; N = 100 of none but 4.
  EXPECT_TRUE(enumerateCandidateTiles({8, 100, 768, 0}, space).empty());
}

TEST(CandidateTilesTest, TilesOfOneKernelAppearOnce) {
  // K = 1280, split 1: bk 64, 128 and 256 all copy the slice in 5 stages of
  // 256, bk 32 in 8 stages of 160. K = 768: bk 64 and 128 give 6 stages of
  // 128, bk 32 8 of 96, bk 256 3 of 256. The first bk of a kernel stands for
  // it.
  auto has = [](const std::vector<GemmTile> &tiles, GemmTile t) {
    return std::any_of(tiles.begin(), tiles.end(),
                       [&](const GemmTile &u) { return sameTile(t, u); });
  };
  TileSpace space;
  space.bm = {8};
  space.bn = {64};
  space.split = {1};
  GemmKey wide{8, 5120, 1280, 1}, narrow{8, 3072, 768, 1};
  std::vector<GemmTile> wideTiles = enumerateCandidateTiles(wide, space);
  ASSERT_EQ(wideTiles.size(), 2u);
  EXPECT_TRUE(sameTile(wideTiles[0], {8, 64, 32, 1}));
  EXPECT_TRUE(sameTile(wideTiles[1], {8, 64, 64, 1}));
  EXPECT_TRUE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 64, 64, 1},
                             {8, 64, 256, 1}));
  EXPECT_FALSE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 64, 32, 1},
                              {8, 64, 64, 1}));
  std::vector<GemmTile> narrowTiles = enumerateCandidateTiles(narrow, space);
  EXPECT_EQ(narrowTiles.size(), 3u);
  EXPECT_TRUE(has(narrowTiles, {8, 64, 64, 1}));
  EXPECT_FALSE(has(narrowTiles, {8, 64, 128, 1}));
  EXPECT_TRUE(has(narrowTiles, {8, 64, 256, 1}));
  // Another bm, bn or split is another kernel, whatever the stages; an
  // illegal tile is no kernel.
  EXPECT_FALSE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 64, 64, 1},
                              {16, 64, 64, 1}));
  EXPECT_FALSE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 64, 64, 1},
                              {8, 32, 64, 1}));
  EXPECT_FALSE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 64, 64, 2},
                              {8, 64, 64, 1}));
  EXPECT_FALSE(sameGemmKernel(wide.n, wide.k, wide.mode, {8, 48, 64, 1},
                              {8, 48, 64, 1}));
}

TEST(CandidateTilesTest, SplitsBeyondOneClusterNeverAppear) {
  // A split-K tile's CTAs form one cluster of at most kGemmMaxSplit CTAs.
  GemmKey key{8, 3072, 3072, 1};
  TileSpace space;
  space.bm = {8};
  space.bn = {16};
  space.bk = {32};
  space.split = {1, 2, 4, 8, 16};
  std::string reason;
  ASSERT_FALSE(checkTileLegal(key.n, key.k, key.mode, {8, 16, 32, 16}, reason));
  EXPECT_NE(reason.find("cluster"), std::string::npos) << reason;
  std::vector<GemmTile> tiles = enumerateCandidateTiles(key, space);
  ASSERT_EQ(tiles.size(), 4u);
  EXPECT_TRUE(sameTile(tiles.back(), {8, 16, 32, 8}));
}

TEST(CandidateTilesTest, BmCappedAtMRoundedUpToPowerOfTwo) {
  TileSpace space;
  const std::pair<int64_t, int64_t> capOfM[] = {
      {1, 8}, {7, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {33, 64}, {64, 64}};
  for (const auto &[m, cap] : capOfM) {
    std::set<int64_t> bms;
    for (const GemmTile &t : enumerateCandidateTiles({m, 3072, 768, 1}, space))
      bms.insert(t.bm);
    std::set<int64_t> expected;
    for (int64_t bm : space.bm)
      if (bm <= cap)
        expected.insert(bm);
    EXPECT_EQ(bms, expected) << "M = " << m;
  }
  // A taller M keeps every bm of the space.
  std::set<int64_t> bms;
  for (const GemmTile &t : enumerateCandidateTiles({1000, 3072, 768, 1}, space))
    bms.insert(t.bm);
  EXPECT_EQ(bms, (std::set<int64_t>{8, 16, 32, 64}));
}

TEST(CandidateTilesTest, NarrowedSpaceIsTheMatchingSubset) {
  // What --tile-bm 8,16 --tile-bn 32 --tile-bk 64,256 --tile-split 1,4 give.
  TileSpace narrow;
  narrow.bm = {8, 16};
  narrow.bn = {32};
  narrow.bk = {64, 256};
  narrow.split = {1, 4};
  auto inNarrow = [&](const GemmTile &t) {
    auto in = [](const std::vector<int64_t> &v, int64_t x) {
      return std::find(v.begin(), v.end(), x) != v.end();
    };
    return in(narrow.bm, t.bm) && in(narrow.bn, t.bn) && in(narrow.bk, t.bk) &&
           in(narrow.split, t.split);
  };
  // (One per kernel of the narrowed space: a full space may keep another bk
  // of the same kernel, one the narrowed space lacks.)
  for (GemmKey key : {GemmKey{1, 3072, 768, 1}, GemmKey{16, 768, 3072, 2}}) {
    std::vector<GemmTile> accepted;
    for (const GemmTile &t : allTiles(TileSpace()))
      if (inNarrow(t) && t.bm <= bmCapOf(key.m) && validatorAccepts(key, t))
        accepted.push_back(t);
    std::vector<GemmTile> expected = onePerKernel(key, accepted);
    std::vector<GemmTile> got = enumerateCandidateTiles(key, narrow);
    ASSERT_EQ(got.size(), expected.size()) << "M = " << key.m;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(sameTile(got[i], expected[i])) << tileText(got[i]);
  }
  // The numbers of test/AOT/candidates.test: 3 tiles for M = 1 (bm 8 only,
  // bk 256 with split 4 exceeds K = 768), 4 for M = 16 and K = 3072 (split 1
  // would stage all of K = 3072 in shared memory: more than 227 KiB).
  EXPECT_EQ(enumerateCandidateTiles({1, 3072, 768, 1}, narrow).size(), 3u);
  EXPECT_EQ(enumerateCandidateTiles({16, 768, 3072, 2}, narrow).size(), 4u);
}

TEST(CandidateTilesTest, OrderIsBmBnBkSplit) {
  std::vector<GemmTile> tiles =
      enumerateCandidateTiles({64, 768, 3072, 2}, TileSpace());
  ASSERT_GT(tiles.size(), 1u);
  for (size_t i = 1; i < tiles.size(); ++i)
    EXPECT_LT(std::tie(tiles[i - 1].bm, tiles[i - 1].bn, tiles[i - 1].bk,
                       tiles[i - 1].split),
              std::tie(tiles[i].bm, tiles[i].bn, tiles[i].bk, tiles[i].split));
}

//===--- assignCandidateRounds --------------------------------------------===//

/// Checks the round invariants; returns the number of rounds.
int checkRounds(const std::vector<std::vector<std::string>> &kernelKeys,
                const std::vector<int> &rounds) {
  EXPECT_EQ(rounds.size(), kernelKeys.size());
  int count = 0;
  std::map<int, std::set<std::string>> keysOfRound;
  for (size_t i = 0; i < rounds.size() && i < kernelKeys.size(); ++i) {
    EXPECT_GE(rounds[i], 0);
    count = std::max(count, rounds[i] + 1);
    for (const std::string &key : kernelKeys[i])
      EXPECT_TRUE(keysOfRound[rounds[i]].insert(key).second)
          << "key " << key << " has two kernels in round " << rounds[i];
  }
  for (int r = 0; r < count; ++r)
    EXPECT_TRUE(keysOfRound.count(r)) << "round " << r << " is empty";
  return count;
}

TEST(CandidateRoundsTest, EachKeyAtMostOneKernelPerRound) {
  // Shaped like test/AOT/candidates.test: two keys share three kernels, a
  // third key has eight of its own.
  std::vector<std::vector<std::string>> kernelKeys = {
      {"a", "b"}, {"a", "b"}, {"a", "b"}, {"c"}, {"c"}, {"c"},
      {"c"},      {"c"},      {"c"},      {"c"}, {"c"}};
  std::vector<int> rounds = assignCandidateRounds(kernelKeys);
  EXPECT_EQ(checkRounds(kernelKeys, rounds), 8);
  EXPECT_EQ(rounds, (std::vector<int>{0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(CandidateRoundsTest, FirstFitReusesEarlierRounds) {
  std::vector<std::vector<std::string>> kernelKeys = {
      {"a"}, {"a", "b"}, {"b"}, {"c"}, {"a", "c"}, {"b", "c"}};
  std::vector<int> rounds = assignCandidateRounds(kernelKeys);
  EXPECT_EQ(rounds, (std::vector<int>{0, 1, 0, 0, 2, 3}));
  EXPECT_EQ(checkRounds(kernelKeys, rounds), 4);
}

TEST(CandidateRoundsTest, EmptyInputHasNoRounds) {
  EXPECT_TRUE(assignCandidateRounds({}).empty());
}

TEST(CandidateRoundsTest, EveryDistinctKernelOfRealKeysInExactlyOneRound) {
  // The kernels moss-aot --candidates would build: one per distinct
  // (N, K, mode, tile), serving every key that has the tile.
  const GemmKey keys[] = {{1, 3072, 768, 1},  {8, 3072, 768, 1},
                          {16, 3072, 768, 1}, {16, 768, 3072, 2},
                          {64, 768, 3072, 2}, {4, 768, 768, 0}};
  std::map<std::string, size_t> kernelIndex;
  std::vector<std::vector<std::string>> kernelKeys;
  size_t maxCandidates = 0;
  for (const GemmKey &key : keys) {
    std::string text = std::to_string(key.m) + "," + std::to_string(key.n) +
                       "," + std::to_string(key.k) + "," +
                       std::to_string(key.mode);
    std::vector<GemmTile> tiles = enumerateCandidateTiles(key, TileSpace());
    maxCandidates = std::max(maxCandidates, tiles.size());
    for (const GemmTile &t : tiles) {
      std::string name = gemmKernelName(key.n, key.k, key.mode, t);
      auto [it, inserted] = kernelIndex.emplace(name, kernelKeys.size());
      if (inserted)
        kernelKeys.emplace_back();
      kernelKeys[it->second].push_back(text);
    }
  }
  std::vector<int> rounds = assignCandidateRounds(kernelKeys);
  // One entry per kernel: each distinct kernel lands in exactly one round.
  ASSERT_EQ(rounds.size(), kernelIndex.size());
  int count = checkRounds(kernelKeys, rounds);
  // A key with c candidates needs c rounds; first fit needs no more here.
  EXPECT_EQ(count, static_cast<int>(maxCandidates));
  // Every key finds each of its candidates in a different round.
  std::map<std::string, std::set<int>> roundsOfKey;
  std::map<std::string, size_t> kernelsOfKey;
  for (size_t i = 0; i < kernelKeys.size(); ++i)
    for (const std::string &key : kernelKeys[i]) {
      roundsOfKey[key].insert(rounds[i]);
      ++kernelsOfKey[key];
    }
  for (const auto &[key, n] : kernelsOfKey)
    EXPECT_EQ(roundsOfKey[key].size(), n) << key;
}

TEST(CandidateRoundsTest, RoundNames) {
  EXPECT_EQ(candidateRoundName(0), "r000");
  EXPECT_EQ(candidateRoundName(7), "r007");
  EXPECT_EQ(candidateRoundName(42), "r042");
  EXPECT_EQ(candidateRoundName(999), "r999");
}

//===--- candidates.json
//----------------------------------------------------===//

CandidateList sampleList() {
  CandidateList list;
  list.chip = "sm_90a";
  list.rounds = {"r000", "r001"};
  GemmTile a{8, 32, 64, 1}, b{8, 32, 64, 4}, c{16, 32, 256, 4};
  // Not in sorted order: the file keeps the order the keys were asked for.
  list.keys.push_back({"4,768,768,0", {4, 768, 768, 0}, {}});
  list.keys.push_back({"1,3072,768,1",
                       {1, 3072, 768, 1},
                       {{a, "r000", gemmKernelName(3072, 768, 1, a)},
                        {b, "r001", gemmKernelName(3072, 768, 1, b)}}});
  list.keys.push_back({"16,768,3072,2",
                       {16, 768, 3072, 2},
                       {{c, "r000", gemmKernelName(768, 3072, 2, c)}}});
  list.refused.push_back({"16,768,3072,2",
                          {16, 256, 256, 1},
                          "spills (8 bytes stores, \"quoted\")"});
  return list;
}

void expectSameList(const CandidateList &a, const CandidateList &b) {
  EXPECT_EQ(a.chip, b.chip);
  EXPECT_EQ(a.rounds, b.rounds);
  ASSERT_EQ(a.keys.size(), b.keys.size());
  for (size_t i = 0; i < a.keys.size(); ++i) {
    SCOPED_TRACE(a.keys[i].keyText);
    EXPECT_EQ(a.keys[i].keyText, b.keys[i].keyText);
    EXPECT_TRUE(a.keys[i].key == b.keys[i].key);
    ASSERT_EQ(a.keys[i].candidates.size(), b.keys[i].candidates.size());
    for (size_t j = 0; j < a.keys[i].candidates.size(); ++j) {
      const Candidate &x = a.keys[i].candidates[j],
                      &y = b.keys[i].candidates[j];
      EXPECT_TRUE(sameTile(x.tile, y.tile));
      EXPECT_EQ(x.round, y.round);
      EXPECT_EQ(x.kernel, y.kernel);
    }
  }
  ASSERT_EQ(a.refused.size(), b.refused.size());
  for (size_t i = 0; i < a.refused.size(); ++i) {
    EXPECT_EQ(a.refused[i].keyText, b.refused[i].keyText);
    EXPECT_TRUE(sameTile(a.refused[i].tile, b.refused[i].tile));
    EXPECT_EQ(a.refused[i].reason, b.refused[i].reason);
  }
}

TEST(CandidateListTest, SerializeParseRoundTrip) {
  CandidateList list = sampleList();
  std::string text = serializeCandidateList(list);
  CandidateList back;
  std::string err;
  ASSERT_TRUE(parseCandidateList(text, "c.json", back, err)) << err;
  expectSameList(list, back);
  // Keys keep the order they were asked for, in the file and when read
  // back, not JSON's sorted order.
  EXPECT_LT(text.find("\"4,768,768,0\""), text.find("\"1,3072,768,1\""));
  EXPECT_LT(text.find("\"1,3072,768,1\""), text.find("\"16,768,3072,2\": ["));
  ASSERT_EQ(back.keys.size(), 3u);
  EXPECT_EQ(back.keys[0].keyText, "4,768,768,0");
  EXPECT_EQ(back.keys[2].keyText, "16,768,3072,2");
  // One candidate a line.
  EXPECT_CONTAINS(text, "\n   {\"tile\":[8,32,64,4],\"round\":\"r001\","
                        "\"kernel\":\"" +
                            gemmKernelName(3072, 768, 1, {8, 32, 64, 4}) +
                            "\"}");
  // And serializing again gives the same bytes.
  EXPECT_EQ(serializeCandidateList(back), text);
}

TEST(CandidateListTest, EmptyListRoundTrips) {
  CandidateList list;
  list.chip = "sm_90a";
  std::string text = serializeCandidateList(list);
  CandidateList back = sampleList();
  std::string err;
  ASSERT_TRUE(parseCandidateList(text, "c.json", back, err)) << err;
  expectSameList(list, back);
}

TEST(CandidateListTest, WriteReadRoundTrip) {
  unittest::ScratchDir dir;
  CandidateList list = sampleList(), back;
  std::string err;
  ASSERT_TRUE(writeCandidateList(dir.path, list, err)) << err;
  EXPECT_EQ(dir.list(), std::vector<std::string>{kCandidatesFileName});
  ASSERT_TRUE(readCandidateList(dir.path, back, err)) << err;
  expectSameList(list, back);
  std::string bytes;
  ASSERT_TRUE(readFile(dir.file(kCandidatesFileName), bytes, err)) << err;
  EXPECT_EQ(bytes, serializeCandidateList(list));
}

TEST(CandidateListTest, FailedWriteLeavesTheOldFile) {
  unittest::ScratchDir dir;
  CandidateList old = sampleList();
  std::string err;
  ASSERT_TRUE(writeCandidateList(dir.path, old, err)) << err;
  // The temporary file cannot be created: its name is taken by a folder
  // (this also works as root, unlike a read-only folder).
  std::string temp = dir.file(std::string(kCandidatesFileName) + ".tmp." +
                              std::to_string(::getpid()));
  ASSERT_TRUE(std::filesystem::create_directory(temp));
  CandidateList replacement = sampleList();
  replacement.keys.pop_back();
  replacement.chip = "sm_100a";
  err.clear();
  EXPECT_FALSE(writeCandidateList(dir.path, replacement, err));
  EXPECT_CONTAINS(err, temp);
  CandidateList back;
  std::string readErr;
  ASSERT_TRUE(readCandidateList(dir.path, back, readErr)) << readErr;
  expectSameList(old, back);
}

TEST(CandidateListTest, ReadMissingFileNamesPath) {
  unittest::ScratchDir dir;
  CandidateList out;
  std::string err;
  EXPECT_FALSE(readCandidateList(dir.path, out, err));
  EXPECT_CONTAINS(err, dir.file(kCandidatesFileName));
}

TEST(CandidateListTest, ReadNamesThePathInParseErrors) {
  unittest::ScratchDir dir;
  std::string err;
  ASSERT_TRUE(writeFileAtomic(dir.file(kCandidatesFileName),
                              "{\"format_version\": 9}", err))
      << err;
  CandidateList out;
  EXPECT_FALSE(readCandidateList(dir.path, out, err));
  EXPECT_EQ(err.rfind(dir.file(kCandidatesFileName) + ": ", 0), 0u) << err;
  EXPECT_CONTAINS(err, "\"format_version\" is not 1");
}

/// A valid file with `edit` applied to its JSON text (first occurrence of
/// `from` replaced by `to`), parsed expecting failure.
std::string editedError(const std::string &from, const std::string &to) {
  std::string text = serializeCandidateList(sampleList());
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no " << from << " in\n" << text;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  CandidateList out = sampleList();
  out.chip = "untouched";
  std::string err;
  EXPECT_FALSE(parseCandidateList(text, "c.json", out, err))
      << "parsed without error:\n"
      << text;
  EXPECT_EQ(out.chip, "untouched");
  EXPECT_EQ(err.rfind("c.json: ", 0), 0u) << err;
  return err;
}

std::string parseError(const std::string &text) {
  CandidateList out;
  std::string err;
  EXPECT_FALSE(parseCandidateList(text, "c.json", out, err))
      << "parsed without error:\n"
      << text;
  EXPECT_EQ(err.rfind("c.json: ", 0), 0u) << err;
  return err;
}

TEST(CandidateListTest, NotJson) {
  parseError("{\"format_version\": 1,");
  parseError("");
}

TEST(CandidateListTest, NotAnObject) {
  EXPECT_CONTAINS(parseError("[1, 2]"), "expected an object");
}

TEST(CandidateListTest, WrongOrMissingFormatVersion) {
  EXPECT_CONTAINS(editedError("\"format_version\": 1", "\"format_version\": 2"),
                  "\"format_version\" is not 1");
  EXPECT_CONTAINS(
      editedError("\"format_version\": 1,", ""),
      "\"format_version\" is not 1 (rebuild the candidates with moss-aot "
      "--candidates)");
}

TEST(CandidateListTest, FormatVersionMustBeAnInteger) {
  // Found by the candidates fuzzer: a number past uint64 parses as a float,
  // and converting it to int64 was undefined behaviour.
  for (const char *version :
       {"92233720368547758081", "1.0", "1.5", "18446744073709551615", "\"1\""})
    EXPECT_CONTAINS(editedError("\"format_version\": 1",
                                std::string("\"format_version\": ") + version),
                    "\"format_version\" is not 1")
        << version;
}

TEST(CandidateListTest, TileFieldsOutsideInt64AreNotIntegers) {
  EXPECT_CONTAINS(editedError("[8,32,64,1]", "[8,32,64,9223372036854775808]"),
                  "\"tile\" is not four integers");
}

TEST(CandidateListTest, ListsMustBeArrays) {
  // Iterating an object or a scalar would accept {"a": "r000"} or "r000".
  EXPECT_CONTAINS(editedError("\"rounds\": [\"r000\"",
                              "\"rounds\": \"r000\", \"x\": [\"r000\""),
                  "\"rounds\" is not an array");
  EXPECT_CONTAINS(
      editedError("\"refused\": [", "\"refused\": {\"a\": 1}, \"x\": ["),
      "\"refused\" is not an array");
}

TEST(CandidateListTest, MissingTopLevelFields) {
  for (const char *field : {"chip", "rounds", "keys", "refused"}) {
    std::string text = serializeCandidateList(sampleList());
    std::string name = std::string("\"") + field + "\":";
    size_t at = text.find(name);
    ASSERT_NE(at, std::string::npos) << field;
    text.replace(at, name.size(), std::string("\"x_") + field + "\":");
    EXPECT_CONTAINS(parseError(text), "missing or mistyped field") << field;
  }
}

TEST(CandidateListTest, MistypedChip) {
  EXPECT_CONTAINS(editedError("\"chip\": \"sm_90a\"", "\"chip\": 90"),
                  "missing or mistyped field");
}

TEST(CandidateListTest, RoundNotAPlainFolderName) {
  EXPECT_CONTAINS(editedError("\"rounds\": [\"r000\"", "\"rounds\": [\"../x\""),
                  "round \"../x\" is not a plain folder name");
  EXPECT_CONTAINS(editedError("\"rounds\": [\"r000\"", "\"rounds\": [\"a/b\""),
                  "round \"a/b\" is not a plain folder name");
}

TEST(CandidateListTest, MalformedKey) {
  std::string err = editedError("\"1,3072,768,1\": [", "\"1,3072,768\": [");
  EXPECT_CONTAINS(err, "key \"1,3072,768\": ");
  EXPECT_CONTAINS(err, "found 3 fields");
}

TEST(CandidateListTest, KeyListedTwice) {
  // nlohmann would keep only the last; the parser must see both.
  std::string err = editedError("\"16,768,3072,2\": [", "\"1,3072,768,1\": [");
  EXPECT_CONTAINS(err, "key \"1,3072,768,1\" is listed twice");
}

TEST(CandidateListTest, KeysNotAnObject) {
  std::string text = serializeCandidateList(sampleList());
  size_t from = text.find("\"keys\": {"), to = text.find("\"refused\":");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  text.replace(from, to - from, "\"keys\": [{\"1,3072,768,1\": []}],\n ");
  EXPECT_CONTAINS(parseError(text), "\"keys\" is not an object");
}

TEST(CandidateListTest, UnknownModeInKey) {
  std::string err = editedError("\"4,768,768,0\": [", "\"4,768,768,6\": [");
  EXPECT_CONTAINS(err, "key \"4,768,768,6\": mode 6 is unknown");
}

TEST(CandidateListTest, TileNotFourIntegers) {
  for (const char *bad : {"[8,32,64]", "[8,32,64,1,1]", "[8,32,\"64\",1]",
                          "[8,32,64.5,1]", "\"8,32,64,1\""}) {
    std::string err =
        editedError("\"tile\":[8,32,64,1]", std::string("\"tile\":") + bad);
    EXPECT_CONTAINS(err, "key \"1,3072,768,1\": \"tile\" is not four integers")
        << bad;
  }
}

TEST(CandidateListTest, TileTheValidatorRefuses) {
  // bn 48 is no power of two; bk*split = 1024 exceeds K = 768.
  EXPECT_CONTAINS(editedError("\"tile\":[8,32,64,1]", "\"tile\":[8,48,64,1]"),
                  "key \"1,3072,768,1\": tile bn=48 is not a power of two");
  EXPECT_CONTAINS(editedError("\"tile\":[8,32,64,4]", "\"tile\":[8,32,256,4]"),
                  "key \"1,3072,768,1\": bk*split = 1024 exceeds K = 768");
}

TEST(CandidateListTest, TileRefusedForSharedMemory) {
  // M = 64 rows of x and 256 of W over the whole K: no shared memory holds it.
  std::string text = serializeCandidateList(sampleList());
  std::string from = "\"tile\":[8,32,64,1]";
  text.replace(text.find(from), from.size(), "\"tile\":[64,256,256,1]");
  std::string err = parseError(text);
  EXPECT_CONTAINS(err, "key \"1,3072,768,1\": shared memory");
  EXPECT_CONTAINS(err, "exceeds 227 KiB");
}

TEST(CandidateListTest, CandidateRoundNotListed) {
  EXPECT_CONTAINS(
      editedError("\"round\":\"r001\"", "\"round\":\"r005\""),
      "key \"1,3072,768,1\": round \"r005\" is not listed in \"rounds\"");
}

TEST(CandidateListTest, CandidateFieldsMissingOrMistyped) {
  EXPECT_CONTAINS(editedError("\"round\":\"r001\",", ""),
                  "missing or mistyped field");
  EXPECT_CONTAINS(editedError("\"tile\":[8,32,64,1],", ""),
                  "missing or mistyped field");
  EXPECT_CONTAINS(
      editedError("\"kernel\":\"linear", "\"kernel\":1,\"x\":\"linear"),
      "missing or mistyped field");
  EXPECT_CONTAINS(editedError("\"round\":\"r001\"", "\"round\":1"),
                  "missing or mistyped field");
}

TEST(CandidateListTest, RefusedEntries) {
  EXPECT_CONTAINS(
      editedError("\"tile\":[16,256,256,1]", "\"tile\":[16,256,256]"),
      "refused \"16,768,3072,2\": \"tile\" is not four integers");
  EXPECT_CONTAINS(editedError(",\"reason\":", ",\"why\":"),
                  "missing or mistyped field");
  EXPECT_CONTAINS(editedError("{\"key\":\"16,768,3072,2\",", "{\"key\":16,"),
                  "missing or mistyped field");
}

} // namespace
