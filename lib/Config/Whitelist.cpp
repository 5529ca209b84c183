//===- Whitelist.cpp - Offline GEMM tile whitelist ------------------------===//

#include "moss/Config/Whitelist.h"

#include "JsonSupport.h"
#include "moss/Config/FileUtil.h"

#include <set>

namespace moss::config {

using nlohmann::json;

std::string gemmKernelName(int64_t n, int64_t k, int mode,
                           const GemmTile &tile) {
  const char *modeName = gemmModeName(mode);
  return "linear_n" + std::to_string(n) + "_k" + std::to_string(k) + "_" +
         (modeName ? modeName : "mode" + std::to_string(mode)) + "_bm" +
         std::to_string(tile.bm) + "_bn" + std::to_string(tile.bn) + "_bk" +
         std::to_string(tile.bk) + "_s" + std::to_string(tile.split);
}

namespace {

constexpr const char *kKeyFieldNames[4] = {"M", "N", "K", "mode"};
constexpr const char *kTileFieldNames[4] = {"bm", "bn", "bk", "split"};

/// Parses one field of "M,N,K,mode": plain decimal, no sign, no spaces, no
/// leading zeros except "0" itself, at most kMaxGemmDim.
bool parseKeyField(std::string_view text, const char *name, int64_t &value,
                   std::string &reason) {
  std::string shown = detail::quoteForMessage(text);
  if (text.empty()) {
    reason = std::string("field ") + name + " is empty";
    return false;
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      reason = std::string("field ") + name + " " + shown +
               " is not a plain decimal integer (expected digits only: no "
               "spaces, signs or other characters)";
      return false;
    }
  }
  if (text.size() > 1 && text[0] == '0') {
    reason = std::string("field ") + name + " " + shown +
             " has a leading zero (expected canonical decimal)";
    return false;
  }
  if (text.size() > 10) {
    reason = std::string("field ") + name + " " + shown +
             " is out of range (max " + std::to_string(kMaxGemmDim) + ")";
    return false;
  }
  int64_t parsed = 0;
  for (char c : text)
    parsed = parsed * 10 + (c - '0');
  if (parsed > kMaxGemmDim) {
    reason = std::string("field ") + name + " = " + std::to_string(parsed) +
             " is out of range (max " + std::to_string(kMaxGemmDim) + ")";
    return false;
  }
  value = parsed;
  return true;
}

} // namespace

bool parseGemmKey(std::string_view text, GemmKey &key, std::string &reason) {
  std::string_view fields[4];
  size_t count = 0, start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view field = text.substr(start, comma == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : comma - start);
    if (count < 4)
      fields[count] = field;
    ++count;
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (count != 4) {
    reason = "expected four comma-separated integers \"M,N,K,mode\", found " +
             std::to_string(count) + (count == 1 ? " field" : " fields");
    return false;
  }
  int64_t values[4];
  for (int i = 0; i < 4; ++i)
    if (!parseKeyField(fields[i], kKeyFieldNames[i], values[i], reason))
      return false;
  for (int i = 0; i < 3; ++i) {
    if (values[i] < 1) {
      reason = std::string(kKeyFieldNames[i]) + " = " +
               std::to_string(values[i]) + " must be >= 1";
      return false;
    }
  }
  if (!gemmModeName(int(values[3]))) {
    reason = "mode " + std::to_string(values[3]) + " is unknown (expected " +
             gemmModeList() + ")";
    return false;
  }
  key = GemmKey{values[0], values[1], values[2], int(values[3])};
  return true;
}

namespace {

bool parseTile(const json &value, GemmTile &tile, std::string &reason) {
  if (!value.is_array()) {
    reason = "value must be an array [bm, bn, bk, split], found " +
             detail::describeJsonValue(value);
    return false;
  }
  if (value.size() != 4) {
    reason = "value must have 4 elements [bm, bn, bk, split], found " +
             std::to_string(value.size());
    return false;
  }
  int64_t numbers[4];
  for (int i = 0; i < 4; ++i) {
    const json &element = value[size_t(i)];
    std::string name = std::string("tile ") + kTileFieldNames[i];
    if (!element.is_number_integer()) {
      reason = name + " must be an integer, found " +
               detail::describeJsonValue(element);
      return false;
    }
    // Unsigned values above INT64_MAX must not wrap to negatives.
    std::optional<int64_t> number = detail::jsonInt64(element);
    if (!number || *number > kMaxGemmDim) {
      reason = name + "=" + element.dump() + " is out of range (max " +
               std::to_string(kMaxGemmDim) + ")";
      return false;
    }
    numbers[i] = *number;
  }
  tile = GemmTile{numbers[0], numbers[1], numbers[2], numbers[3]};
  return true;
}

/// The body of Whitelist::parse; may throw only on allocation failure, which
/// parse() turns into an error.
bool parseEntries(std::string_view bytes, const std::string &fileName,
                  std::vector<WhitelistEntry> &entries, std::string &err) {
  // nlohmann keeps only the last of duplicate keys, so record every key of the
  // top-level object (depth 1) as the parser sees it, in file order.
  std::vector<std::string> keysInFileOrder;
  json document;
  std::string reason;
  if (!detail::parseJsonKeepingKeyOrder(bytes, document, reason, "",
                                        keysInFileOrder)) {
    err = fileName + ": " + reason;
    return false;
  }
  if (!document.is_object()) {
    err = fileName +
          ": expected a JSON object mapping \"M,N,K,mode\" to [bm, bn, bk, "
          "split], found " +
          detail::describeJsonValue(document);
    return false;
  }

  std::set<std::string> seen;
  for (const std::string &keyText : keysInFileOrder) {
    if (!seen.insert(keyText).second) {
      err = fileName + ": key " + detail::quoteForMessage(keyText) +
            ": duplicate key (each \"M,N,K,mode\" may appear once)";
      return false;
    }
  }

  for (const std::string &keyText : keysInFileOrder) {
    auto fail = [&](const std::string &why) {
      err = fileName + ": key " + detail::quoteForMessage(keyText) + ": " + why;
      return false;
    };
    WhitelistEntry entry;
    entry.keyText = keyText;
    if (!parseGemmKey(keyText, entry.key, reason))
      return fail(reason);
    if (!parseTile(document.at(keyText), entry.tile, reason))
      return fail(reason);
    if (!checkTileLegal(entry.key.n, entry.key.k, entry.key.mode, entry.tile,
                        reason))
      return fail(reason);
    entries.push_back(std::move(entry));
  }
  return true;
}

} // namespace

bool Whitelist::parse(std::string_view bytes,
                      const std::string &fileNameForMessages, Whitelist &out,
                      std::string &err) {
  Whitelist result;
  std::vector<WhitelistEntry> entries;
  try {
    if (!parseEntries(bytes, fileNameForMessages, entries, err))
      return false;
    result.sourceName = fileNameForMessages;
    result.sourceBytes = std::string(bytes);
    result.entryList = std::move(entries);
    for (size_t i = 0; i < result.entryList.size(); ++i) {
      const GemmKey &key = result.entryList[i].key;
      result.indexByKey.emplace(std::make_tuple(key.m, key.n, key.k, key.mode),
                                i);
    }
  } catch (const std::exception &e) {
    err = fileNameForMessages + ": cannot parse whitelist: " + e.what();
    return false;
  }
  out = std::move(result);
  return true;
}

bool Whitelist::load(const std::string &path, Whitelist &out,
                     std::string &err) {
  std::string bytes;
  if (!readFile(path, bytes, err))
    return false;
  return parse(bytes, path, out, err);
}

const WhitelistEntry *Whitelist::find(int64_t m, int64_t n, int64_t k,
                                      int mode) const {
  auto it = indexByKey.find(std::make_tuple(m, n, k, mode));
  return it == indexByKey.end() ? nullptr : &entryList[it->second];
}

} // namespace moss::config
