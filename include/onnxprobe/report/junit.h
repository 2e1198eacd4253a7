// JUnit XML, the test-result format CI systems read (GitLab, Jenkins, GitHub test reporters):
// <testsuites> of <testsuite>s of <testcase classname= name= time=>, each passed or carrying a
// <failure>, <error> or <skipped>. Reporters build suites; RenderJUnit writes them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

enum class JUnitOutcome { kPassed, kFailure, kError, kSkipped };

struct JUnitCase {
  std::string classname, name;
  double seconds = 0;
  JUnitOutcome outcome = JUnitOutcome::kPassed;
  std::string type;     // failure/error type, e.g. "tolerance", "shape"
  std::string message;  // one line: the metrics
  std::string text;     // element body: details
};

struct JUnitSuite {
  std::string name;
  std::string timestamp;  // ISO 8601, "" = omitted
  double seconds = 0;
  std::vector<JUnitCase> cases;
  std::string system_out;                                       // "" = omitted
  std::vector<std::pair<std::string, std::string>> properties;  // <properties>, in order
};

// The document: tests/failures/errors/skipped counted from the cases. Text is escaped for XML
// (characters XML 1.0 cannot carry become U+FFFD).
std::string RenderJUnit(const std::string& name, const std::vector<JUnitSuite>& suites);
// Renders and writes atomically (temporary name, then rename).
Status WriteJUnit(const std::string& path, const std::string& name,
                  const std::vector<JUnitSuite>& suites);

// A comparison as one suite: a case per compared tensor named `prefix` + tensor name (prefix
// "sample/" in a baseline check, "" for compare), classname `classname` (the model), time from
// `row_seconds` (0 when absent). Tensors not compared are skipped; an aborted comparison adds an
// error case. With `with_origin`, each failure's text ends with the nodes localization found
// to introduce the error (or the report's origin note).
JUnitSuite JUnitSuiteFor(const CompareReport& r, const std::string& suite_name,
                         const std::string& classname, const std::string& prefix,
                         const std::map<std::string, double>& row_seconds, bool with_origin = true);

}  // namespace onnxprobe
