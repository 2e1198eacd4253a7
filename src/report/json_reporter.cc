#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"
#include "report/report_json.h"

namespace onnxprobe {
namespace {

class JsonReporter : public Reporter {
 public:
  std::string Render(const CompareReport& r) const override {
    JsonWriter j;
    WriteComparisonJson(r, j);
    return j.str() + "\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeJsonReporter() { return std::make_unique<JsonReporter>(); }

}  // namespace onnxprobe
