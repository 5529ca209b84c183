//===- MlirNames.h - the MLIR names the kernel builders use -----*- C++ -*-===//
//
// The kernel builders spell MLIR types and dialect namespaces unqualified;
// these declarations say which, in one place, instead of a using-directive
// in every emitter header.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_LIB_KERNELS_COMMON_MLIRNAMES_H
#define MOSS_LIB_KERNELS_COMMON_MLIRNAMES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

namespace moss {
namespace arith = mlir::arith;
namespace gpu = mlir::gpu;
namespace LLVM = mlir::LLVM;
namespace math = mlir::math;
namespace NVVM = mlir::NVVM;
namespace scf = mlir::scf;
using mlir::ArrayRef;
using mlir::FunctionType;
using mlir::Location;
using mlir::MLIRContext;
using mlir::OpBuilder;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;
using mlir::VectorType;
} // namespace moss

#endif // MOSS_LIB_KERNELS_COMMON_MLIRNAMES_H
