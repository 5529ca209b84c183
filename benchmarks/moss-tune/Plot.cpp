//===- Plot.cpp - Line plots of us per call against M, as PNG -------------===//

#include "Plot.h"
#include "PngWriter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace moss::tune {

namespace {
constexpr int kPanelWidth = 640, kPanelHeight = 440;
constexpr int kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
constexpr int kFontScale = 2;

/// 5x7 glyphs, one byte per row, bit 4 = leftmost column.
const std::map<char, std::array<uint8_t, 7>> &font() {
  static const std::map<char, std::array<uint8_t, 7>> glyphs = {
      {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
      {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
      {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
      {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
      {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
      {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
      {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
      {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
      {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
      {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
      {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
      {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},
      {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},
      {'/', {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0}},
      {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
      {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
      {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
      {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
      {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
      {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},
      {' ', {0, 0, 0, 0, 0, 0, 0}},
      {'A', {0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11}},
      {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
      {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
      {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
      {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
      {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
      {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
      {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
      {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
      {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
      {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
      {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
      {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
      {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
      {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
      {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
      {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
      {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
      {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
      {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
      {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
      {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
      {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
      {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
      {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
      {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
  };
  return glyphs;
}

struct Canvas {
  int width, height;
  std::vector<uint8_t> rgb;
  Canvas(int w, int h) : width(w), height(h), rgb(size_t(w) * h * 3, 255) {}

  void pixel(int x, int y, uint8_t r, uint8_t g, uint8_t b) {
    if (x < 0 || y < 0 || x >= width || y >= height)
      return;
    uint8_t *p = &rgb[(size_t(y) * width + x) * 3];
    p[0] = r, p[1] = g, p[2] = b;
  }
  void rect(int x0, int y0, int x1, int y1, uint8_t r, uint8_t g, uint8_t b) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        pixel(x, y, r, g, b);
  }
  /// Bresenham, `thick` pixels wide; every `dash`-th run skipped when > 0.
  void line(int x0, int y0, int x1, int y1, uint8_t r, uint8_t g, uint8_t b,
            int thick = 2, int dash = 0) {
    int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy, step = 0;
    while (true) {
      if (!dash || (step / dash) % 2 == 0)
        rect(x0, y0, x0 + thick - 1, y0 + thick - 1, r, g, b);
      ++step;
      if (x0 == x1 && y0 == y1)
        break;
      int e2 = 2 * e;
      if (e2 >= dy)
        e += dy, x0 += sx;
      if (e2 <= dx)
        e += dx, y0 += sy;
    }
  }
  void text(int x, int y, const std::string &s, uint8_t r = 0, uint8_t g = 0,
            uint8_t b = 0) {
    for (char ch : s) {
      auto it = font().find(static_cast<char>(std::toupper(ch)));
      if (it != font().end())
        for (int row = 0; row < 7; ++row)
          for (int col = 0; col < 5; ++col)
            if (it->second[row] & (0x10 >> col))
              rect(x + col * kFontScale, y + row * kFontScale,
                   x + col * kFontScale + kFontScale - 1,
                   y + row * kFontScale + kFontScale - 1, r, g, b);
      x += 6 * kFontScale;
    }
  }
};

int textWidth(const std::string &s) { return int(s.size()) * 6 * kFontScale; }

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), v == std::floor(v) ? "%.0f" : "%.1f", v);
  return text;
}

void drawPanel(Canvas &canvas, int ox, int oy, const PlotPanel &panel) {
  int64_t maxM = 1;
  double maxUs = 0.5;
  for (const PlotSeries &s : panel.series)
    for (const PlotPoint &p : s.points) {
      maxM = std::max(maxM, p.m);
      maxUs = std::max(maxUs, p.us);
    }
  double xSpan = std::max(1.0, std::log2(double(maxM)));
  double yStep = maxUs > 8 ? 2 : (maxUs > 3 ? 1 : 0.5);
  double yMax = std::ceil(maxUs * 1.1 / yStep) * yStep;
  int x0 = ox + kLeft, x1 = ox + kPanelWidth - kRight;
  int y0 = oy + kPanelHeight - kBottom, y1 = oy + kTop;
  auto px = [&](int64_t m) {
    return x0 + int(std::log2(double(m)) / xSpan * (x1 - x0));
  };
  auto py = [&](double us) { return y0 - int(us / yMax * (y0 - y1)); };

  canvas.text(ox + kLeft, oy + 4, panel.title);
  for (double v = 0; v <= yMax + 1e-9; v += yStep) {
    canvas.line(x0, py(v), x1, py(v), 225, 225, 225, 1);
    std::string label = number(v);
    canvas.text(x0 - 8 - textWidth(label), py(v) - 7, label);
  }
  for (int64_t m = 1; m <= maxM; m *= 2) {
    canvas.line(px(m), y0, px(m), y1, 235, 235, 235, 1);
    canvas.text(px(m) - textWidth(number(m)) / 2, y0 + 8, number(m));
  }
  canvas.line(x0, y0, x1, y0, 0, 0, 0, 1);
  canvas.line(x0, y0, x0, y1, 0, 0, 0, 1);
  canvas.text(x1 - textWidth("M"), y0 + 28, "M");
  canvas.text(ox + 6, y1 - 16, "US/CALL");

  for (const PlotSeries &s : panel.series) {
    const PlotPoint *prev = nullptr;
    for (const PlotPoint &p : s.points) {
      if (p.us < 0) {
        prev = nullptr;
        continue;
      }
      if (prev)
        canvas.line(px(prev->m), py(prev->us), px(p.m), py(p.us), s.r, s.g, s.b,
                    2, s.markers ? 0 : 6);
      if (s.markers)
        canvas.rect(px(p.m) - 3, py(p.us) - 3, px(p.m) + 3, py(p.us) + 3, s.r,
                    s.g, s.b);
      prev = &p;
    }
  }
  // The legend last, on white, over the lines.
  int legendY = y1 + 4;
  for (const PlotSeries &s : panel.series) {
    int lx = x1 - textWidth(s.label) - 30;
    canvas.rect(lx - 4, legendY - 2, x1, legendY + 15, 255, 255, 255);
    canvas.rect(lx, legendY + 4, lx + 20, legendY + 8, s.r, s.g, s.b);
    canvas.text(lx + 26, legendY, s.label, s.r, s.g, s.b);
    legendY += 18;
  }
}
} // namespace

std::string renderPlotPng(const std::vector<PlotPanel> &panels) {
  int columns = panels.size() > 1 ? 2 : 1;
  int rows = std::max<int>(1, (int(panels.size()) + columns - 1) / columns);
  Canvas canvas(columns * kPanelWidth, rows * kPanelHeight);
  for (size_t i = 0; i < panels.size(); ++i)
    drawPanel(canvas, int(i % columns) * kPanelWidth,
              int(i / columns) * kPanelHeight, panels[i]);
  return encodePng(canvas.width, canvas.height, canvas.rgb);
}

} // namespace moss::tune
