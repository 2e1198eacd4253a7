// Runs the ONNX backend node test suite through onnxprobe (model load, input files, ORT run) and
// compares every output with the suite's expected output (rtol 1e-3, atol 1e-7, NaN == NaN).
// usage: onnxprobe_conformance SUITE_DIR [--baseline FILE] [--report FILE] [--known FILE]
//        [--ort-version VERSION] [--suite-name NAME] [--summary FILE]
// Exit 1 when the pass count falls below the baseline, a case mismatches numerically (or returns
// a different number of outputs) without being listed for this runtime version in the
// known-divergences file (--known), or a listed case does not diverge on that version. Exit 2
// when the baseline or the list is missing or malformed. --ort-version runs on another ONNX
// Runtime installed by the bootstrap (as `onnxprobe run --ort-version`); --summary writes the
// one-line count that `make test` prints for every runtime and suite.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace fs = std::filesystem;
using namespace onnxprobe;  // NOLINT

namespace {

struct Outcome {
  std::string name;
  enum Kind { kPass, kRejected, kMismatch, kSkipped } kind = kPass;
  std::string reason;
  bool outputs_missing = false;  // a harness fault, never a known divergence of the runtime
};

// ONNX 1.12's suite stores bfloat16 data as UINT16 TensorProtos; read those bits as bfloat16.
void FixBFloat16(Tensor* t) {
  if (t->dtype() == DType::kUInt16)
    *t = Tensor::Wrap(DType::kBFloat16, t->shape(),
                      std::shared_ptr<uint8_t>(t->data_as<uint8_t>(), [keep = *t](uint8_t*) {}));
}

std::string CompareTensors(Tensor expected, const Tensor& got) {
  if (expected.dtype() == DType::kUInt16 && got.dtype() == DType::kBFloat16) FixBFloat16(&expected);
  if (expected.dtype() != got.dtype()) {
    return std::string("dtype ") + DTypeName(got.dtype()) + ", expected " +
           DTypeName(expected.dtype());
  }
  if (expected.shape() != got.shape()) {
    return "shape " + ShapeToString(got.shape()) + ", expected " + ShapeToString(expected.shape());
  }
  for (uint64_t i = 0; i < expected.num_elements(); ++i) {
    double e = ElementAsDouble(expected, i), g = ElementAsDouble(got, i);
    if (std::isnan(e) && std::isnan(g)) continue;
    if (e == g) continue;  // equal infinities
    if (!(std::fabs(g - e) <= 1e-7 + 1e-3 * std::fabs(e))) {
      return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " +
             std::to_string(e);
    }
  }
  return "";
}

// A case where onnxruntime runs the model but its numbers differ from the suite's, on the
// runtime versions listed, for a documented reason (tests/conformance/known_divergences*.txt:
// "CASE VERSION[,VERSION...] REASON", exact names).
struct Known {
  std::string name, reason;
  std::vector<std::string> versions;
  bool seen = false;  // diverged in this run
};

// The entries naming `version`; false (with *error) when the file is missing or a line malformed.
bool LoadKnown(const std::string& path, const std::string& version, std::vector<Known>* out,
               std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read the known-divergences list";
    return false;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    auto sp1 = line.find(' ');
    auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || sp2 + 1 >= line.size()) {
      *error = path + ":" + std::to_string(n) + ": expected 'CASE VERSION[,VERSION...] REASON'";
      return false;
    }
    Known k;
    k.name = line.substr(0, sp1);
    k.reason = line.substr(sp2 + 1);
    std::string list = line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (size_t b = 0; b <= list.size();) {
      size_t e = std::min(list.find(',', b), list.size());
      k.versions.push_back(list.substr(b, e - b));
      b = e + 1;
    }
    if (std::find(k.versions.begin(), k.versions.end(), version) != k.versions.end())
      out->push_back(std::move(k));
  }
  return true;
}

Outcome RunCase(Backend& backend, const fs::path& dir) {
  Outcome out;
  out.name = dir.filename().string();
  auto model = Model::Load((dir / "model.onnx").string());
  if (!model.ok()) {
    out.kind = Outcome::kRejected;
    out.reason = "onnxprobe load: " + model.status().message();
    return out;
  }
  fs::path data = dir / "test_data_set_0";
  std::vector<NamedTensor> inputs, expected;
  for (size_t k = 0;; ++k) {
    fs::path p = data / ("input_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    auto t = ReadTensorProto(p.string());
    if (!t.ok()) {
      out.kind = Outcome::kSkipped;
      out.reason = "input not a tensor onnxprobe holds: " + t.status().message();
      return out;
    }
    inputs.push_back(std::move(*t));
  }
  for (size_t k = 0;; ++k) {
    fs::path p = data / ("output_" + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    auto t = ReadTensorProto(p.string());
    if (!t.ok()) {
      out.kind = Outcome::kSkipped;
      out.reason = "output not a tensor onnxprobe holds: " + t.status().message();
      return out;
    }
    expected.push_back(std::move(*t));
  }
  const auto& decl = model->summary().inputs;
  // the suite names inputs by position; the proto names may be empty
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (size_t k = 0; k < inputs.size() && k < decl.size(); ++k) {
    if (decl[k].elem_type == DTypeToOnnx(DType::kBFloat16)) FixBFloat16(&inputs[k].tensor);
    refs.emplace_back(decl[k].name, &inputs[k].tensor);
  }
  std::string bytes;
  {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto session = backend.CreateSession(bytes, dir.string(), SessionOptions());
  if (!session.ok()) {
    out.kind = Outcome::kRejected;
    out.reason = session.status().message();
    return out;
  }
  std::vector<std::string> names;
  for (const auto& o : model->summary().outputs) names.push_back(o.name);
  auto results = (*session)->Run(refs, names);
  if (!results.ok()) {
    out.kind = Outcome::kRejected;
    out.reason = results.status().message();
    return out;
  }
  if (results->size() != expected.size()) {  // an output the suite expects must not go unchecked
    out.kind = Outcome::kMismatch;
    out.outputs_missing = true;
    out.reason = std::to_string(results->size()) + " outputs, the suite expects " +
                 std::to_string(expected.size());
    return out;
  }
  for (size_t k = 0; k < expected.size(); ++k) {
    const RunOutput& r = (*results)[k];
    if (!r.skipped.empty()) {
      out.kind = Outcome::kSkipped;
      out.reason = r.name + ": " + r.skipped.detail;
      return out;
    }
    std::string diff = CompareTensors(expected[k].tensor, r.tensor);
    if (!diff.empty()) {
      out.kind = Outcome::kMismatch;
      out.reason = "output '" + r.name + "': " + diff;
      return out;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s SUITE_DIR [--baseline FILE] [--report FILE] [--known FILE] "
                 "[--ort-version VERSION] [--suite-name NAME] [--summary FILE]\n",
                 argv[0]);
    return 2;
  }
  std::string suite = argv[1], baseline_file, report_file, known_file, ort_version, summary_file;
  std::string suite_name = suite;
  for (int i = 2; i < argc; i += 2) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "conformance: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--baseline") {
      baseline_file = argv[i + 1];
    } else if (a == "--report") {
      report_file = argv[i + 1];
    } else if (a == "--known") {
      known_file = argv[i + 1];
    } else if (a == "--ort-version") {
      ort_version = argv[i + 1];
    } else if (a == "--suite-name") {
      suite_name = argv[i + 1];
    } else if (a == "--summary") {
      summary_file = argv[i + 1];
    } else {
      std::fprintf(stderr, "conformance: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::string library;
  if (!ort_version.empty()) {
    auto lib = OrtLibraryForVersion(ort_version);
    if (!lib.ok()) {
      std::fprintf(stderr, "conformance: %s\n", lib.status().message().c_str());
      return 2;
    }
    library = *lib;
  }
  auto backend = LoadOrtBackend(library);
  if (!backend.ok()) {
    std::fprintf(stderr, "conformance: %s\n", backend.status().message().c_str());
    return 2;
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(suite)) {
    if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  std::vector<Known> known;
  std::string error;
  if (!known_file.empty() && !LoadKnown(known_file, (*backend)->version(), &known, &error)) {
    std::fprintf(stderr, "conformance: %s\n", error.c_str());
    return 2;
  }
  size_t baseline = 0;
  if (!baseline_file.empty()) {  // a missing or unreadable baseline is an error, not a count of 0
    std::ifstream in(baseline_file);
    std::string text, rest;
    if (!(in >> text) || (in >> rest) ||
        text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) {
      std::fprintf(stderr, "conformance: %s: expected one pass count\n", baseline_file.c_str());
      return 2;
    }
    baseline = std::stoul(text);
  }
  size_t pass = 0, rejected = 0, mismatch = 0, skipped = 0, divergent = 0;
  std::string unexpected;
  std::string report;
  for (const auto& c : cases) {
    Outcome o = RunCase(**backend, c);
    static const char* kNames[] = {"PASS", "REJECTED", "MISMATCH", "SKIPPED"};
    if (o.kind == Outcome::kPass) ++pass;
    if (o.kind == Outcome::kRejected) ++rejected;
    if (o.kind == Outcome::kMismatch) {
      std::string why;
      for (auto& k : known) {
        if (k.name != o.name || o.outputs_missing) continue;
        why = k.reason;
        k.seen = true;
      }
      if (why.empty()) {
        ++mismatch;
        unexpected += "MISMATCH " + o.name + ": " + o.reason + "\n";
      } else {
        ++divergent;
        o.reason += " [known: " + why + "]";
      }
    }
    if (o.kind == Outcome::kSkipped) ++skipped;
    std::string reason = o.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    if (o.kind != Outcome::kPass)
      report += std::string(kNames[o.kind]) + " " + o.name + ": " + reason + "\n";
  }
  (*backend)->TakeLog();
  std::printf("ONNX backend node tests (%s) on onnxruntime %s:\n", suite.c_str(),
              (*backend)->version().c_str());
  std::printf(
      "  cases %zu, passed %zu, rejected by onnxruntime %zu, skipped %zu, known divergences %zu, "
      "unexpected mismatches %zu\n",
      cases.size(), pass, rejected, skipped, divergent, mismatch);
  if (!report_file.empty()) {
    std::ofstream(report_file) << report;
    std::printf("  non-passing cases with reasons: %s\n", report_file.c_str());
  }
  char line[512];
  std::snprintf(
      line, sizeof line,
      "ONNX Runtime %s: %zu/%zu node tests pass (%s; %zu rejected, %zu skipped, %zu known "
      "divergences, %zu unexpected mismatches)\n",
      (*backend)->version().c_str(), pass, cases.size(), suite_name.c_str(), rejected, skipped,
      divergent, mismatch);
  std::fputs(line, stdout);
  if (!summary_file.empty()) {
    // complete or absent: `make test` prints whatever summaries exist
    std::string tmp = summary_file + ".tmp";
    std::ofstream(tmp) << line;
    std::rename(tmp.c_str(), summary_file.c_str());
  }
  int rc = 0;
  if (!baseline_file.empty()) {
    std::printf("  baseline pass count %zu\n", baseline);
    if (pass < baseline) {
      std::printf("FAIL: pass count regressed from %zu to %zu\n", baseline, pass);
      rc = 1;
    }
  }
  if (mismatch > 0) {
    std::printf("FAIL: %zu cases ran but disagree with the expected outputs:\n", mismatch);
    std::fputs(unexpected.c_str(), stdout);
    rc = 1;
  }
  std::string stale;
  for (const auto& k : known) {
    if (!k.seen) stale += "  " + k.name + "\n";
  }
  if (!stale.empty()) {
    std::printf(
        "FAIL: listed as known divergences on onnxruntime %s but did not diverge numerically "
        "(passed, rejected, skipped, missing from the suite or a wrong output count: see the "
        "report; remove the version from their lines in %s):\n%s",
        (*backend)->version().c_str(), known_file.c_str(), stale.c_str());
    rc = 1;
  }
  return rc;
}
