//===- Report.cpp - The tuner's whitelist, tables and plot ----------------===//

#include "Report.h"

#include "TextCells.h"

#include <cstdio>
#include <map>
#include <tuple>

namespace moss::tune {

namespace {
std::string tileText(const config::GemmTile &t) {
  return "[" + std::to_string(t.bm) + ", " + std::to_string(t.bn) + ", " +
         std::to_string(t.bk) + ", " + std::to_string(t.split) + "]";
}

using bench::formatMeasured;

std::string us(double v) { return formatMeasured(v, "%.2f"); }

std::string pair(const RunTimes &t) {
  return us(t.hotUs) + " / " + us(t.coldUs);
}

std::string sci(double v) { return formatMeasured(v, "%.1e"); }

using bench::jsonNumber;

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += ch;
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += ' ';
    else
      out += ch;
  }
  return out + "\"";
}

std::string jsonRuns(const RunTimes run[kRuns]) {
  std::string text = "[";
  for (int r = 0; r < kRuns; ++r)
    text += std::string(r ? ", " : "") +
            "{\"hot_us\": " + jsonNumber(run[r].hotUs) +
            ", \"cold_us\": " + jsonNumber(run[r].coldUs) + "}";
  return text + "]";
}

/// Why the fastest candidate of the initial run was not kept.
std::string whyFallback(const KeyResult &key) {
  if (!key.fallbackError.empty())
    return "fallback error: " + key.fallbackError;
  if (key.candidates.empty())
    return "no candidate";
  const CandidateResult *best = nullptr;
  for (const CandidateResult &c : key.candidates)
    if (c.error.empty() && c.run[0].hotUs >= 0 &&
        (!best || c.run[0].hotUs + c.run[0].coldUs <
                      best->run[0].hotUs + best->run[0].coldUs))
      best = &c;
  if (!best)
    return "every candidate failed";
  std::string why;
  for (int run = 0; run < kRuns; ++run)
    if (!passesRun(*best, key, run, &why))
      break;
  return "fastest " + tileText(best->tile) + ": " + why;
}
} // namespace

double weightReadFloorUs(int64_t n, int64_t k) {
  return double(n) * double(k) * 2 / kHbmBytesPerUs;
}

std::string whitelistJson(const std::vector<KeyResult> &keys,
                          const std::vector<int> &chosen) {
  std::string text = "{";
  for (size_t i = 0; i < keys.size(); ++i)
    if (chosen[i] >= 0)
      text += std::string(text.size() > 1 ? ",\n" : "\n") + "  \"" +
              keys[i].keyText +
              "\": " + tileText(keys[i].candidates[chosen[i]].tile);
  return text + (text.size() > 1 ? "\n}\n" : "}\n");
}

std::string markdownReport(const std::vector<KeyResult> &keys,
                           const std::vector<int> &chosen,
                           const std::string &header) {
  std::string text = header;
  text +=
      "\n| M,N,K,mode | tile | CTAs/SM/waves | chosen hot / cold run 1 | "
      "chosen hot / cold run 2 | fallback hot / cold run 1 | fallback hot / "
      "cold run 2 | rel. L2 | candidates | note "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyResult &key = keys[i];
    std::string row = "| " + key.keyText + " | ";
    if (chosen[i] >= 0) {
      const CandidateResult &c = key.candidates[chosen[i]];
      row += tileText(c.tile) + " | " + config::occupancyText(c.occupancy) +
             " | " + pair(c.run[0]) + " | " + pair(c.run[1]) + " | " +
             pair(key.fallback[0]) + " | " + pair(key.fallback[1]) + " | " +
             sci(c.relL2) + " | " + std::to_string(key.candidates.size()) +
             " | |";
    } else {
      row += "fallback | - | - | - | " + pair(key.fallback[0]) + " | " +
             pair(key.fallback[1]) + " | - | " +
             std::to_string(key.candidates.size()) + " | " + whyFallback(key) +
             " |";
    }
    text += row + "\n";
  }
  return text;
}

std::string resultsJson(const std::vector<KeyResult> &keys,
                        const std::vector<int> &chosen,
                        const std::string &header) {
  std::string text =
      "{\n  \"header\": " + jsonString(header) + ",\n  \"keys\": [";
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyResult &key = keys[i];
    text +=
        std::string(i ? "," : "") +
        "\n    {\"key\": " + jsonString(key.keyText) + ", \"chosen\": " +
        (chosen[i] >= 0 ? tileText(key.candidates[chosen[i]].tile)
                        : std::string("null")) +
        ",\n     \"fallback\": {\"runs\": " + jsonRuns(key.fallback) +
        ", \"rel_l2\": " + jsonNumber(key.fallbackRelL2) + ", \"error\": " +
        (key.fallbackError.empty() ? "null" : jsonString(key.fallbackError)) +
        "},\n     \"candidates\": [";
    for (size_t j = 0; j < key.candidates.size(); ++j) {
      const CandidateResult &c = key.candidates[j];
      text +=
          std::string(j ? "," : "") + "\n      {\"tile\": " + tileText(c.tile) +
          ", \"round\": " + jsonString(c.round) +
          ", \"runs\": " + jsonRuns(c.run) +
          ", \"rel_l2\": " + jsonNumber(c.relL2) +
          ", \"graph_equals_eager\": " +
          (c.graphEqualsEager ? "true" : "false") + ", " +
          config::occupancyJsonFields(c.occupancy) +
          ", \"error\": " + (c.error.empty() ? "null" : jsonString(c.error)) +
          "}";
    }
    text += key.candidates.empty() ? "]}" : "\n     ]}";
  }
  return text + "\n  ]\n}\n";
}

std::vector<PlotPanel> tunePlotPanels(const std::vector<KeyResult> &keys,
                                      const std::vector<int> &chosen) {
  std::map<std::tuple<int, int64_t, int64_t>, std::vector<size_t>> shapes;
  for (size_t i = 0; i < keys.size(); ++i)
    shapes[{keys[i].key.mode, keys[i].key.n, keys[i].key.k}].push_back(i);
  std::vector<PlotPanel> panels;
  for (const auto &[shape, members] : shapes) {
    auto [mode, n, k] = shape;
    const char *modeName = config::gemmModeName(mode);
    PlotPanel panel;
    panel.title = "N=" + std::to_string(n) + " K=" + std::to_string(k) + " " +
                  (modeName ? modeName : "?");
    PlotSeries fbHot{"FALLBACK HOT", 40, 90, 200, {}},
        fbCold{"FALLBACK COLD", 130, 170, 240, {}},
        hot{"CHOSEN HOT", 210, 30, 30, {}},
        cold{"CHOSEN COLD", 240, 150, 40, {}};
    int64_t minM = keys[members.front()].key.m, maxM = minM;
    for (size_t i : members) {
      const KeyResult &key = keys[i];
      minM = std::min(minM, key.key.m);
      maxM = std::max(maxM, key.key.m);
      fbHot.points.push_back({key.key.m, key.fallback[kRuns - 1].hotUs});
      fbCold.points.push_back({key.key.m, key.fallback[kRuns - 1].coldUs});
      const RunTimes *c =
          chosen[i] >= 0 ? &key.candidates[chosen[i]].run[kRuns - 1] : nullptr;
      hot.points.push_back({key.key.m, c ? c->hotUs : -1});
      cold.points.push_back({key.key.m, c ? c->coldUs : -1});
    }
    double readFloor = weightReadFloorUs(n, k);
    char label[48];
    std::snprintf(label, sizeof(label), "HBM READ %.2f", readFloor);
    PlotSeries launch{"LAUNCH 0.68",
                      40,
                      160,
                      60,
                      {{minM, kLaunchFloorUs}, {maxM, kLaunchFloorUs}},
                      false};
    PlotSeries read{label, 140, 60, 170, {{minM, readFloor}, {maxM, readFloor}},
                    false};
    panel.series = {fbHot, fbCold, hot, cold, launch, read};
    panels.push_back(std::move(panel));
  }
  return panels;
}

} // namespace moss::tune
