//===- Passes.h - moss conversion passes ------------------------*- C++ -*-===//
#ifndef MOSS_CONVERSION_PASSES_H
#define MOSS_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace moss {
#define GEN_PASS_DECL
#include "moss/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "moss/Conversion/Passes.h.inc"
} // namespace moss

#endif // MOSS_CONVERSION_PASSES_H
