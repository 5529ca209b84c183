// Lists a whitelist's keys and tiles with the installed moss::config:
//   list_whitelist WHITELIST.json
#include "moss/Config/Whitelist.h"

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: list_whitelist WHITELIST.json\n");
    return 2;
  }
  moss::config::Whitelist whitelist;
  std::string err;
  if (!moss::config::Whitelist::load(argv[1], whitelist, err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  for (const moss::config::WhitelistEntry &e : whitelist.entries())
    std::printf("%s -> [%lld, %lld, %lld, %lld]\n", e.keyText.c_str(),
                static_cast<long long>(e.tile.bm),
                static_cast<long long>(e.tile.bn),
                static_cast<long long>(e.tile.bk),
                static_cast<long long>(e.tile.split));
  return 0;
}
