//===- PtxasReport.h - read ptxas -v resource lines -------------*- C++ -*-===//
//
// ptxas -v prints, per function, "Function properties for F" with stack and
// spill bytes and "Used R registers, ... S bytes smem". The AOT build records
// them in the manifest and refuses kernels that spill.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_AOT_PTXASREPORT_H
#define MOSS_AOT_PTXASREPORT_H

#include "moss/Config/Manifest.h"

#include <map>
#include <string>
#include <string_view>

namespace moss::aot {
/// Resource use per function symbol. Returns false with `err` when a
/// function's report is incomplete or unreadable.
bool parsePtxasReport(std::string_view text,
                      std::map<std::string, config::KernelResources> &out,
                      std::string &err);
} // namespace moss::aot

#endif // MOSS_AOT_PTXASREPORT_H
