//===- MossDialect.td - the moss dialect -------------------*- tablegen -*-===//
#ifndef MOSS_DIALECT
#define MOSS_DIALECT

include "mlir/IR/OpBase.td"

def Moss_Dialect : Dialect {
  let name = "moss";
  let summary = "Kernels of the MOSS-Audio-Tokenizer-v2 streaming decoder";
  let description = [{
    The `moss` dialect describes the two hot kernel families of the codec's
    streaming decoder: the FFN GEMM with a fused epilogue (`moss.linear`) and
    masked streaming attention over a ring KV cache
    (`moss.streaming_attention`).

    The ops take and return ranked tensors. Value semantics keep the ops free
    of aliasing questions, let the verifiers state shapes with dynamic batch
    and row dimensions (`M`, `B`, `T` are runtime values), and leave the
    choice of storage to the lowering: `moss-convert-to-gpu` materializes
    buffers and launches generated kernels whose row counts are kernel
    arguments. Where storage is part of the contract (the `bthd` output of
    attention), an attribute states it and the lowering realizes it as a
    strided view.
  }];
  let cppNamespace = "::moss";
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Defined beside the attribute storage classes (MossAttrs.cpp).
    void registerAttributes();
  }];
}

#endif // MOSS_DIALECT
