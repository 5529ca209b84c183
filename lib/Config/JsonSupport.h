//===- JsonSupport.h - Private nlohmann/json helpers -----------*- C++ -*-===//
//
// Private to lib/Config: public headers stay free of nlohmann/json so that
// code built with -fno-exceptions can include them.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_LIB_CONFIG_JSONSUPPORT_H
#define MOSS_LIB_CONFIG_JSONSUPPORT_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moss::config::detail {

/// Parses `bytes` as one JSON document. On a syntax error returns false with
/// `reason` = "malformed JSON at line L, column C (byte offset B): <what>"
/// (line and column 1-based, offset 0-based).
/// `callback` (optional) sees every parse event, e.g. each object key.
bool parseJson(std::string_view bytes, nlohmann::json &out, std::string &reason,
               const nlohmann::json::parser_callback_t &callback = nullptr);

/// parseJson that also records the keys of one object in file order, with
/// repeats (nlohmann's object sorts its keys and keeps only the last of
/// duplicates): the top-level object's keys when `member` is empty, else the
/// keys of the object under the top-level key `member`.
bool parseJsonKeepingKeyOrder(std::string_view bytes, nlohmann::json &out,
                              std::string &reason, const std::string &member,
                              std::vector<std::string> &keys);

/// The value when it is a JSON integer within int64's range; nullopt for
/// anything else (floats included: converting one out of range is undefined,
/// and 1.0 is not a count).
std::optional<int64_t> jsonInt64(const nlohmann::json &value);

/// Short description of a value for error messages: `string "abc"`,
/// `number 16.5`, `boolean true`, `null`, `array`, `object`.
std::string describeJsonValue(const nlohmann::json &value);

/// `text` in double quotes with quotes, backslashes and non-printable bytes
/// escaped and very long text shortened, safe to embed in a message.
std::string quoteForMessage(std::string_view text);

} // namespace moss::config::detail

#endif // MOSS_LIB_CONFIG_JSONSUPPORT_H
