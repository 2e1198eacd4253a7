#include "onnxprobe/json.h"
#include "onnxprobe/report.h"
#include "report/report_json.h"

namespace onnxprobe {
namespace {

constexpr const char* kPage =
#include "report/html_page.inc"
    ;

class HtmlReporter : public Reporter {
 public:
  std::string Render(const CompareReport& r) const override {
    JsonWriter j(false);
    WriteComparisonJson(r, j);
    // inside <script> the only sequence that can end the element early is "</"
    std::string data;
    data.reserve(j.str().size());
    for (size_t i = 0; i < j.str().size(); ++i) {
      char c = j.str()[i];
      if (c == '<' && i + 1 < j.str().size() && j.str()[i + 1] == '/') {
        data += "<\\/";
        ++i;
      } else {
        data += c;
      }
    }
    std::string page = kPage;
    size_t at = page.find("@DATA@");
    return page.substr(0, at) + data + page.substr(at + 6);
  }
};

}  // namespace

std::unique_ptr<Reporter> MakeHtmlReporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace onnxprobe
