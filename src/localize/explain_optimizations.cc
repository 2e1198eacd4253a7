// Optimization ladder and transformer search, on graph outputs only: marking intermediate
// tensors as outputs would block the very fusions under study.
#include <algorithm>
#include <cmath>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/localize/explain.h"

namespace onnxprobe {
namespace {

constexpr const char* kDisableKey = "optimization.disable_specified_optimizers";

// Outputs of one plain run.
struct Runner {
  std::string dir;  // where the model's external data resolves
  Backend& backend;
  std::string bytes;
  std::vector<std::pair<std::string, const Tensor*>> feed;
  std::vector<std::string> outputs;
  size_t runs = 0;

  Expected<std::vector<RunOutput>> Run(SessionOptions o, const std::vector<std::string>& off) {
    std::string list;
    // separated by ';' (measured on 1.20 and 1.23: a ',' list is read as one unknown name,
    // whatever the header's comment says)
    for (const auto& n : off) list += (list.empty() ? "" : ";") + n;
    if (!list.empty()) o.config_entries[kDisableKey] = list;
    OP_ASSIGN_OR_RETURN(auto session, backend.CreateSession(bytes, dir, o));
    ++runs;
    return session->Run(feed, outputs);
  }
};

bool Same(const std::vector<RunOutput>& x, const std::vector<RunOutput>& y) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (!x[i].tensor.BitwiseEqual(y[i].tensor)) return false;
  }
  return true;
}

// Group testing: which transformers, enabled on their own group, move the outputs away from the
// all-disabled result. Halves the candidates until single names remain.
Status Search(Runner& run, const SessionOptions& o, const std::vector<RunOutput>& base,
              const std::vector<std::string>& cands, std::vector<std::string>* found) {
  if (cands.empty()) return Status::Ok();
  std::vector<std::string> off;  // everything known except `cands`
  for (const auto& n : KnownOrtTransformers()) {
    if (std::find(cands.begin(), cands.end(), n) == cands.end()) off.push_back(n);
  }
  OP_ASSIGN_OR_RETURN(auto got, run.Run(o, off));
  if (Same(got, base)) return Status::Ok();
  if (cands.size() == 1) {
    found->push_back(cands[0]);
    return Status::Ok();
  }
  size_t half = cands.size() / 2;
  std::vector<std::string> left(cands.begin(), cands.begin() + half);
  std::vector<std::string> right(cands.begin() + half, cands.end());
  size_t before = found->size();
  OP_RETURN_IF_ERROR(Search(run, o, base, left, found));
  OP_RETURN_IF_ERROR(Search(run, o, base, right, found));
  // the group changes the outputs only together (one rewrite enables another): name the group
  if (found->size() == before) found->insert(found->end(), cands.begin(), cands.end());
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& KnownOrtTransformers() {
  // ONNX Runtime 1.2x, onnxruntime/core/optimizer/graph_transformer_utils.cc: rewrite rules of
  // levels 1 and 2, then transformers of levels 1, 2 and 3. Unknown names are ignored by the
  // runtime, so names of other versions do no harm.
  static const std::vector<std::string> kNames = {"EliminateIdentity",
                                                  "EliminateSlice",
                                                  "UnsqueezeElimination",
                                                  "EliminateDropout",
                                                  "ExpandElimination",
                                                  "CastElimination",
                                                  "PreShapeNodeElimination",
                                                  "NoopElimination",
                                                  "DivMulFusion",
                                                  "FuseReluClip",
                                                  "GemmSumFusion",
                                                  "GemmTransposeFusion",
                                                  "NotWhereFusion",
                                                  "ConvAddFusion",
                                                  "ConvMulFusion",
                                                  "ConvBNFusion",
                                                  "PadFusion",
                                                  "MatmulBNFusion",
                                                  "LabelEncoderFusion",
                                                  "ClipQuantFusion",
                                                  "ReluQuantFusion",
                                                  "DoubleQDQPairsRemover",
                                                  "ConstantSharing",
                                                  "CommonSubexpressionElimination",
                                                  "ConstantFolding",
                                                  "MatMulAddFusion",
                                                  "ReshapeFusion",
                                                  "GeluFusion",
                                                  "LayerNormFusion",
                                                  "QDQPropagationTransformer",
                                                  "WeightBiasQuantization",
                                                  "TransposeOptimizer",
                                                  "QDQS8ToU8Transformer",
                                                  "QDQSelectorActionTransformer",
                                                  "GemmActivationFusion",
                                                  "MatMulIntegerToFloatFusion",
                                                  "DynamicQuantizeMatMulFusion",
                                                  "ConvActivationFusion",
                                                  "SimplifiedLayerNormFusion",
                                                  "AttentionFusion",
                                                  "EmbedLayerNormFusion",
                                                  "GatherSliceToSplitFusion",
                                                  "GatherToSliceFusion",
                                                  "MatmulTransposeFusion",
                                                  "BiasGeluFusion",
                                                  "SkipLayerNormFusion",
                                                  "FastGeluFusion",
                                                  "QuickGeluFusion",
                                                  "BiasSoftmaxFusion",
                                                  "MatMulScaleFusion",
                                                  "MatMulNBitsFusion",
                                                  "QDQFinalCleanupTransformer",
                                                  "NchwcTransformer",
                                                  "NhwcTransformer",
                                                  "ConvAddActivationFusion"};
  return kNames;
}

Expected<std::vector<std::string>> FindChangingTransformers(
    Backend& backend, const std::string& model_bytes, const std::string& model_dir,
    const std::vector<std::pair<std::string, const Tensor*>>& feed,
    const std::vector<std::string>& outputs, const SessionOptions& options, size_t* runs) {
  Runner run{model_dir, backend, model_bytes, feed, outputs, 0};
  std::vector<std::string> found;
  auto all_off = run.Run(options, KnownOrtTransformers());
  Status st = all_off.ok() ? Search(run, options, *all_off, KnownOrtTransformers(), &found)
                           : all_off.status();
  if (runs != nullptr) *runs += run.runs;
  if (!st.ok()) return st;
  return found;
}

Expected<ExplainResult> ExplainOptimizations(const ExplainRequest& req) {
  OP_RETURN_IF_ERROR(req.policy.Validate());
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  OP_ASSIGN_OR_RETURN(auto inputs, PrepareInputs(model, req.inputs));
  Runner run{model.dir(), *backend, "", {}, {}, 0};
  OP_ASSIGN_OR_RETURN(run.bytes, MarkOutputs(model, {}));
  for (const auto& nt : inputs) run.feed.emplace_back(nt.name, &nt.tensor);
  for (const auto& o : model.summary().outputs) run.outputs.push_back(o.name);

  ExplainResult res;
  SessionOptions off = req.session;
  off.optimization_level = OptLevel::kDisabled;
  OP_ASSIGN_OR_RETURN(auto reference, run.Run(off, {}));
  for (OptLevel level : kOptLevels) {
    if (level == OptLevel::kDisabled) continue;
    if (level > req.session.optimization_level) break;
    SessionOptions o = req.session;
    o.optimization_level = level;
    OP_ASSIGN_OR_RETURN(auto got, run.Run(o, {}));
    LadderStep step;
    step.level = level;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].tensor.BitwiseEqual(reference[i].tensor)) continue;
      ++step.differing_outputs;
      Tolerance tol = req.policy.For(run.outputs[i], "");
      TensorMetrics m = CompareTensors(reference[i].tensor, got[i].tensor, tol, req.policy.rel_eps,
                                       CompareOptions());
      std::string why;
      step.max_abs = std::max(step.max_abs, m.max_abs);
      step.within_tolerance = step.within_tolerance && Judge(m, tol, req.policy.judge, &why);
    }
    if (step.differing_outputs > 0 && !res.first_level_with_difference)
      res.first_level_with_difference = level;
    res.ladder.push_back(step);
  }
  if (res.first_level_with_difference) {
    OP_ASSIGN_OR_RETURN(auto all_off, run.Run(req.session, KnownOrtTransformers()));
    res.explained_by_transformers = Same(all_off, reference);
    OP_RETURN_IF_ERROR(Search(run, req.session, all_off, KnownOrtTransformers(), &res.responsible));
  }
  res.runs = run.runs;
  return res;
}

}  // namespace onnxprobe
