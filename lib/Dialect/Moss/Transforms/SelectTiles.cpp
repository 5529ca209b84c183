//===- SelectTiles.cpp - attach whitelist tiles to moss.linear ------------===//
//
// The whitelist is the only source of tile choices: this pass looks each
// moss.linear (and moss.qkv_rope_cache, M = B * T) up by its exact (M, N, K,
// mode) and either attaches the tile or marks the op for the vendor fallback.
//
//===----------------------------------------------------------------------===//
#include "moss/Config/Whitelist.h"
#include "moss/Dialect/Moss/IR/MossOps.h"
#include "moss/Dialect/Moss/Transforms/Passes.h"

#include <cstdlib>
#include <optional>

namespace moss {
#define GEN_PASS_DEF_MOSSSELECTTILES
#include "moss/Dialect/Moss/Transforms/Passes.h.inc"
} // namespace moss

using namespace mlir;
using namespace moss;

namespace {
/// Attaches the tile of key (m, n, k, mode) in `table` to `op` (a
/// moss.linear or moss.qkv_rope_cache), or marks it for the vendor fallback
/// (also when a size is dynamic: no key names it).
template <typename Op>
void attachTile(Op op, const config::Whitelist &table, int64_t m, int64_t n,
                int64_t k, int mode) {
  const config::WhitelistEntry *entry = nullptr;
  if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(n) &&
      !ShapedType::isDynamic(k))
    entry = table.find(m, n, k, mode);
  op.removeTileAttr();
  op.removeVendorFallbackAttr();
  if (entry) {
    const config::GemmTile &t = entry->tile;
    op.setTileAttr(TileAttr::get(op.getContext(), t.bm, t.bn, t.bk, t.split));
  } else {
    op.setVendorFallback(true);
  }
}

void attachTiles(ModuleOp module, const config::Whitelist &table) {
  module.walk([&](LinearOp op) {
    auto x = cast<RankedTensorType>(op.getX().getType());
    auto w = cast<RankedTensorType>(op.getW().getType());
    attachTile(op, table, x.getDimSize(0), w.getDimSize(0), w.getDimSize(1),
               op.getMode());
  });
  // Its GEMM has M = B * T rows.
  module.walk([&](QkvRopeCacheOp op) {
    auto x = cast<RankedTensorType>(op.getX().getType());
    auto w = cast<RankedTensorType>(op.getW().getType());
    int64_t b = x.getDimSize(0), t = x.getDimSize(1);
    int64_t m = ShapedType::isDynamic(b) || ShapedType::isDynamic(t)
                    ? ShapedType::kDynamic
                    : b * t;
    attachTile(op, table, m, w.getDimSize(0), w.getDimSize(1), op.getMode());
  });
}

struct SelectTilesPass : moss::impl::MossSelectTilesBase<SelectTilesPass> {
  using Base::Base;
  /// With a whitelist already read (moss-aot), instead of the option's path.
  explicit SelectTilesPass(config::Whitelist table) : given(std::move(table)) {}

  void runOnOperation() override {
    if (given)
      return attachTiles(getOperation(), *given);
    std::string path = whitelist;
    if (path.empty())
      if (const char *env = std::getenv("MOSS_CODEC_GEMM_CONFIG"))
        path = env;
    if (path.empty()) {
      getOperation().emitError()
          << "moss-select-tiles: no whitelist: pass whitelist=PATH or set "
             "MOSS_CODEC_GEMM_CONFIG";
      return signalPassFailure();
    }
    config::Whitelist table;
    std::string err;
    if (!config::Whitelist::load(path, table, err)) {
      getOperation().emitError() << "moss-select-tiles: " << err;
      return signalPassFailure();
    }
    attachTiles(getOperation(), table);
  }

  std::optional<config::Whitelist> given;
};
} // namespace

std::unique_ptr<Pass> moss::createMossSelectTilesPass(config::Whitelist table) {
  return std::make_unique<SelectTilesPass>(std::move(table));
}
