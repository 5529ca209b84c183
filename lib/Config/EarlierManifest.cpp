//===- EarlierManifest.cpp - The files an older moss-aot wrote -----------===//
//
// A new moss refuses manifests of an earlier format_version (their kernels
// lack what it needs), but moss-aot must still recognise such a folder as its
// own, or every upgrade would stop at "refusing to write": the file names
// are all it needs from it, and every format so far stored them the same
// way.
//
//===----------------------------------------------------------------------===//

#include "moss/Config/Manifest.h"

#include "JsonSupport.h"
#include "moss/Config/FileUtil.h"

namespace moss::config {

bool readEarlierManifestFiles(const std::string &dir,
                              std::vector<std::string> &files,
                              std::string &err) {
  const std::string path = manifestPath(dir);
  std::string bytes, reason;
  if (!readFile(path, bytes, err))
    return false;
  nlohmann::json document;
  if (!detail::parseJson(bytes, document, reason)) {
    err = path + ": " + reason;
    return false;
  }
  auto fail = [&](const std::string &why) {
    err = path + ": not a manifest of an earlier moss-aot: " + why;
    return false;
  };
  if (!document.is_object())
    return fail("not a JSON object");
  auto version = document.find("format_version");
  std::optional<int64_t> number =
      version == document.end() ? std::nullopt : detail::jsonInt64(*version);
  if (!number || *number < 1 || *number >= kManifestFormatVersion)
    return fail("\"format_version\" is not an integer in [1, " +
                std::to_string(kManifestFormatVersion - 1) + "]");
  auto mossVersion = document.find("moss_version");
  if (mossVersion == document.end() || !mossVersion->is_string())
    return fail("no \"moss_version\" string");
  std::vector<std::string> names;
  for (const char *array : {"gemm_kernels", "attention_kernels"}) {
    auto records = document.find(array);
    if (records == document.end())
      continue; // the first formats had no attention kernels
    if (!records->is_array())
      return fail(std::string("\"") + array + "\" is not an array");
    for (const nlohmann::json &record : *records) {
      if (!record.is_object())
        return fail(std::string("an entry of \"") + array +
                    "\" is not an object");
      for (const char *field : {"cubin", "ptx"}) {
        auto name = record.find(field);
        if (name == record.end())
          continue;
        if (!name->is_string() || !isPlainFileName(name->get<std::string>()))
          return fail(std::string("a \"") + field + "\" of \"" + array +
                      "\" is not a plain file name");
        names.push_back(name->get<std::string>());
      }
    }
  }
  files = std::move(names);
  return true;
}

} // namespace moss::config
