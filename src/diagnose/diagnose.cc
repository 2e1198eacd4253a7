// Diagnose(): for each introduced culprit localization kept an isolated run of, the experiments
// of each cause family in turn; quantized layers from the quantization report; the knowledge
// file last.
#include <chrono>

#include "diagnose/causes.h"
#include "diagnose/knowledge.h"

namespace onnxprobe {

const char* CauseName(Cause c) {
  switch (c) {
    case Cause::kNondeterminism:
      return "nondeterminism";
    case Cause::kThreadCount:
      return "thread-count";
    case Cause::kOptimizer:
      return "optimizer";
    case Cause::kKernelChange:
      return "kernel-change";
    case Cause::kAttributeChanged:
      return "attribute-changed";
    case Cause::kWeightChanged:
      return "weight-changed";
    case Cause::kNodesAdded:
      return "nodes-added";
    case Cause::kFloat16Range:
      return "float16-range";
    case Cause::kQuantSaturation:
      return "quantization-saturation";
    case Cause::kCalibrationRange:
      return "calibration-range";
    case Cause::kTrainingMode:
      return "training-mode";
    case Cause::kCapturePrecision:
      return "capture-precision";
    case Cause::kFastMathOption:
      return "fast-math-option";
    case Cause::kConstantFitted:
      return "constant-fitted";
  }
  return "?";
}

const char* CertaintyName(Certainty c) {
  return c == Certainty::kConfirmed ? "confirmed" : "likely";
}

namespace diagnose {

void Tried(std::string* tried, const std::string& clause) {
  *tried += (tried->empty() ? "" : "; ") + clause;
}

}  // namespace diagnose

Status CheckKnowledgeFile(const std::string& path) {
  return diagnose::ReadKnowledge(path).status();
}

Expected<DiagnosisResult> Diagnose(const DiagnoseInput& in, const DiagnoseOptions& options) {
  using namespace diagnose;
  auto t0 = std::chrono::steady_clock::now();
  if (in.comparison == nullptr) return InvalidArgument("diagnosis needs the comparison's result");
  DiagnosisResult res;
  res.ran = true;
  // the file was checked when the comparison opened: a failure now (it changed, the disk is
  // full) costs the record, never the comparison's report
  std::vector<KnowledgeEntry> earlier;
  bool knowledge = !options.knowledge_file.empty();
  if (knowledge) {
    auto read = ReadKnowledge(options.knowledge_file);
    if (read.ok()) {
      earlier = std::move(*read);
    } else {
      knowledge = false;
      res.note = "knowledge file not used: " + read.status().message();
    }
  }
  Ctx cx{in, options, 0, {}};
  const LocalizeResult* l = in.localization;
  if (in.quant != nullptr && in.quant->active()) {
    QuantCauses(cx, &res.findings);
  } else if (l == nullptr || l->cases.empty()) {
    res.note = l == nullptr || !l->ran
                   ? "nothing was localized"
                   : "no introduced culprit was run alone (nothing to diagnose)";
  }
  if (l != nullptr) {
    size_t done = 0;
    for (const IsolatedCase& k : l->cases) {
      if (done++ >= options.max_cases) break;
      const Culprit* culprit = nullptr;
      for (const auto& c : l->culprits) {
        if (c.node == k.node && c.tensor == k.tensor) culprit = &c;
      }
      Culprit1 c{k, culprit, MaxAbsDiff(k.expected, k.observed)};
      std::vector<Finding> found;
      std::string tried;
      if (in.b.model != nullptr) RuntimeCauses(cx, c, &found, &tried);
      ModelCauses(cx, c, &found, &tried);
      if (found.empty()) {
        res.unexplained.push_back(
            {k.node, culprit != nullptr ? culprit->op_type : "", k.tensor, tried});
      }
      // two culprits can share a changed node (a Constant both read), or be one node's copies
      // in a Loop/Scan's unrolled iterations ("node@2"): one finding, its copies counted
      auto base = [](const std::string& node) {
        size_t at = node.rfind('@');
        bool digits = at != std::string::npos && at + 1 < node.size() &&
                      node.find_first_not_of("0123456789", at + 1) == std::string::npos;
        return digits ? node.substr(0, at) : node;
      };
      for (auto& f : found) {
        Finding* seen = nullptr;
        for (auto& g : res.findings) {
          if (base(g.node) == base(f.node) && g.cause == f.cause && g.fix.command == f.fix.command)
            seen = &g;
        }
        if (seen == nullptr) {
          res.findings.push_back(std::move(f));
        } else if (seen->node != f.node) {
          seen->copies = std::max<size_t>(seen->copies, 1) + 1;
        }
      }
    }
  }
  // a PyTorch capture's parameters against the ONNX initializers (parameter parity): no
  // experiment needed, the values themselves differ
  for (const Culprit& c : l != nullptr ? l->culprits : std::vector<Culprit>()) {
    if (c.evidence != Evidence::kParity) continue;
    Finding f;
    f.node = c.node;
    f.op_type = c.op_type;
    f.tensor = c.tensor;
    f.cause = Cause::kWeightChanged;
    f.certainty = Certainty::kConfirmed;
    f.summary =
        "a weight of the ONNX model differs from the PyTorch parameter it was exported from";
    f.evidence = "parameter parity: " + c.reason;
    f.fix.summary =
        "export the model again from the module state the capture used (eval mode, "
        "the same state_dict), or capture again from the module the ONNX model came "
        "from";
    res.findings.push_back(std::move(f));
  }
  if (in.capture != nullptr) {  // PyTorch computing as in training explains what follows from it
    std::vector<Finding> torch;
    TorchCauses(cx, &torch);
    res.findings.insert(res.findings.begin(), torch.begin(), torch.end());
  }
  // a culprit with a confirmed cause (the capture's records, parameter parity) is not unexplained;
  // a likely one (a lower precision) leaves room for other causes
  std::vector<Unexplained> left;
  for (auto& u : res.unexplained) {
    bool said = false;
    for (const auto& f : res.findings)
      said = said || (f.node == u.node && f.certainty == Certainty::kConfirmed);
    if (!said) left.push_back(std::move(u));
  }
  res.unexplained = std::move(left);
  res.unexplained.insert(res.unexplained.end(), cx.unexplained.begin(), cx.unexplained.end());
  res.runs = cx.runs;
  if (knowledge) {
    CiteKnowledge(earlier, &res.findings);
    const Model* m = in.b.model != nullptr ? in.b.model : in.a.model;
    std::string sha = m != nullptr ? m->Hashes(false).sha256 : "";
    std::string path = m != nullptr ? m->path() : in.b.path;
    if (!res.findings.empty()) {
      Status st =
          RecordKnowledge(options.knowledge_file, std::move(earlier), res.findings, path, sha);
      if (st.ok())
        res.knowledge_file = options.knowledge_file;
      else
        res.note = "knowledge file " + options.knowledge_file + " not written: " + st.message();
    }
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace onnxprobe
