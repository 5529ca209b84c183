//===- Plot.h - Line plots of us per call against M, as PNG -----*- C++ -*-===//
//
// A small rasterizer (lines, markers, a 5x7 bitmap font) for the tuner's
// report; log2 scale in M, linear in microseconds from 0. No dependencies.
//
//===----------------------------------------------------------------------===//
#ifndef MOSS_TUNE_PLOT_H
#define MOSS_TUNE_PLOT_H

#include <cstdint>
#include <string>
#include <vector>

namespace moss::tune {

struct PlotPoint {
  int64_t m;
  double us;
};

struct PlotSeries {
  std::string label;
  uint8_t r, g, b;
  std::vector<PlotPoint> points; ///< Sorted by m; us < 0 points are skipped.
  bool markers = true;           ///< Draw a square at every point.
};

struct PlotPanel {
  std::string title;
  std::vector<PlotSeries> series;
};

/// Panels in a grid of two columns (one when there is one panel); returns
/// the PNG bytes.
std::string renderPlotPng(const std::vector<PlotPanel> &panels);

} // namespace moss::tune

#endif // MOSS_TUNE_PLOT_H
