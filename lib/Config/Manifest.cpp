//===- Manifest.cpp - kernels_generated/manifest.json and cache key -------===//

#include "moss/Config/Manifest.h"

#include "JsonSupport.h"
#include "moss/Config/FileUtil.h"
#include "moss/Config/Sha256.h"
#include "moss/Config/Whitelist.h"

#include <limits>

namespace moss::config {

using detail::describeJsonValue;
using detail::quoteForMessage;
using nlohmann::json;
using nlohmann::ordered_json;

const std::vector<std::string> &gemmKernelArgNames(int mode) {
  static const std::vector<std::string> names = {
      "x", "w", "scale", "residual", "row_live", "out", "m", "prefetch_w"};
  static const std::vector<std::string> layerNormNames = {
      "x", "w",          "scale", "residual", "row_live", "out",
      "m", "prefetch_w", "gamma", "beta",     "eps"};
  static const std::vector<std::string> ropeCacheNames = {
      "x",        "w",       "scale",   "residual",
      "row_live", "out",     "m",       "prefetch_w",
      "gamma",    "beta",    "eps",     "positions",
      "live",     "k_cache", "v_cache", "slot_positions",
      "length",   "capacity"};
  const GemmModeInfo *info = gemmModeInfo(mode);
  if (info && info->epilogue == kGemmEpilogueRopeCache)
    return ropeCacheNames;
  return info && info->layerNorm ? layerNormNames : names;
}

bool isPlainFileName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." ||
      name.find("..") != std::string_view::npos)
    return false;
  for (char c : name)
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      return false;
  return true;
}

const GemmKernelRecord *gemmKernelServing(const Manifest &manifest,
                                          std::string_view key) {
  for (const GemmKernelRecord &kernel : manifest.gemmKernels)
    for (const std::string &served : kernel.keys)
      if (served == key)
        return &kernel;
  return nullptr;
}

std::string computeCacheKey(std::string_view whitelistBytes,
                            std::string_view mossVersion, std::string_view chip,
                            std::string_view pipeline) {
  const std::string_view separator("\0", 1);
  Sha256 hasher;
  hasher.update(whitelistBytes);
  hasher.update(separator);
  hasher.update(mossVersion);
  hasher.update(separator);
  hasher.update(chip);
  hasher.update(separator);
  hasher.update(pipeline);
  return hasher.finishHex();
}

namespace {

std::string joinPath(const std::string &path, const std::string &key) {
  return path.empty() ? key : path + "." + key;
}

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

bool isIdentifier(std::string_view text) {
  if (text.empty() || (text[0] >= '0' && text[0] <= '9'))
    return false;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

/// Reads manifest JSON into the structs, stopping at the first problem with a
/// message that names the file, the kernel and the field path.
class ManifestReader {
public:
  explicit ManifestReader(const std::string &fileName) : fileName(fileName) {}

  std::string error;

  bool readManifest(const json &document, Manifest &out);

private:
  const std::string &fileName;
  /// e.g. `gemm_kernels[0] "linear_n3072_..."`; empty for top-level fields.
  std::string kernelLabel;

  bool fail(const std::string &field, const std::string &what) {
    error = fileName + ": " + (kernelLabel.empty() ? "" : kernelLabel + ": ") +
            "field " + quoteForMessage(field) + ": " + what;
    return false;
  }

  const json *member(const json &object, const std::string &path,
                     const char *key, const char *expected) {
    auto it = object.find(key);
    if (it == object.end()) {
      fail(joinPath(path, key),
           std::string("missing (expected ") + expected + ")");
      return nullptr;
    }
    return &*it;
  }

  bool readInt(const json &value, const std::string &field, int64_t min,
               int64_t max, int64_t &out) {
    std::string expected = "expected integer >= " + std::to_string(min);
    if (max != std::numeric_limits<int64_t>::max())
      expected += " and <= " + std::to_string(max);
    if (!value.is_number_integer())
      return fail(field, expected + ", found " + describeJsonValue(value));
    std::optional<int64_t> number = detail::jsonInt64(value);
    if (!number || *number < min || *number > max)
      return fail(field, expected + ", found " + value.dump());
    out = *number;
    return true;
  }

  bool readIntMember(const json &object, const std::string &path,
                     const char *key, int64_t min, int64_t &out,
                     int64_t max = std::numeric_limits<int64_t>::max()) {
    const json *value = member(object, path, key, "integer");
    return value && readInt(*value, joinPath(path, key), min, max, out);
  }

  bool readStringMember(const json &object, const std::string &path,
                        const char *key, bool allowEmpty, std::string &out) {
    const json *value = member(object, path, key, "string");
    if (!value)
      return false;
    std::string field = joinPath(path, key);
    if (!value->is_string())
      return fail(field, "expected string, found " + describeJsonValue(*value));
    const auto &text = value->get_ref<const std::string &>();
    if (!allowEmpty && text.empty())
      return fail(field, "expected a non-empty string, found \"\"");
    out = text;
    return true;
  }

  bool readFileNameMember(const json &object, const char *key,
                          std::string &out) {
    if (!readStringMember(object, "", key, /*allowEmpty=*/false, out))
      return false;
    if (!isPlainFileName(out))
      return fail(key, "expected a plain file name (no '/', '\\' or \"..\"), "
                       "found " +
                           quoteForMessage(out));
    return true;
  }

  bool readDigestMember(const json &object, const char *key, std::string &out) {
    if (!readStringMember(object, "", key, /*allowEmpty=*/false, out))
      return false;
    if (!isSha256Hex(out))
      return fail(key, "expected 64 lower-case hex digits (sha256), found " +
                           quoteForMessage(out));
    return true;
  }

  /// Member `key` of `object` where `isKind` holds (an array, an object).
  const json *memberOfKind(const json &object, const std::string &path,
                           const char *key, const char *kind,
                           bool (json::*isKind)() const noexcept) {
    const json *value = member(object, path, key, kind);
    if (value && !(value->*isKind)()) {
      fail(joinPath(path, key), std::string("expected ") + kind + ", found " +
                                    describeJsonValue(*value));
      return nullptr;
    }
    return value;
  }
  const json *arrayMember(const json &object, const std::string &path,
                          const char *key) {
    return memberOfKind(object, path, key, "array", &json::is_array);
  }
  const json *objectMember(const json &object, const std::string &path,
                           const char *key) {
    return memberOfKind(object, path, key, "object", &json::is_object);
  }

  bool readStringArrayMember(const json &object, const char *key,
                             std::vector<std::string> &out) {
    const json *array = arrayMember(object, "", key);
    if (!array)
      return false;
    std::vector<std::string> strings;
    for (size_t i = 0; i < array->size(); ++i) {
      const json &element = (*array)[i];
      if (!element.is_string())
        return fail(indexPath(key, i),
                    "expected string, found " + describeJsonValue(element));
      strings.push_back(element.get<std::string>());
    }
    out = std::move(strings);
    return true;
  }

  /// Starts kernel `index` of `list`: an object with a plain "name"; errors
  /// from here on name the kernel.
  template <typename Record>
  bool readKernelName(const json &value, const char *list, size_t index,
                      Record &record) {
    std::string label = indexPath(list, index);
    if (!value.is_object())
      return fail(label, "expected object, found " + describeJsonValue(value));
    kernelLabel = label;
    if (!readFileNameMember(value, "name", record.name))
      return false;
    kernelLabel = label + " " + quoteForMessage(record.name);
    return true;
  }

  /// The chip, file and argument fields of both kinds of kernel.
  template <typename Record>
  bool readKernelFiles(const json &value, Record &record) {
    return readStringMember(value, "", "chip", /*allowEmpty=*/false,
                            record.chip) &&
           readFileNameMember(value, "cubin", record.cubin) &&
           readFileNameMember(value, "ptx", record.ptx) &&
           readDigestMember(value, "cubin_sha256", record.cubinSha256) &&
           readStringArrayMember(value, "args", record.args);
  }

  bool readFunction(const json &value, const std::string &path, bool isGemm,
                    KernelFunctionRecord &out);
  bool readFunctions(const json &kernel, bool isGemm,
                     std::vector<KernelFunctionRecord> &out);
  /// The array `key` of `document`, each element read by `read` into `out`.
  template <typename Record>
  bool readRecords(const json &document, const char *key,
                   bool (ManifestReader::*read)(const json &, size_t, Record &),
                   std::vector<Record> &out) {
    const json *array = arrayMember(document, "", key);
    if (!array)
      return false;
    for (size_t i = 0; i < array->size(); ++i) {
      Record record;
      if (!(this->*read)((*array)[i], i, record))
        return false;
      out.push_back(std::move(record));
    }
    return true;
  }
  bool readGemmKernel(const json &value, size_t index, GemmKernelRecord &out);
  bool readAttentionKernel(const json &value, size_t index,
                           AttentionKernelRecord &out);

  /// Which kernel serves each whitelist key, to reject a key served twice.
  std::map<std::string, size_t> kernelByKey;
};

bool ManifestReader::readFunction(const json &value, const std::string &path,
                                  bool isGemm, KernelFunctionRecord &out) {
  if (!value.is_object())
    return fail(path, "expected object, found " + describeJsonValue(value));
  KernelFunctionRecord record;
  if (!readStringMember(value, path, "symbol", /*allowEmpty=*/false,
                        record.symbol))
    return false;
  if (!isIdentifier(record.symbol))
    return fail(joinPath(path, "symbol"), "expected a C identifier, found " +
                                              quoteForMessage(record.symbol));
  if (!readStringMember(value, path, "role", /*allowEmpty=*/false, record.role))
    return false;
  if (isGemm && record.role != "main")
    return fail(joinPath(path, "role"),
                "expected \"main\", found " + quoteForMessage(record.role));

  std::string gridPath = joinPath(path, "grid");
  const json *grid = objectMember(value, path, "grid");
  if (!grid || !readIntMember(*grid, gridPath, "x", 1, record.grid.x) ||
      !readIntMember(*grid, gridPath, "y_per_m", 1, record.grid.yPerM) ||
      !readIntMember(*grid, gridPath, "z", 1, record.grid.z))
    return false;

  std::string blockPath = joinPath(path, "block");
  const json *block = arrayMember(value, path, "block");
  if (!block)
    return false;
  if (block->size() != 3)
    return fail(blockPath, "expected 3 integers [x, y, z], found " +
                               describeJsonValue(*block));
  for (size_t i = 0; i < 3; ++i)
    if (!readInt((*block)[i], indexPath(blockPath, i), 1, 1024,
                 record.block[i]))
      return false;
  int64_t threads = record.block[0] * record.block[1] * record.block[2];
  if (threads > 1024)
    return fail(blockPath, "expected at most 1024 threads per block, found " +
                               std::to_string(threads));

  if (!readIntMember(value, path, "dynamic_shared_bytes", 0,
                     record.dynamicSharedBytes))
    return false;

  std::string resourcesPath = joinPath(path, "resources");
  const json *resources = objectMember(value, path, "resources");
  KernelResources &r = record.resources;
  if (!resources ||
      !readIntMember(*resources, resourcesPath, "registers", 0, r.registers) ||
      !readIntMember(*resources, resourcesPath, "shared_bytes", 0,
                     r.sharedBytes) ||
      !readIntMember(*resources, resourcesPath, "stack_bytes", 0,
                     r.stackBytes) ||
      !readIntMember(*resources, resourcesPath, "spill_store_bytes", 0,
                     r.spillStoreBytes) ||
      !readIntMember(*resources, resourcesPath, "spill_load_bytes", 0,
                     r.spillLoadBytes))
    return false;
  out = std::move(record);
  return true;
}

bool ManifestReader::readFunctions(const json &kernel, bool isGemm,
                                   std::vector<KernelFunctionRecord> &out) {
  const json *functions = arrayMember(kernel, "", "functions");
  if (!functions)
    return false;
  if (functions->empty())
    return fail("functions", "expected at least one function, found none");
  out.clear();
  for (size_t i = 0; i < functions->size(); ++i) {
    KernelFunctionRecord record;
    if (!readFunction((*functions)[i], indexPath("functions", i), isGemm,
                      record))
      return false;
    out.push_back(std::move(record));
  }
  return true;
}

bool ManifestReader::readGemmKernel(const json &value, size_t index,
                                    GemmKernelRecord &out) {
  GemmKernelRecord record;
  if (!readKernelName(value, "gemm_kernels", index, record))
    return false;

  int64_t mode = 0;
  if (!readStringArrayMember(value, "keys", record.keys) ||
      !readIntMember(value, "", "n", 1, record.n) ||
      !readIntMember(value, "", "k", 1, record.k) ||
      !readIntMember(value, "", "mode", 0, mode, kGemmModeCount - 1))
    return false;
  record.mode = int(mode);
  if (record.keys.empty())
    return fail("keys", "expected at least one whitelist key, found none");
  for (size_t i = 0; i < record.keys.size(); ++i) {
    const std::string &keyText = record.keys[i];
    GemmKey key;
    std::string reason;
    if (!parseGemmKey(keyText, key, reason))
      return fail(indexPath("keys", i),
                  "key " + quoteForMessage(keyText) + ": " + reason);
    if (key.n != record.n || key.k != record.k || key.mode != record.mode)
      return fail(
          indexPath("keys", i),
          "key " + quoteForMessage(keyText) +
              " does not match the kernel's n = " + std::to_string(record.n) +
              ", k = " + std::to_string(record.k) +
              ", mode = " + std::to_string(record.mode));
    auto [it, inserted] = kernelByKey.emplace(keyText, index);
    if (!inserted)
      return fail(indexPath("keys", i),
                  "key " + quoteForMessage(keyText) +
                      " is already served by gemm_kernels[" +
                      std::to_string(it->second) + "]");
  }

  const json *tile = arrayMember(value, "", "tile");
  if (!tile)
    return false;
  if (tile->size() != 4)
    return fail("tile", "expected 4 integers [bm, bn, bk, split], found " +
                            describeJsonValue(*tile));
  int64_t *tileFields[4] = {&record.tile.bm, &record.tile.bn, &record.tile.bk,
                            &record.tile.split};
  for (size_t i = 0; i < 4; ++i)
    if (!readInt((*tile)[i], indexPath("tile", i), 1,
                 std::numeric_limits<int64_t>::max(), *tileFields[i]))
      return false;
  std::string reason;
  if (!checkTileLegal(record.n, record.k, record.mode, record.tile, reason))
    return fail("tile", reason);

  if (!readKernelFiles(value, record))
    return false;
  if (record.args != gemmKernelArgNames(record.mode)) {
    std::string expected;
    for (const std::string &name : gemmKernelArgNames(record.mode))
      expected += (expected.empty() ? "" : ", ") + name;
    std::string found;
    for (const std::string &name : record.args)
      found += (found.empty() ? "" : ", ") + quoteForMessage(name);
    return fail("args", "expected [" + expected + "], found [" + found + "]");
  }

  if (!readFunctions(value, /*isGemm=*/true, record.functions))
    return false;
  if (record.functions.size() != 1)
    return fail("functions",
                "expected 1 \"main\" function (split-K reduces inside it), "
                "found " +
                    std::to_string(record.functions.size()) + " functions");
  kernelLabel.clear();
  out = std::move(record);
  return true;
}

bool ManifestReader::readAttentionKernel(const json &value, size_t index,
                                         AttentionKernelRecord &out) {
  AttentionKernelRecord record;
  if (!readKernelName(value, "attention_kernels", index, record) ||
      !readKernelFiles(value, record))
    return false;
  const json *params = objectMember(value, "", "params");
  if (!params)
    return false;
  for (auto it = params->begin(); it != params->end(); ++it) {
    int64_t number = 0;
    if (!readInt(it.value(), "params." + it.key(),
                 std::numeric_limits<int64_t>::min(),
                 std::numeric_limits<int64_t>::max(), number))
      return false;
    record.params[it.key()] = number;
  }
  if (!readFunctions(value, /*isGemm=*/false, record.functions))
    return false;
  kernelLabel.clear();
  out = std::move(record);
  return true;
}

bool ManifestReader::readManifest(const json &document, Manifest &out) {
  if (!document.is_object()) {
    error = fileName + ": expected a JSON object, found " +
            describeJsonValue(document);
    return false;
  }
  Manifest manifest;
  // The version comes first: a newer manifest may differ in any other field.
  const json *version = member(document, "", "format_version", "integer");
  if (!version)
    return false;
  if (detail::jsonInt64(*version) != kManifestFormatVersion)
    return fail("format_version", "expected " +
                                      std::to_string(kManifestFormatVersion) +
                                      ", found " + describeJsonValue(*version));
  manifest.formatVersion = kManifestFormatVersion;

  if (!readStringMember(document, "", "moss_version", /*allowEmpty=*/false,
                        manifest.mossVersion) ||
      !readStringMember(document, "", "chip", /*allowEmpty=*/false,
                        manifest.chip) ||
      !readStringMember(document, "", "pipeline", /*allowEmpty=*/true,
                        manifest.pipeline) ||
      !readDigestMember(document, "whitelist_sha256",
                        manifest.whitelistSha256) ||
      !readDigestMember(document, "cache_key", manifest.cacheKey))
    return false;

  if (!readRecords(document, "gemm_kernels", &ManifestReader::readGemmKernel,
                   manifest.gemmKernels) ||
      !readRecords(document, "attention_kernels",
                   &ManifestReader::readAttentionKernel,
                   manifest.attentionKernels))
    return false;
  out = std::move(manifest);
  return true;
}

ordered_json functionToJson(const KernelFunctionRecord &function) {
  const KernelResources &r = function.resources;
  ordered_json value;
  value["symbol"] = function.symbol;
  value["role"] = function.role;
  value["grid"] = {{"x", function.grid.x},
                   {"y_per_m", function.grid.yPerM},
                   {"z", function.grid.z}};
  value["block"] = function.block;
  value["dynamic_shared_bytes"] = function.dynamicSharedBytes;
  value["resources"] = {{"registers", r.registers},
                        {"shared_bytes", r.sharedBytes},
                        {"stack_bytes", r.stackBytes},
                        {"spill_store_bytes", r.spillStoreBytes},
                        {"spill_load_bytes", r.spillLoadBytes}};
  return value;
}

ordered_json functionsToJson(const std::vector<KernelFunctionRecord> &list) {
  ordered_json array = ordered_json::array();
  for (const KernelFunctionRecord &function : list)
    array.push_back(functionToJson(function));
  return array;
}

ordered_json manifestToJson(const Manifest &manifest) {
  ordered_json document;
  document["format_version"] = manifest.formatVersion;
  document["moss_version"] = manifest.mossVersion;
  document["chip"] = manifest.chip;
  document["pipeline"] = manifest.pipeline;
  document["whitelist_sha256"] = manifest.whitelistSha256;
  document["cache_key"] = manifest.cacheKey;
  ordered_json gemmKernels = ordered_json::array();
  for (const GemmKernelRecord &kernel : manifest.gemmKernels) {
    ordered_json value;
    value["name"] = kernel.name;
    value["keys"] = kernel.keys;
    value["n"] = kernel.n;
    value["k"] = kernel.k;
    value["mode"] = kernel.mode;
    value["tile"] = {kernel.tile.bm, kernel.tile.bn, kernel.tile.bk,
                     kernel.tile.split};
    value["chip"] = kernel.chip;
    value["cubin"] = kernel.cubin;
    value["ptx"] = kernel.ptx;
    value["cubin_sha256"] = kernel.cubinSha256;
    value["args"] = kernel.args;
    value["functions"] = functionsToJson(kernel.functions);
    gemmKernels.push_back(std::move(value));
  }
  document["gemm_kernels"] = std::move(gemmKernels);
  ordered_json attentionKernels = ordered_json::array();
  for (const AttentionKernelRecord &kernel : manifest.attentionKernels) {
    ordered_json value;
    value["name"] = kernel.name;
    value["chip"] = kernel.chip;
    value["cubin"] = kernel.cubin;
    value["ptx"] = kernel.ptx;
    value["cubin_sha256"] = kernel.cubinSha256;
    value["args"] = kernel.args;
    value["params"] = ordered_json::object();
    for (const auto &[key, number] : kernel.params)
      value["params"][key] = number;
    value["functions"] = functionsToJson(kernel.functions);
    attentionKernels.push_back(std::move(value));
  }
  document["attention_kernels"] = std::move(attentionKernels);
  return document;
}

} // namespace

std::string manifestPath(const std::string &dir) {
  if (dir.empty())
    return kManifestFileName;
  return dir.back() == '/' ? dir + kManifestFileName
                           : dir + "/" + kManifestFileName;
}

bool parseManifest(std::string_view bytes,
                   const std::string &fileNameForMessages, Manifest &out,
                   std::string &err) {
  try {
    json document;
    std::string reason;
    if (!detail::parseJson(bytes, document, reason)) {
      err = fileNameForMessages + ": " + reason;
      return false;
    }
    ManifestReader reader(fileNameForMessages);
    if (!reader.readManifest(document, out)) {
      err = reader.error;
      return false;
    }
    return true;
  } catch (const std::exception &e) {
    err = fileNameForMessages + ": cannot read manifest: " + e.what();
    return false;
  }
}

bool readManifest(const std::string &dir, Manifest &out, std::string &err) {
  std::string path = manifestPath(dir);
  std::string bytes;
  if (!readFile(path, bytes, err))
    return false;
  return parseManifest(bytes, path, out, err);
}

std::string serializeManifest(const Manifest &manifest) {
  try {
    // Invalid UTF-8 cannot be written as JSON; replacing it makes the
    // validation in writeManifestAtomic see (and usually reject) the change.
    return manifestToJson(manifest).dump(
               2, ' ', /*ensure_ascii=*/false,
               ordered_json::error_handler_t::replace) +
           "\n";
  } catch (const std::exception &) {
    return std::string();
  }
}

bool writeManifestAtomic(const std::string &dir, const Manifest &manifest,
                         std::string &err) {
  std::string path = manifestPath(dir);
  std::string bytes = serializeManifest(manifest);
  if (bytes.empty()) {
    err = path + ": cannot serialize manifest";
    return false;
  }
  // Never write what readManifest would reject.
  Manifest reread;
  std::string reason;
  if (!parseManifest(bytes, path, reread, reason)) {
    err = "refusing to write an invalid manifest: " + reason;
    return false;
  }
  return writeFileAtomic(path, bytes, err);
}

} // namespace moss::config
