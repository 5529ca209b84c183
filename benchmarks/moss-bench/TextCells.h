//===- TextCells.h - Numbers as table cells and JSON values -----*- C++ -*-===//
//
// Header-only and free of CUDA: moss-bench, moss-tune and moss-tune's
// report library (built without CUDA) print measurements the same way.
//
//===----------------------------------------------------------------------===//

#ifndef MOSS_BENCH_TEXTCELLS_H
#define MOSS_BENCH_TEXTCELLS_H

#include <cmath>
#include <cstdio>
#include <string>

namespace moss::bench {

/// `v` printed with `format` (one double conversion, e.g. "%.2f" for us per
/// call), or `none` when `v` is negative: the benchmarks' "not measured".
inline std::string formatMeasured(double v, const char *format = "%.2f",
                                  const char *none = "-") {
  if (v < 0)
    return none;
  char text[32];
  std::snprintf(text, sizeof(text), format, v);
  return text;
}

/// `v` as a JSON number, or null when it was not measured (negative) or is
/// not finite: JSON has no inf or nan (a relative L2 is infinite when the
/// output holds a non-finite element).
inline std::string jsonNumber(double v) {
  return std::isfinite(v) ? formatMeasured(v, "%.4g", "null") : "null";
}

} // namespace moss::bench

#endif // MOSS_BENCH_TEXTCELLS_H
