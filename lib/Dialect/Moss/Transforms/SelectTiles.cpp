//===- SelectTiles.cpp - attach whitelist tiles to moss.linear ------------===//
//
// The whitelist is the only source of tile choices: this pass looks each
// moss.linear up by its exact (M, N, K, mode) and either attaches the tile or
// marks the op for the vendor fallback.
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
/// Attaches each moss.linear's tile from `table`, or marks it for the vendor
/// fallback.
void attachTiles(ModuleOp module, const config::Whitelist &table) {
  MLIRContext *ctx = module.getContext();
  module.walk([&](LinearOp op) {
    auto x = cast<RankedTensorType>(op.getX().getType());
    auto w = cast<RankedTensorType>(op.getW().getType());
    int64_t m = x.getDimSize(0), n = w.getDimSize(0), k = w.getDimSize(1);
    const config::WhitelistEntry *entry = nullptr;
    if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(n) &&
        !ShapedType::isDynamic(k))
      entry = table.find(m, n, k, op.getMode());
    op.removeTileAttr();
    op.removeVendorFallbackAttr();
    if (entry) {
      const config::GemmTile &t = entry->tile;
      op.setTileAttr(TileAttr::get(ctx, t.bm, t.bn, t.bk, t.split));
    } else {
      op.setVendorFallback(true);
    }
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
