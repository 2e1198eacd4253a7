// The compare report's sinks, one per format (listed by CompareSinks(), formats.cc); each
// defined beside its renderer.
#pragma once

#include "onnxprobe/report/formats.h"

namespace onnxprobe {

ReportSink JsonSink();
ReportSink HtmlSink();
ReportSink JUnitSink();
ReportSink ModelExplorerSink();
ReportSink MarkdownSink();

}  // namespace onnxprobe
