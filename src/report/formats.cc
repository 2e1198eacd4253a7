// The compare report's formats (report/formats.h), in --help order.
#include "onnxprobe/report/formats.h"

#include "report/sinks.h"

namespace onnxprobe {

const std::vector<ReportSink>& CompareSinks() {
  static const std::vector<ReportSink> sinks = {JsonSink(), HtmlSink(), JUnitSink(),
                                                ModelExplorerSink(), MarkdownSink()};
  return sinks;
}

Expected<const ReportSink*> FindCompareSink(const std::string& format) {
  std::string known;
  for (const auto& s : CompareSinks()) {
    if (s.format == format) return &s;
    known += (known.empty() ? "" : ", ") + s.format;
  }
  return InvalidArgument("unknown report format '" + format + "' (" + known + ")");
}

}  // namespace onnxprobe
