//===- JsonSupport.cpp - nlohmann/json helpers private to MossConfig ------===//

#include "JsonSupport.h"

#include <algorithm>
#include <limits>

namespace moss::config::detail {

namespace {

/// nlohmann's what() is "[json.exception.parse_error.101] parse error at line
/// 1, column 7: syntax error ..."; keep only the part after the position,
/// since the caller reports the position itself.
std::string stripNlohmannPrefix(const std::string &what) {
  std::string text = what;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find("] ");
    if (close != std::string::npos)
      text = text.substr(close + 2);
  }
  const std::string positionPrefix = "parse error at ";
  if (text.rfind(positionPrefix, 0) == 0) {
    size_t colon = text.find(": ");
    if (colon != std::string::npos)
      text = text.substr(colon + 2);
  } else if (text.rfind("parse error: ", 0) == 0) {
    text = text.substr(13);
  }
  return text;
}

} // namespace

bool parseJson(std::string_view bytes, nlohmann::json &out, std::string &reason,
               const nlohmann::json::parser_callback_t &callback) {
  try {
    out = nlohmann::json::parse(bytes.begin(), bytes.end(), callback,
                                /*allow_exceptions=*/true,
                                /*ignore_comments=*/false);
    return true;
  } catch (const nlohmann::json::parse_error &e) {
    // e.byte is the 1-based offset of the byte that could not be consumed
    // (size + 1 when the input ended early).
    size_t index = std::min(e.byte > 0 ? e.byte - 1 : 0, bytes.size());
    std::string_view before = bytes.substr(0, index);
    size_t line = 1 + size_t(std::count(before.begin(), before.end(), '\n'));
    size_t lastNewline = before.rfind('\n');
    size_t column =
        lastNewline == std::string_view::npos ? index + 1 : index - lastNewline;
    reason = "malformed JSON at line " + std::to_string(line) + ", column " +
             std::to_string(column) + " (byte offset " + std::to_string(index) +
             "): " + stripNlohmannPrefix(e.what());
    return false;
  } catch (const std::exception &e) {
    reason = std::string("malformed JSON: ") + e.what();
    return false;
  }
}

bool parseJsonKeepingKeyOrder(std::string_view bytes, nlohmann::json &out,
                              std::string &reason, const std::string &member,
                              std::vector<std::string> &keys) {
  std::string topLevelKey;
  nlohmann::json::parser_callback_t recordKeys =
      [&](int depth, nlohmann::json::parse_event_t event,
          nlohmann::json &parsed) {
        if (event != nlohmann::json::parse_event_t::key)
          return true;
        if (depth == 1) {
          topLevelKey = parsed.get<std::string>();
          if (member.empty())
            keys.push_back(topLevelKey);
        } else if (depth == 2 && !member.empty() && topLevelKey == member) {
          keys.push_back(parsed.get<std::string>());
        }
        return true;
      };
  return parseJson(bytes, out, reason, recordKeys);
}

std::optional<int64_t> jsonInt64(const nlohmann::json &value) {
  if (value.is_number_unsigned()) {
    uint64_t number = value.get<uint64_t>();
    if (number > uint64_t(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return int64_t(number);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return std::nullopt;
}

std::string describeJsonValue(const nlohmann::json &value) {
  switch (value.type()) {
  case nlohmann::json::value_t::string:
    return "string " + quoteForMessage(value.get_ref<const std::string &>());
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
  case nlohmann::json::value_t::number_float:
    return "number " + value.dump();
  case nlohmann::json::value_t::boolean:
    return std::string("boolean ") + (value.get<bool>() ? "true" : "false");
  case nlohmann::json::value_t::null:
    return "null";
  case nlohmann::json::value_t::array:
    return "array of " + std::to_string(value.size()) + " elements";
  case nlohmann::json::value_t::object:
    return "object";
  default:
    return value.type_name();
  }
}

std::string quoteForMessage(std::string_view text) {
  constexpr size_t kMaxShown = 80;
  static const char kHex[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      quoted += char(c);
    } else {
      quoted += "\\x";
      quoted += kHex[c >> 4];
      quoted += kHex[c & 0xf];
    }
  }
  if (text.size() > kMaxShown)
    quoted += "...";
  return quoted + "\"";
}

} // namespace moss::config::detail
