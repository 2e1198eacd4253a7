#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"
#include "report/report_json.h"

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

}  // namespace onnxprobe
