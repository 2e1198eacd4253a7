// JUnit XML: suites of test cases, and a comparison as one suite (a case per compared tensor).
#include "onnxprobe/report/junit.h"

#include <unistd.h>

#include <cstdio>

#include "common/clock.h"
#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/report/sample_report.h"
#include "report/sinks.h"

namespace onnxprobe {
namespace {

// XML 1.0 text or attribute value: markup escaped, characters XML cannot carry replaced.
std::string Xml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
      case '\r':
        out += static_cast<char>(c);
        break;
      default:
        if (c < 0x20) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// Element bodies keep their line breaks.
std::string XmlText(const std::string& s) {
  std::string out = Xml(s);
  std::string lines;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 5, "&#10;") == 0) {
      lines += '\n';
      i += 4;
    } else {
      lines += out[i];
    }
  }
  return lines;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s < 0 ? 0.0 : s);
  return buf;
}

const char* OutcomeElement(JUnitOutcome o) {
  switch (o) {
    case JUnitOutcome::kFailure:
      return "failure";
    case JUnitOutcome::kError:
      return "error";
    case JUnitOutcome::kSkipped:
      return "skipped";
    case JUnitOutcome::kPassed:
      break;
  }
  return "";
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

// The kind of a tensor's failure, from its metrics (the JUnit failure type).
const char* FailureType(const TensorResult& row) {
  const TensorMetrics& m = row.metrics;
  if (!m.shape_match) return "shape";
  if (!m.dtype_match) return "dtype";
  if (m.nonfinite_differ > 0) return "nonfinite";
  return "tolerance";
}

std::string Metrics(const TensorResult& row, JudgeBy judge) {
  const TensorMetrics& m = row.metrics;
  if (!m.shape_match || !m.dtype_match) return row.reason;
  return "max_abs=" + FormatNumber(m.max_abs, 4) + " max_rel=" + FormatNumber(m.max_rel, 4) +
         " mismatches=" + std::to_string(m.mismatches) + "/" + std::to_string(m.count) +
         " tolerance_ratio=" + FormatNumber(row.tolerance_ratio, 4) +
         " (atol=" + FormatNumber(row.tolerance.atol) +
         " rtol=" + FormatNumber(row.tolerance.rtol) + " judge=" + JudgeByName(judge) + ")";
}

// `with_role`: the comparison's role of the row (introduced/inherited); left out where another
// localization (a baseline check's) names the origin instead.
std::string Details(const TensorResult& row, bool with_role) {
  const TensorMetrics& m = row.metrics;
  std::string s = row.reason + "\n";
  s += "node: " + row.node + " (" + row.op_type + ")";
  s += with_role ? std::string(", role: ") + RoleName(row.role) + "\n" : "\n";
  if (m.shape_match && m.dtype_match) {
    s += "mean_abs=" + FormatNumber(m.mean_abs, 4) + " p99_abs=" + FormatNumber(m.p99_abs, 4) +
         " cosine=" + FormatNumber(m.cosine, 6) + " snr_db=" + FormatNumber(m.snr_db, 4) + "\n";
    s += "largest error at index [";
    for (size_t i = 0; i < m.max_abs_index.size(); ++i)
      s += (i ? "," : "") + std::to_string(m.max_abs_index[i]);
    s += "]: expected " + FormatNumber(m.a_at_max, 7) + ", got " + FormatNumber(m.b_at_max, 7) +
         "\n";
  }
  return s;
}

}  // namespace

std::string RenderJUnit(const std::string& name, const std::vector<JUnitSuite>& suites) {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double total = 0;
  std::string body;
  for (size_t si = 0; si < suites.size(); ++si) {
    const JUnitSuite& s = suites[si];
    size_t f = 0, e = 0, k = 0;
    for (const auto& c : s.cases) {
      f += c.outcome == JUnitOutcome::kFailure;
      e += c.outcome == JUnitOutcome::kError;
      k += c.outcome == JUnitOutcome::kSkipped;
    }
    tests += s.cases.size();
    failures += f;
    errors += e;
    skipped += k;
    total += s.seconds;
    std::string classname = s.cases.empty() ? s.name : s.cases.front().classname;
    body += "  <testsuite name=\"" + Xml(s.name) + "\" id=\"" + std::to_string(si) +
            "\" package=\"" + Xml(classname) + "\" tests=\"" + std::to_string(s.cases.size()) +
            "\" failures=\"" + std::to_string(f) + "\" errors=\"" + std::to_string(e) +
            "\" skipped=\"" + std::to_string(k) + "\" time=\"" + Seconds(s.seconds) +
            "\" timestamp=\"" + Xml(s.timestamp.empty() ? UtcNowIso8601(false) : s.timestamp) +
            "\" hostname=\"" + Xml(HostName()) + "\">\n";
    if (s.properties.empty()) {
      body += "    <properties/>\n";
    } else {
      body += "    <properties>\n";
      for (const auto& [k, v] : s.properties)
        body += "      <property name=\"" + Xml(k) + "\" value=\"" + Xml(v) + "\"/>\n";
      body += "    </properties>\n";
    }
    for (const auto& c : s.cases) {
      body += "    <testcase classname=\"" + Xml(c.classname) + "\" name=\"" + Xml(c.name) +
              "\" time=\"" + Seconds(c.seconds) + "\"";
      if (c.outcome == JUnitOutcome::kPassed) {
        body += "/>\n";
        continue;
      }
      body += ">\n      <" + std::string(OutcomeElement(c.outcome)) + " message=\"" +
              Xml(c.message) + "\"";
      if (c.outcome != JUnitOutcome::kSkipped) body += " type=\"" + Xml(c.type) + "\"";
      body += c.text.empty() ? "/>\n"
                             : ">" + XmlText(c.text) + "</" + OutcomeElement(c.outcome) + ">\n";
      body += "    </testcase>\n";
    }
    body += "    <system-out>" + XmlText(s.system_out) + "</system-out>\n";
    body += "    <system-err></system-err>\n";
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + Xml(name) +
         "\" tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
         "\" time=\"" + Seconds(total) + "\">\n" + body + "</testsuites>\n";
}

Status WriteJUnit(const std::string& path, const std::string& name,
                  const std::vector<JUnitSuite>& suites) {
  return WriteFileAtomic(path, RenderJUnit(name, suites));
}

JUnitSuite JUnitSuiteFor(const CompareReport& r, const std::string& suite_name,
                         const std::string& classname, const std::string& prefix,
                         const std::map<std::string, double>& row_seconds, bool with_origin) {
  const ComparisonResult& c = r.comparison;
  JUnitSuite s;
  s.name = suite_name;
  s.seconds = c.seconds;
  // where the comparison's error is born: every failure says it
  std::string born;
  for (const auto& x : r.localization.culprits) {
    if (with_origin && x.isolated && x.introduced && x.row >= 0)
      born += "error introduced at: " + x.node + " (" + x.op_type + ") -> " + x.tensor + "\n";
  }
  if (with_origin && born.empty() && !r.origin_note.empty()) born = r.origin_note + "\n";
  // and why, with the fix (diagnose/diagnose.h)
  for (const auto& f : r.diagnosis.findings) {
    if (!with_origin) break;
    born += "why: " + f.node + " (" + f.op_type + "): " + CauseName(f.cause) + ", " +
            CertaintyName(f.certainty) + ": " + f.summary + "\n  fix: " + f.fix.summary + "\n";
    if (!f.fix.command.empty()) born += "  run: " + f.fix.command + "\n";
    if (!f.fix.compare_flags.empty())
      born += "  compare with: " + ShellJoin(f.fix.compare_flags) + "\n";
  }
  for (const auto& row : c.rows) {
    JUnitCase k;
    k.classname = classname;
    k.name = prefix + row.name;
    auto it = row_seconds.find(row.name);
    if (it != row_seconds.end()) k.seconds = it->second;
    if (row.state == RowState::kNotCompared) {
      k.outcome = JUnitOutcome::kSkipped;
      k.message = row.reason;
    } else if (!row.pass) {
      k.outcome = JUnitOutcome::kFailure;
      k.type = FailureType(row);
      k.message = Metrics(row, c.policy.judge);
      k.text = Details(row, with_origin) + born;
    }
    s.cases.push_back(std::move(k));
  }
  // graph outputs that fail the comparison without a row of their own
  for (const auto& [type, lines] : {std::pair<const char*, const std::vector<std::string>*>{
                                        "unpaired-output", &c.unpaired_outputs},
                                    {"nan-output", &c.nan_outputs}}) {
    for (const auto& u : *lines) {
      JUnitCase k;
      k.classname = classname;
      k.name = prefix + "(graph outputs)";
      k.outcome = JUnitOutcome::kFailure;
      k.type = type;
      k.message = u;
      s.cases.push_back(std::move(k));
    }
  }
  if (c.aborted) {
    JUnitCase k;
    k.classname = classname;
    k.name = prefix + "(run)";
    k.outcome = JUnitOutcome::kError;
    k.type = "runtime";
    k.message = c.abort_status.message();
    s.cases.push_back(std::move(k));
  }
  return s;
}

ReportSink JUnitSink() {
  ReportSink k;
  k.format = "junit";
  k.flag = "--junit";
  k.help = "JUnit XML: a test case per compared tensor (and sample)";
  k.label = "JUnit report";
  k.artifact.name = "JUnit report";
  k.artifact.ours = [](const std::string& path, bool is_dir) {
    std::string head = FileHead(path, 4096);
    return !is_dir && head.rfind("<?xml", 0) == 0 &&
           head.find("<testsuites name=\"onnxprobe") != std::string::npos;
  };
  k.render = [](const CompareReport& r, const RenderContext& c) {
    JUnitSuite suite = JUnitSuiteFor(r, "compare", c.side_b, "", c.row_seconds);
    suite.seconds = c.seconds;
    return RenderJUnit("onnxprobe compare", {suite});
  };
  k.render_samples = [](const SamplesCompareReport& r, const RenderContext& c) {
    return RenderJUnit("onnxprobe compare", SamplesJUnit(r, c.side_b));
  };
  return k;
}

}  // namespace onnxprobe
