//===- PtxasReport.cpp - read ptxas -v resource lines ---------------------===//
#include "moss/AOT/PtxasReport.h"

#include <regex>
#include <set>
#include <sstream>

using namespace moss;

bool aot::parsePtxasReport(std::string_view text,
                           std::map<std::string, config::KernelResources> &out,
                           std::string &err) {
  // ptxas names the function on a "Compiling entry function 'F'" or
  // "Function properties for F" line, then reports for it.
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");

  std::map<std::string, config::KernelResources> result;
  std::set<std::string> sawFrame, sawUsed;
  std::string current;
  std::istringstream lines{std::string(text)};
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, compiling) ||
        std::regex_search(line, match, properties)) {
      current = match[1];
      result[current];
      continue;
    }
    if (current.empty())
      continue;
    config::KernelResources &res = result[current];
    if (std::regex_search(line, match, frame)) {
      res.stackBytes = std::stoll(match[1]);
      res.spillStoreBytes = std::stoll(match[2]);
      res.spillLoadBytes = std::stoll(match[3]);
      sawFrame.insert(current);
    }
    if (std::regex_search(line, match, used)) {
      res.registers = std::stoll(match[1]);
      sawUsed.insert(current);
      if (std::regex_search(line, match, smem))
        res.sharedBytes = std::stoll(match[1]);
    }
  }
  for (const auto &[name, res] : result) {
    if (!sawFrame.count(name) || !sawUsed.count(name)) {
      err = "ptxas report for '" + name +
            "' lacks its stack/spill or register line (was ptxas run with -v?)";
      return false;
    }
  }
  if (result.empty()) {
    err = "ptxas report names no function (was ptxas run with -v?)";
    return false;
  }
  out = std::move(result);
  return true;
}
