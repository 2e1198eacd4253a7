#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"
#include "onnxprobe/report/sample_report.h"
#include "report/report_json.h"
#include "report/sinks.h"

namespace onnxprobe {
namespace {

class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(ReportDetail detail) : detail_(detail) {}
  std::string Render(const CompareReport& r) const override {
    JsonWriter j;
    WriteComparisonJson(r, j, detail_);
    return j.str() + "\n";
  }

 private:
  ReportDetail detail_;
};

}  // namespace

std::unique_ptr<Reporter> MakeJsonReporter(ReportDetail detail) {
  return std::make_unique<JsonReporter>(detail);
}

ReportSink JsonSink() {
  ReportSink k;
  k.format = "json";
  k.flag = "--json";
  k.help = "versioned JSON report (docs/report-json.md)";
  k.label = "JSON report";
  k.artifact.name = "JSON report";
  k.artifact.ours = [](const std::string& path, bool is_dir) {
    std::string head = FileHead(path, 4096);  // one comparison, or one per input sample
    return !is_dir && (JsonOpensWith(head, 0, "schema", "onnxprobe-compare\"") ||
                       JsonOpensWith(head, 0, "schema", "onnxprobe-compare-samples\""));
  };
  k.render = [](const CompareReport& r, const RenderContext& c) {
    return MakeJsonReporter(c.detail)->Render(r);
  };
  k.render_samples = [](const SamplesCompareReport& r, const RenderContext& c) {
    return RenderSamplesJson(r, c.detail);
  };
  return k;
}

}  // namespace onnxprobe
