//===- MossAttrs.td - moss attributes and enums ------------*- tablegen -*-===//
#ifndef MOSS_ATTRS
#define MOSS_ATTRS

include "moss/Dialect/Moss/IR/MossDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// The numbering is the whitelist key's `mode`.
def Moss_Epilogue : I32EnumAttr<"Epilogue", "fused GEMM epilogue", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"layerscale_residual", 2>
  ]> {
  let cppNamespace = "::moss";
  let genSpecializedAttr = 0;
}
def Moss_EpilogueAttr : EnumAttr<Moss_Dialect, Moss_Epilogue, "epilogue">;

def Moss_AttentionLayout : I32EnumAttr<"AttentionLayout",
    "storage order of the attention output", [
    I32EnumAttrCase<"bthd", 0>,
    I32EnumAttrCase<"bhtd", 1>
  ]> {
  let cppNamespace = "::moss";
  let genSpecializedAttr = 0;
}
def Moss_AttentionLayoutAttr
    : EnumAttr<Moss_Dialect, Moss_AttentionLayout, "layout">;

def Moss_TileAttr : AttrDef<Moss_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "GEMM tile configuration [bm, bn, bk, split]";
  let description = [{
    The tile of a generated GEMM kernel, as named by a whitelist entry:
    `bm` rows of `x` and `bn` rows of `w` per CTA, `bk` elements of K per
    pipeline step, and `split` CTAs sharing the K range (their FP32 partial
    sums are reduced before the epilogue). Tile sizes are powers of two,
    `split` >= 1.

    ```mlir
    #moss.tile<16, 64, 64, 1>
    ```
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk,
                        "int64_t":$split);
  let assemblyFormat = "`<` $bm `,` $bn `,` $bk `,` $split `>`";
  let genVerifyDecl = 1;
}

#endif // MOSS_ATTRS
