//===- Passes.td - moss dialect passes ---------------------*- tablegen -*-===//
#ifndef MOSS_DIALECT_MOSS_TRANSFORMS_PASSES
#define MOSS_DIALECT_MOSS_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def MossSelectTiles : Pass<"moss-select-tiles", "::mlir::ModuleOp"> {
  let summary = "Attach each moss.linear's tile from the offline whitelist";
  let description = [{
    Reads the whitelist JSON (`"M,N,K,mode"` -> `[bm, bn, bk, split]`) named
    by the `whitelist` option, or by `MOSS_CODEC_GEMM_CONFIG` when the option
    is empty, and attaches `tile` to every `moss.linear` whose static M, N, K
    and epilogue form a key. An op without a key (or with a dynamic M) is
    marked `vendor_fallback`. No tuning happens here: the whitelist is the
    only source of tile choices. A malformed whitelist is an error that names
    the file, the key and the reason.
  }];
  let options = [
    Option<"whitelist", "whitelist", "std::string", /*default=*/"",
           "Path of the whitelist JSON (default: $MOSS_CODEC_GEMM_CONFIG)">
  ];
  let dependentDialects = ["::moss::MossDialect"];
}

#endif // MOSS_DIALECT_MOSS_TRANSFORMS_PASSES
