#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"
#include "report/report_json.h"
#include "report/sinks.h"

namespace onnxprobe {
namespace {

constexpr const char* kPage =
#include "report/html_page.inc"
    ;

class HtmlReporter : public Reporter {
 public:
  explicit HtmlReporter(ReportDetail detail) : detail_(detail) {}
  std::string Render(const CompareReport& r) const override {
    JsonWriter j(false);
    WriteComparisonJson(r, j, detail_);
    // inside <script>, "</" ends the element early and "<!--" followed by "<script" switches
    // the parser into a state where "</script>" no longer ends it (a blank page): every '<'
    // (which JSON holds only inside strings) is written as the escape \u003c
    std::string data;
    data.reserve(j.str().size());
    for (char c : j.str()) {
      if (c == '<')
        data += "\\u003c";
      else
        data += c;
    }
    std::string page = kPage;
    size_t at = page.find("@DATA@");
    return page.substr(0, at) + data + page.substr(at + 6);
  }

 private:
  ReportDetail detail_;
};

}  // namespace

std::unique_ptr<Reporter> MakeHtmlReporter(ReportDetail detail) {
  return std::make_unique<HtmlReporter>(detail);
}

ReportSink HtmlSink() {
  ReportSink k;
  k.format = "html";
  k.flag = "--html";
  k.help =
      "self-contained HTML report (with samples: the first failing sample, else the one "
      "closest to its tolerance)";
  k.label = "HTML report";
  k.artifact.name = "HTML report";
  k.artifact.ours = [](const std::string& path, bool is_dir) {
    return !is_dir && HtmlEmbedsSchema(FileHead(path, 256 * 1024), "onnxprobe-compare\"");
  };
  k.render = [](const CompareReport& r, const RenderContext& c) {
    return MakeHtmlReporter(c.detail)->Render(r);
  };
  return k;
}

}  // namespace onnxprobe
