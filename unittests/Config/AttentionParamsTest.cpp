//===- AttentionParamsTest.cpp - the parameter list against its docs -----===//
//
// kAttentionParams is the one list of the attention kernel's parameters;
// docs/kernel-abi.md's table must say the same: the names in order, their
// kinds and their count.
//
//===----------------------------------------------------------------------===//
#include "moss/Config/AttentionParams.h"
#include "moss/Config/AttentionLaunch.h"
#include "moss/Config/FileUtil.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace moss::config;

namespace {

struct DocParam {
  std::string name, type;
};

/// The rows of the parameter table that follows "They take N parameters" in
/// docs/kernel-abi.md: each backticked name of the second column with the
/// row's type column; `count` is N.
std::vector<DocParam> documentedParams(int &count) {
  std::string text, err;
  EXPECT_TRUE(
      readFile(std::string(MOSS_DOCS_DIR) + "/kernel-abi.md", text, err))
      << err;
  std::smatch match;
  static const std::regex takes("They take ([0-9]+) parameters");
  EXPECT_TRUE(std::regex_search(text, match, takes));
  count = match.empty() ? -1 : std::stoi(match[1]);
  std::istringstream in(text.substr(match.empty() ? 0 : match.position(0)));
  std::vector<DocParam> params;
  std::string line;
  bool inTable = false;
  static const std::regex cells(R"(^\|([^|]*)\|([^|]*)\|([^|]*)\|)");
  static const std::regex name("`([A-Za-z_]+)`");
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (inTable)
        break;
      continue;
    }
    inTable = true;
    std::smatch row;
    if (!std::regex_search(line, row, cells) ||
        row[1].str().find('#') != std::string::npos ||
        row[1].str().find("---") != std::string::npos)
      continue;
    std::string names = row[2], type = row[3];
    for (std::sregex_iterator it(names.begin(), names.end(), name), end;
         it != end; ++it)
      params.push_back({(*it)[1], type});
  }
  return params;
}

/// The kind a type column describes.
bool kindMatches(AttentionParamKind kind, const std::string &type) {
  switch (kind) {
  case AttentionParamKind::GlobalPointer:
    return type.find("device pointer") != std::string::npos;
  case AttentionParamKind::Int64:
    return type.find("int64") != std::string::npos;
  case AttentionParamKind::Int32:
    return type.find("int32") != std::string::npos;
  case AttentionParamKind::Float32:
    return type.find("float") != std::string::npos;
  case AttentionParamKind::TensorMap:
    return type.find("CUtensorMap") != std::string::npos;
  }
  return false;
}

TEST(AttentionParamsTest, DocsTableIsTheParameterList) {
  int count = 0;
  std::vector<DocParam> documented = documentedParams(count);
  EXPECT_EQ(count, kAttentionParamCount);
  ASSERT_EQ(documented.size(), size_t(kAttentionParamCount));
  for (int i = 0; i < kAttentionParamCount; ++i) {
    EXPECT_EQ(documented[i].name, kAttentionParams[i].name)
        << "parameter " << i;
    EXPECT_TRUE(kindMatches(kAttentionParams[i].kind, documented[i].type))
        << "parameter " << i << " (" << kAttentionParams[i].name
        << "): the docs say \"" << documented[i].type << "\"";
  }
}

TEST(AttentionParamsTest, ManifestArgsComeFromTheList) {
  const std::vector<std::string> &names = attentionKernelArgNames();
  ASSERT_EQ(names.size(), size_t(kAttentionParamCount));
  for (int i = 0; i < kAttentionParamCount; ++i)
    EXPECT_EQ(names[i], kAttentionParams[i].name);
  EXPECT_EQ(paramIndex(AttentionParam::Q), 0);
  EXPECT_EQ(paramIndex(AttentionParam::VMap), 26);
  EXPECT_EQ(paramIndex(AttentionParam::QueryPositionsStrideB),
            kAttentionParamCount - 1);
  EXPECT_STREQ(kAttentionParams[paramIndex(AttentionParam::Splits)].name,
               "splits");
}

} // namespace
