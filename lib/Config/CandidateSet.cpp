//===- CandidateSet.cpp - Tile candidates of the offline tuner ------------===//

#include "moss/Config/CandidateSet.h"

#include "JsonSupport.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Manifest.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace moss::config {

using detail::quoteForMessage;
using nlohmann::json;

std::vector<GemmTile> enumerateCandidateTiles(const GemmKey &key,
                                              const TileSpace &space) {
  int64_t bmCap = 8;
  while (bmCap < key.m)
    bmCap *= 2;
  std::vector<GemmTile> tiles;
  std::vector<GemmLaunch> launches; // of `tiles`
  for (int64_t bm : space.bm) {
    if (bm > bmCap)
      continue;
    for (int64_t bn : space.bn)
      for (int64_t bk : space.bk)
        for (int64_t split : space.split) {
          GemmTile tile{bm, bn, bk, split};
          GemmLaunch launch;
          std::string reason;
          if (!deriveGemmLaunch(key.n, key.k, key.mode, tile, launch, reason))
            continue;
          // A tile that builds an earlier one's kernel (another bk giving
          // the same stages) would only time the same code again.
          bool built = std::any_of(launches.begin(), launches.end(),
                                   [&](const GemmLaunch &earlier) {
                                     return sameGemmLaunch(earlier, launch);
                                   });
          if (built)
            continue;
          tiles.push_back(tile);
          launches.push_back(launch);
        }
  }
  return tiles;
}

bool parseKeyList(std::string_view text, const std::string &source,
                  std::vector<GemmKey> &keys, std::vector<std::string> &texts,
                  std::string &err) {
  std::vector<GemmKey> parsed;
  std::vector<std::string> parsedTexts;
  std::set<std::string> seen;
  size_t i = 0;
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '#') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ';') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && std::string_view(" \t\r\n;#").find(text[end]) ==
                                    std::string_view::npos)
      ++end;
    std::string token(text.substr(i, end - i));
    i = end;
    GemmKey key;
    std::string reason;
    if (!parseGemmKey(token, key, reason)) {
      err = source + ": key " + quoteForMessage(token) + ": " + reason;
      return false;
    }
    if (!seen.insert(token).second) {
      err = source + ": key " + quoteForMessage(token) + " is listed twice";
      return false;
    }
    parsed.push_back(key);
    parsedTexts.push_back(token);
  }
  if (parsed.empty()) {
    err = source + ": no keys (expected \"M,N,K,mode\" separated by spaces, "
                   "new lines or ';')";
    return false;
  }
  keys = std::move(parsed);
  texts = std::move(parsedTexts);
  return true;
}

std::vector<int>
assignCandidateRounds(const std::vector<std::vector<std::string>> &kernelKeys) {
  std::vector<std::set<std::string>> taken; // keys used by each round
  std::vector<int> rounds;
  for (const std::vector<std::string> &keys : kernelKeys) {
    size_t round = 0;
    for (; round < taken.size(); ++round) {
      bool clash = false;
      for (const std::string &key : keys)
        clash = clash || taken[round].count(key);
      if (!clash)
        break;
    }
    if (round == taken.size())
      taken.emplace_back();
    taken[round].insert(keys.begin(), keys.end());
    rounds.push_back(static_cast<int>(round));
  }
  return rounds;
}

std::string candidateRoundName(int round) {
  char name[16];
  std::snprintf(name, sizeof(name), "r%03d", round);
  return name;
}

namespace {
json tileJson(const GemmTile &t) {
  return json::array({t.bm, t.bn, t.bk, t.split});
}

bool readTile(const json &value, GemmTile &tile) {
  if (!value.is_array() || value.size() != 4)
    return false;
  int64_t fields[4];
  for (size_t i = 0; i < 4; ++i) {
    std::optional<int64_t> field = detail::jsonInt64(value[i]);
    if (!field)
      return false;
    fields[i] = *field;
  }
  tile = {fields[0], fields[1], fields[2], fields[3]};
  return true;
}
} // namespace

std::string serializeCandidateList(const CandidateList &list) {
  // One candidate a line: the file stays readable with hundreds of them.
  std::string text =
      "{\n \"format_version\": " + std::to_string(kCandidatesFormatVersion) +
      ",\n \"chip\": " + json(list.chip).dump() +
      ",\n \"rounds\": " + json(list.rounds).dump() + ",\n \"keys\": {";
  for (size_t i = 0; i < list.keys.size(); ++i) {
    const CandidateKey &entry = list.keys[i];
    text +=
        std::string(i ? "," : "") + "\n  " + json(entry.keyText).dump() + ": [";
    for (size_t j = 0; j < entry.candidates.size(); ++j) {
      const Candidate &c = entry.candidates[j];
      nlohmann::ordered_json line = {
          {"tile", tileJson(c.tile)}, {"round", c.round}, {"kernel", c.kernel}};
      text += std::string(j ? "," : "") + "\n   " + line.dump();
    }
    text += entry.candidates.empty() ? "]" : "\n  ]";
  }
  text += list.keys.empty() ? "},\n \"refused\": [" : "\n },\n \"refused\": [";
  for (size_t i = 0; i < list.refused.size(); ++i) {
    const RefusedCandidate &r = list.refused[i];
    nlohmann::ordered_json line = {
        {"key", r.keyText}, {"tile", tileJson(r.tile)}, {"reason", r.reason}};
    text += std::string(i ? "," : "") + "\n  " + line.dump();
  }
  return text + (list.refused.empty() ? "]\n}\n" : "\n ]\n}\n");
}

bool parseCandidateList(std::string_view bytes, const std::string &fileName,
                        CandidateList &out, std::string &err) {
  // The keys of the "keys" object in file order, repeats included.
  std::vector<std::string> keyOrder;
  json document;
  std::string reason;
  if (!detail::parseJsonKeepingKeyOrder(bytes, document, reason, "keys",
                                        keyOrder)) {
    err = fileName + ": " + reason;
    return false;
  }
  auto fail = [&](const std::string &why) {
    err = fileName + ": " + why;
    return false;
  };
  try {
    if (!document.is_object())
      return fail("expected an object");
    auto version = document.find("format_version");
    if (version == document.end() ||
        detail::jsonInt64(*version) != kCandidatesFormatVersion)
      return fail("\"format_version\" is not " +
                  std::to_string(kCandidatesFormatVersion) +
                  " (rebuild the candidates with moss-aot --candidates)");
    CandidateList list;
    list.chip = document.at("chip").get<std::string>();
    // Iterating a non-array would visit an object's values or a scalar
    // itself; only arrays are lists.
    for (const char *field : {"rounds", "refused"})
      if (!document.at(field).is_array())
        return fail(std::string("\"") + field + "\" is not an array");
    std::set<std::string> rounds;
    for (const json &round : document.at("rounds")) {
      std::string name = round.get<std::string>();
      if (!isPlainFileName(name))
        return fail("round " + quoteForMessage(name) +
                    " is not a plain folder name");
      rounds.insert(name);
      list.rounds.push_back(name);
    }
    const json &keys = document.at("keys");
    if (!keys.is_object())
      return fail("\"keys\" is not an object");
    std::set<std::string> seenKeys;
    for (const std::string &keyText : keyOrder)
      if (!seenKeys.insert(keyText).second)
        return fail("key " + quoteForMessage(keyText) + " is listed twice");
    for (const std::string &keyText : keyOrder) {
      const json &candidates = keys.at(keyText);
      CandidateKey entry;
      entry.keyText = keyText;
      std::string where = "key " + quoteForMessage(keyText) + ": ";
      if (!parseGemmKey(keyText, entry.key, reason))
        return fail(where + reason);
      if (!candidates.is_array())
        return fail(where + "the candidates are not an array");
      for (const json &c : candidates) {
        Candidate candidate;
        if (!readTile(c.at("tile"), candidate.tile))
          return fail(where + "\"tile\" is not four integers");
        if (!checkTileLegal(entry.key.n, entry.key.k, entry.key.mode,
                            candidate.tile, reason))
          return fail(where + reason);
        candidate.round = c.at("round").get<std::string>();
        if (!rounds.count(candidate.round))
          return fail(where + "round " + quoteForMessage(candidate.round) +
                      " is not listed in \"rounds\"");
        candidate.kernel = c.at("kernel").get<std::string>();
        entry.candidates.push_back(std::move(candidate));
      }
      list.keys.push_back(std::move(entry));
    }
    for (const json &r : document.at("refused")) {
      RefusedCandidate refused;
      refused.keyText = r.at("key").get<std::string>();
      if (!readTile(r.at("tile"), refused.tile))
        return fail("refused " + quoteForMessage(refused.keyText) +
                    ": \"tile\" is not four integers");
      refused.reason = r.at("reason").get<std::string>();
      list.refused.push_back(std::move(refused));
    }
    out = std::move(list);
    return true;
  } catch (const json::exception &e) {
    return fail(std::string("missing or mistyped field: ") + e.what());
  }
}

bool readCandidateList(const std::string &dir, CandidateList &out,
                       std::string &err) {
  std::string path = dir + "/" + kCandidatesFileName, bytes;
  return readFile(path, bytes, err) &&
         parseCandidateList(bytes, path, out, err);
}

bool writeCandidateList(const std::string &dir, const CandidateList &list,
                        std::string &err) {
  return writeFileAtomic(dir + "/" + kCandidatesFileName,
                         serializeCandidateList(list), err);
}

} // namespace moss::config
