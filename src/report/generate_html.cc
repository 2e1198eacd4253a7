// The HTML page of a generation comparison: verdict, per-step divergence chart and the cache
// difference as a layer x position heat map, drawn as inline SVG (no script, no network).
#include <algorithm>
#include <cmath>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/report/generate_report.h"

namespace onnxprobe {
namespace {

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// log10 of a positive value, clamped to [lo, hi]; 0 and below map to lo.
double Log(double v, double lo, double hi) {
  if (!(v > 0)) return lo;
  return std::min(hi, std::max(lo, std::log10(v)));
}

// Per step: the logits' and the worst cache tensor's error / allowed error, log scale; 1 (the
// budget) is the dashed line.
std::string StepChart(const GenerateReport& r) {
  size_t n = r.steps.size();
  double top = 1;  // the largest ratio drawn sets the upper end (1e3 .. 1e12)
  for (const auto& g : r.steps) {
    top = std::max(top, g.logits.tolerance_ratio);
    for (const auto& c : g.cache) top = std::max(top, c.row.tolerance_ratio);
  }
  const double w = 720, h = 220, left = 50, bottom = 30, lo = -6,
               hi = std::min(12.0, std::max(3.0, std::ceil(std::log10(top))));
  auto x = [&](size_t i) { return left + (w - left - 10) * (n > 1 ? double(i) / (n - 1) : 0.5); };
  auto y = [&](double v) { return 10 + (h - bottom - 10) * (hi - Log(v, lo, hi)) / (hi - lo); };
  std::string s = "<svg width=\"" + Num(w) + "\" height=\"" + Num(h) + "\" role=\"img\">";
  for (int e = static_cast<int>(lo); e <= hi; ++e) {
    s += "<text x=\"2\" y=\"" + Num(y(std::pow(10, e)) + 4) + "\" class=\"ax\">1e" +
         std::to_string(e) + "</text><line x1=\"" + Num(left) + "\" x2=\"" + Num(w - 10) +
         "\" y1=\"" + Num(y(std::pow(10, e))) + "\" y2=\"" + Num(y(std::pow(10, e))) +
         "\" class=\"grid\"/>";
  }
  s += "<line x1=\"" + Num(left) + "\" x2=\"" + Num(w - 10) + "\" y1=\"" + Num(y(1)) + "\" y2=\"" +
       Num(y(1)) + "\" class=\"budget\"/>";
  auto line = [&](auto value, const char* cls) {
    std::string pts;
    for (size_t i = 0; i < n; ++i) pts += Num(x(i)) + "," + Num(y(value(r.steps[i]))) + " ";
    return "<polyline points=\"" + pts + "\" class=\"" + cls + "\"/>";
  };
  s += line([](const GenerateStep& g) { return g.logits.tolerance_ratio; }, "logits");
  s += line(
      [](const GenerateStep& g) {
        double m = 0;
        for (const auto& c : g.cache) m = std::max(m, c.row.tolerance_ratio);
        return m;
      },
      "cache");
  if (r.born_step > 0) {
    double bx = x(static_cast<size_t>(r.born_step - 1));
    s += "<line x1=\"" + Num(bx) + "\" x2=\"" + Num(bx) + "\" y1=\"10\" y2=\"" + Num(h - bottom) +
         "\" class=\"born\"/>";
  }
  s += "<text x=\"" + Num(left) + "\" y=\"" + Num(h - 8) + "\" class=\"ax\">step 1</text>";
  s += "<text x=\"" + Num(w - 60) + "\" y=\"" + Num(h - 8) + "\" class=\"ax\">step " +
       std::to_string(n) + "</text></svg>";
  return s;
}

// Rows: layers (key and value merged: the larger); columns: cache positions; colour: log10 of
// the largest |a - b| at that position.
std::string HeatMap(const GenerateReport& r) {
  int layers = 0;
  std::vector<std::vector<double>> grid;  // [layer][position]
  for (const auto& g : r.steps) {
    for (const auto& c : g.cache) layers = std::max(layers, c.layer + 1);
  }
  grid.assign(static_cast<size_t>(layers), {});
  for (const auto& g : r.steps) {
    size_t base = grid.empty() ? 0 : grid[0].size();
    size_t add = 0;
    for (const auto& c : g.cache) add = std::max(add, c.position_max_abs.size());
    for (auto& row : grid) row.resize(base + add, 0);
    for (const auto& c : g.cache) {
      if (c.layer < 0) continue;
      for (size_t p = 0; p < c.position_max_abs.size(); ++p) {
        double& cell = grid[static_cast<size_t>(c.layer)][base + p];
        cell = std::max(cell, c.position_max_abs[p]);
      }
    }
  }
  if (grid.empty() || grid[0].empty()) return "<p>no cache compared</p>";
  size_t cols = grid[0].size();
  double cw = std::max(2.0, std::min(24.0, 680.0 / cols)), ch = 18, left = 60;
  const double lo = -8, hi = 0;
  std::string s = "<svg width=\"" + Num(left + cw * cols + 10) + "\" height=\"" +
                  Num(ch * layers + 30) + "\" role=\"img\">";
  for (int l = 0; l < layers; ++l) {
    s += "<text x=\"2\" y=\"" + Num(ch * l + 13) + "\" class=\"ax\">layer " + std::to_string(l) +
         "</text>";
    for (size_t p = 0; p < cols; ++p) {
      double v = grid[static_cast<size_t>(l)][p];
      double t = (Log(v, lo, hi) - lo) / (hi - lo);  // 0 .. 1
      int red = static_cast<int>(255 * t), blue = static_cast<int>(255 * (1 - t));
      char fill[16];
      std::snprintf(fill, sizeof fill, "#%02x40%02x", red, blue);
      s += "<rect x=\"" + Num(left + cw * p) + "\" y=\"" + Num(ch * l) + "\" width=\"" + Num(cw) +
           "\" height=\"" + Num(ch - 1) + "\" fill=\"" + fill + "\"><title>layer " +
           std::to_string(l) + ", position " + std::to_string(p) + ": max|a-b| " + FormatNumber(v) +
           "</title></rect>";
    }
  }
  s += "<text x=\"" + Num(left) + "\" y=\"" + Num(ch * layers + 20) +
       "\" class=\"ax\">position 0 .. " + std::to_string(cols - 1) +
       "   colour: log10 max|a-b|, blue 1e-8 .. red 1</text></svg>";
  return s;
}

}  // namespace

std::string RenderGenerateHtml(const GenerateReport& r) {
  std::string data;
  for (char c : RenderGenerateJson(r)) {
    if (c == '<') {
      data += "\\u003c";
    } else {
      data += c;
    }
  }
  std::string verdict =
      r.passed()
          ? "<span class=\"pass\">PASS</span>: every step's logits and cache within tolerance"
          : "<span class=\"fail\">FAIL</span>: error born at step " + std::to_string(r.born_step) +
                ", " + Esc(r.born_where);
  std::string page =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>onnxprobe generate</title>"
      "<script id=\"data\" type=\"application/json\">" +
      data +
      "</script><style>body{font:14px sans-serif;margin:24px;max-width:960px}.pass{color:#080;"
      "font-weight:bold}.fail{color:#c00;font-weight:bold}.ax{font:11px sans-serif;fill:#444}"
      ".grid{stroke:#eee}.budget{stroke:#c00;stroke-dasharray:4 3}.born{stroke:#c00}"
      "polyline{fill:none;stroke-width:1.5}.logits{stroke:#06c}.cache{stroke:#e80}"
      "code{background:#f4f4f4;padding:1px 3px}td,th{padding:2px 8px;text-align:left}"
      "</style></head><body>\n<h1>onnxprobe generate</h1>\n<p>A: <code>" +
      Esc(r.describe_a) + "</code><br>B: <code>" + Esc(r.describe_b) + "</code></p>\n<p>" +
      verdict + "</p>\n";
  if (!r.culprit_node.empty()) {
    page += "<p>Node: <code>" + Esc(r.culprit_node) + "</code> (" + Esc(r.culprit_op) +
            "), found by comparing step " + std::to_string(r.born_step) +
            " tensor by tensor with side A's exact cache.</p>\n";
  }
  page += "<p>Free-running: ";
  page += r.first_divergent_step < 0
              ? "the tokens agree for all " + std::to_string(r.tokens_a.size()) + " steps."
              : "the tokens part at step " + std::to_string(r.first_divergent_step) + ". " +
                    Esc(r.divergence_note);
  page += "</p>\n";
  for (const auto& n : r.notes) page += "<p>Note: " + Esc(n) + "</p>\n";
  if (!r.layer_errors.empty()) {
    page += "<h2>Error introduced per layer at step " + std::to_string(r.compared_step) +
            "</h2><table><tr><th>layer</th><th>error / allowed</th><th>nodes</th><th>worst node"
            "</th></tr>";
    for (const auto& e : r.layer_errors) {
      page += "<tr><td>" + (e.layer < 0 ? std::string("outside layers") : std::to_string(e.layer)) +
              "</td><td>" + FormatNumber(e.worst_ratio) +
              (r.quant_min_sqnr_db > 0 ? " (SQNR " + FormatNumber(e.sqnr_db) + " dB)" : "") +
              "</td><td>" + std::to_string(e.introduced_rows) + "</td><td><code>" +
              Esc(e.worst_node) + "</code> (" + Esc(e.worst_op) + ")</td></tr>";
    }
    page += "</table>\n";
  }
  page +=
      "<h2>Per step (teacher-forced)</h2><p>Error / allowed error, log scale: "
      "<span style=\"color:#06c\">logits</span>, <span style=\"color:#e80\">worst cache "
      "tensor</span>; dashed: the budget.</p>\n" +
      StepChart(r) + "\n<h2>Cache difference</h2>\n" + HeatMap(r) + "\n";
  page += "</body></html>\n";
  return page;
}

Status WriteGenerateHtml(const GenerateReport& r, const std::string& path) {
  return WriteFileAtomic(path, RenderGenerateHtml(r));
}

}  // namespace onnxprobe
