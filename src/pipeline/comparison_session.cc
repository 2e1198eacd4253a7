// ComparisonSession: both sides opened once, then one comparison per run. Each stage returns
// its own result (sides, inputs, alignment, comparison, localization); this file only assembles
// them.
#include "onnxprobe/pipeline/comparison_session.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/exact_reference.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/engine/rewrites.h"
#include "onnxprobe/model/model_diff.h"
#include "onnxprobe/quant/quant_session.h"
#include "onnxprobe/side/isolated_side.h"
#include "pipeline/confirm_rows.h"
#include "pipeline/inherited_verdict.h"
#include "pipeline/retained_side.h"
#include "pipeline/side_resources.h"

namespace onnxprobe {
namespace {

// Nodes a localization plan may span on a PyTorch side (a transformer layer is a few hundred).
constexpr size_t kModuleSpanNodes = 4096;

const char* SideName(bool is_a) { return is_a ? "side A" : "side B"; }

// `cache` holds a model loaded for side A, reused when side B names the same file.
Expected<std::unique_ptr<Side>> OpenRequested(const SideRequest& s, bool is_a, bool isolate,
                                              uint64_t max_memory, bool hold,
                                              std::optional<Model>* cache) {
  SideSpec spec{s.path, s.session, s.ort_library};
  spec.max_memory = max_memory;
  spec.hold_session = hold && !isolate;
  if (IsDumpPath(s.path)) {
    if (s.session_given) {
      return InvalidArgument(std::string(SideName(is_a)) + " (" + s.path +
                             ") is a dump: session options and runtimes apply to live models only");
    }
    return OpenSide(spec);
  }
  if (!cache->has_value() || (*cache)->path() != s.path) {
    OP_ASSIGN_OR_RETURN(Model m, Model::Load(s.path));
    *cache = std::move(m);
  }
  if (isolate && !s.session.provider_library.empty() && IsCpuProvider(s.session.provider)) {
    // the child process registers the library; this one never loads the runtime to ask it
    return InvalidArgument(std::string(SideName(is_a)) +
                           ": with --isolate-runtime, name the "
                           "provider of --provider-library " +
                           s.session.provider_library + " with --provider");
  }
  return isolate ? OpenIsolatedLiveSide(**cache, spec) : OpenLiveSide(**cache, spec);
}

bool InputsGiven(const InputOptions& io) {
  return !io.files.empty() || !io.tensors.empty() || !io.shapes.empty() || !io.dim_params.empty() ||
         !io.ranges.empty();
}

// Inputs shared by both sides: a dump's recorded inputs, else given or generated from a model.
Expected<std::vector<NamedTensor>> SharedInputs(Side& a, Side& b, const SessionRun& run,
                                                CompareReport* report) {
  OP_ASSIGN_OR_RETURN(auto ra, a.RecordedInputs());
  OP_ASSIGN_OR_RETURN(auto rb, b.RecordedInputs());
  bool given = run.inputs_given || InputsGiven(run.inputs);
  if ((!ra.empty() || !rb.empty()) && given) {
    return InvalidArgument("a dump side (" + (ra.empty() ? b : a).info().path +
                           ") brings its own inputs; other inputs cannot be given");
  }
  if (!ra.empty() && !rb.empty()) {
    for (const auto& x : ra) {
      auto it = std::find_if(rb.begin(), rb.end(),
                             [&](const NamedTensor& y) { return y.name == x.name; });
      if (it == rb.end() || !x.tensor.BitwiseEqual(it->tensor)) {
        return InvalidArgument("the two dumps were made from different inputs (input '" + x.name +
                               "' differs)");
      }
    }
  }
  if (!ra.empty() || !rb.empty()) {
    report->input_origin = InputOrigin::kRecorded;
    return ra.empty() ? rb : ra;
  }
  const Model* m = a.model() != nullptr ? a.model() : b.model();
  if (m == nullptr) {  // two dumps without recorded inputs: nothing to run
    if (given) return InvalidArgument("both sides are dumps: there is no model to feed inputs to");
    report->input_origin = InputOrigin::kRecorded;
    return std::vector<NamedTensor>();
  }
  bool given_tensors = !run.inputs.files.empty() || !run.inputs.tensors.empty();
  report->input_origin = given_tensors ? InputOrigin::kFiles : InputOrigin::kGenerated;
  report->input_seed = run.inputs.seed;
  InputPreparation prep;
  auto prepared = PrepareInputs(*m, run.inputs, &prep);
  report->notes.insert(report->notes.end(), prep.notes.begin(), prep.notes.end());
  report->nonfinite_inputs = prep.nonfinite_inputs;
  return prepared;
}

// Options a stage cannot honour, refused once the sides are open and before anything runs.
Status CheckRequest(const CompareRequest& req, const Side& a, const Side& b) {
  if (req.explain_optimizations) {
    const SideRequest& x = req.a;
    const SideRequest& y = req.b;
    bool same_model = x.path == y.path && a.model() != nullptr && b.model() != nullptr;
    if (!same_model || x.ort_library != y.ort_library ||
        !SameProvider(x.session.provider, y.session.provider) ||
        x.session.optimization_level != OptLevel::kDisabled ||
        y.session.optimization_level == OptLevel::kDisabled) {
      return InvalidArgument(
          "explaining optimizations needs one model on one runtime and provider, side A with "
          "optimizations disabled and side B with them enabled");
    }
  }
  const std::string& repro = req.localize_options.repro_dir;
  if (repro.empty()) return Status::Ok();
  if (!req.localize)
    return InvalidArgument("a repro bundle (" + repro + ") needs localization, which is off");
  if (b.model() == nullptr) {
    return InvalidArgument("a repro bundle (" + repro + ") needs side B to run live; side B (" +
                           b.info().path + ") is a dump");
  }
  return Status::Ok();
}

// Every FAIL says where its error is born, or why that cannot be said.
std::string OriginNote(const CompareReport& report) {
  const ComparisonResult& r = report.comparison;
  if (r.failures == 0 || !r.frontier.empty()) return "";
  const LocalizeResult& l = report.localization;
  for (const auto& c : l.culprits) {
    if (c.evidence == Evidence::kParity)
      return "no failing tensor fails on its own; " + c.node + " (" + c.op_type +
             ") reads a weight that differs from PyTorch's: " + c.reason;
    if (c.introduced && c.row < 0) {
      return "no failing tensor fails on its own; the largest error made alone comes from " +
             c.node + " (" + c.op_type + "), below tolerance there and amplified downstream";
    }
  }
  const TensorResult& f = r.rows[r.first_failure];
  std::string s =
      "every failing tensor is within tolerance when its node runs alone on B's "
      "runtime with A's inputs: the error accumulates over several nodes, none of "
      "which makes it alone; it first exceeds tolerance at " +
      f.name + " (" + f.op_type + " node " + f.node + ")";
  if (!l.note.empty()) s += "; isolation: " + l.note;
  return s;
}

// A node whose weight differs from PyTorch's parameter is a culprit with certainty, whatever
// isolation could show (inside a module PyTorch exposes as one block, nothing else names it):
// such culprits come first, in graph order; an isolated culprit at the same node keeps its
// measurements and takes the parity evidence.
void AddParityCulprits(const ParityReport& parity, const Model& model, const ComparisonResult& r,
                       LocalizeResult* l) {
  std::vector<Culprit> first;
  std::set<std::string> seen;
  for (const auto& f : parity.findings) {
    // a weight read by several nodes (tied): the reader isolation also names, else the first
    // reader whose output fails, else the first reader
    std::string node = f.node;
    std::string failing;
    for (const auto& rd : f.readers) {
      bool isolated = std::any_of(l->culprits.begin(), l->culprits.end(),
                                  [&](const Culprit& c) { return c.node == rd; });
      if (isolated) {
        node = rd;
        failing.clear();
        break;
      }
      for (const auto& row : r.rows) {
        if (failing.empty() && !row.pass && row.node == rd) failing = rd;
      }
    }
    if (!failing.empty()) node = failing;
    if (node.empty() || !seen.insert(node).second) continue;
    auto it = std::find_if(l->culprits.begin(), l->culprits.end(),
                           [&](const Culprit& c) { return c.node == node; });
    Culprit c;
    if (it != l->culprits.end()) {
      c = std::move(*it);
      l->culprits.erase(it);
    } else {
      c.node = node;
      c.op_type = f.op_type;
      for (const auto& n : model.index().nodes()) {
        if (n.name != node || n.outputs.empty()) continue;
        c.op_type = n.op_type;
        c.tensor = n.outputs[0];
        break;
      }
      for (size_t i = 0; i < r.rows.size(); ++i) {
        if (!c.tensor.empty() && r.rows[i].name_b == c.tensor) c.row = static_cast<int>(i);
      }
      c.nodes = {f.node};
    }
    c.evidence = Evidence::kParity;
    c.introduced = true;
    c.reason = f.message;
    first.push_back(std::move(c));
  }
  l->culprits.insert(l->culprits.begin(), std::make_move_iterator(first.begin()),
                     std::make_move_iterator(first.end()));
}

// A live side's session options with its provider as it runs (a plugin library's provider by
// its registered name); the request's for a dump.
SessionOptions RunningSession(const Side& side, const SideRequest& request) {
  SessionOptions o = request.session;
  if (side.model() != nullptr) o.provider = side.session_options().provider;
  return o;
}

// A live side on another provider than CPU.
bool OnOtherProvider(const Side& side, const SideRequest& request) {
  return side.model() != nullptr && !IsCpuProvider(RunningSession(side, request).provider);
}

// A runtime failure on a side whose provider leaves nodes to the CPU provider while fallback is
// disabled: the nodes, named (the runtime's own message does not name them); `st` otherwise.
Status NameRefusedNodes(const Status& st, Side& a, Side& b, const CompareRequest& req,
                        const std::vector<NamedTensor>& inputs) {
  if (st.ok() || st.code() != ErrorCode::kBackend) return st;
  for (bool is_a : {true, false}) {
    const SideRequest& s = is_a ? req.a : req.b;
    if (!OnOtherProvider(is_a ? a : b, s) || s.session.allow_fallback) continue;
    auto p = FindPlacement(s.path, s.ort_library, RunningSession(is_a ? a : b, s), inputs);
    if (!p.ok() || p->complete()) continue;
    return Unsupported(std::string(SideName(is_a)) + " (" + s.path + "): " + p->provider +
                       " does not take " + std::to_string(p->on_cpu.size()) + " of " +
                       std::to_string(p->model_nodes) + " nodes: " + CpuNodeList(*p) +
                       "; CPU fallback is disabled (--allow-fallback runs them on the CPU "
                       "provider and lists them in the report)");
  }
  return st;
}

}  // namespace

const char* InputOriginName(InputOrigin o) {
  switch (o) {
    case InputOrigin::kGenerated:
      return "generated";
    case InputOrigin::kFiles:
      return "files";
    case InputOrigin::kRecorded:
      return "recorded";
  }
  return "?";
}

struct ComparisonSession::State {
  // the job's memory budget while the session lives (destroyed last: declared first)
  std::unique_ptr<ScopedAllocationLimit> budget;
  CompareRequest req;
  SessionOpenOptions open;
  CompareJob job;  // the request's, with the mapping file and the noise floor read
  std::optional<Model> cache;
  std::optional<Model> graph;
  std::unique_ptr<Side> a, b;
  std::unique_ptr<Side> exact;  // the exact reference (CompareRequest::exact_reference)
  std::optional<ExactModel> exact_built;
  std::string a_path;  // side A's path now (a run may replace it)
  std::string graph_name;
  std::string model_diff;
  std::optional<ModelDiff> diff;       // two model files
  RewriteAlignment rewrites;           // two model files: pairing by meaning (engine/rewrites.h)
  Placement placement_a, placement_b;  // found on the first run, for sides that allow fallback
  size_t runs = 0;
};

ComparisonSession::ComparisonSession(std::unique_ptr<State> state) : state_(std::move(state)) {}
ComparisonSession::~ComparisonSession() = default;
size_t ComparisonSession::runs() const { return state_->runs; }

SessionRun SingleRun(const CompareRequest& request) {
  SessionRun run;
  run.inputs = request.inputs;
  run.inputs_given = request.inputs_given;
  run.on_row = request.on_row;
  return run;
}

namespace {

// A dump compared with a live model other than the one it was captured from (its manifest's
// SHA-256): legitimate (last week's build against this one), but said, since a dump of the wrong
// file compares as well as the right one. "" when both are the same model or either is unknown.
std::string DumpOfAnotherModel(const SideInfo& a, const SideInfo& b) {
  for (bool dump_is_a : {true, false}) {
    const SideInfo& dump = dump_is_a ? a : b;
    const SideInfo& live = dump_is_a ? b : a;
    if (dump.kind != SideKind::kDump || live.kind != SideKind::kLive) continue;
    if (dump.model_sha256.empty() || live.model_sha256.empty() ||
        dump.model_sha256 == live.model_sha256)
      return "";
    return std::string(dump_is_a ? "side A" : "side B") + " (" + dump.path +
           ") was captured from a model with SHA-256 " + dump.model_sha256.substr(0, 12) +
           "..., not " + live.path + " (" + live.model_sha256.substr(0, 12) + "...)";
  }
  return "";
}

// The exact reference of side A's model (else B's), on that side's runtime, CPU provider.
struct OpenedExact {
  std::unique_ptr<Side> side;
  ExactModel built;
};
Expected<OpenedExact> OpenExactReference(const CompareRequest& req, const Side& a, const Side& b) {
  bool from_a = a.model() != nullptr;
  const Model* model = from_a ? a.model() : b.model();
  if (model == nullptr)
    return InvalidArgument(
        "--reference exact computes a model in float64: give a model as side A "
        "or B, not two dumps");
  const SideRequest& side = from_a ? req.a : req.b;
  if (req.isolate_runtime) {
    // the reference's runtime runs in a child process too: each attempt is an isolated side
    std::unique_ptr<Side> opened;
    auto exact = PrepareExactReference(*model, [&](const Model& m, const SessionOptions& so) {
      SideSpec spec{model->path(), so, side.ort_library};
      spec.max_memory = req.job.max_memory;
      auto s = OpenIsolatedLiveSide(m, spec);
      if (!s.ok()) return s.status();
      opened = std::move(*s);
      return Status::Ok();
    });
    if (!exact.ok()) return exact.status().WithContext("the exact reference");
    return OpenedExact{std::move(opened), std::move(exact->built)};
  }
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(side.ort_library));
  auto exact = PrepareExactReference(*model, *backend);
  if (!exact.ok()) return exact.status().WithContext("the exact reference");
  SideSpec spec{model->path(), exact->session, side.ort_library};
  spec.max_memory = req.job.max_memory;
  OP_ASSIGN_OR_RETURN(auto opened, OpenLiveSide(exact->model, spec));
  return OpenedExact{std::move(opened), std::move(exact->built)};
}

}  // namespace

Expected<std::unique_ptr<ComparisonSession>> ComparisonSession::Open(
    const CompareRequest& req, const SessionOpenOptions& options) {
  if (req.latency_runs < 0)
    return InvalidArgument("latency runs must be 0 (off) or more, not " +
                           std::to_string(req.latency_runs));
  auto st = std::make_unique<State>();
  st->req = req;
  st->open = options;
  CompareJob& job = st->job;
  job = req.job;
  st->budget = std::make_unique<ScopedAllocationLimit>(job.max_memory);
  if (!req.mapping_file.empty()) {
    OP_ASSIGN_OR_RETURN(auto mapping, ReadTensorMapping(req.mapping_file));
    for (auto& [x, y] : mapping) job.rename.emplace(x, y);  // explicit entries win
  }
  if (!req.noise_floor_file.empty()) {
    OP_ASSIGN_OR_RETURN(job.policy.noise_floor, ReadNoiseFloor(req.noise_floor_file));
  }
  // sessions held across runs are outside the memory budget: only without one
  bool hold = options.hold_sessions && job.max_memory == 0;
  auto a = OpenRequested(req.a, true, req.isolate_runtime, job.max_memory, hold, &st->cache);
  if (!a.ok()) return a.status().WithContext("side A");
  auto b = OpenRequested(req.b, false, req.isolate_runtime, job.max_memory, hold, &st->cache);
  if (!b.ok()) return b.status().WithContext("side B");
  st->a = std::move(*a);
  st->b = std::move(*b);
  st->a_path = req.a.path;
  OP_RETURN_IF_ERROR(CheckRequest(req, *st->a, *st->b));
  if (!req.diagnose.knowledge_file.empty())
    OP_RETURN_IF_ERROR(CheckKnowledgeFile(req.diagnose.knowledge_file));
  if (!req.graph_model.empty()) {
    OP_ASSIGN_OR_RETURN(Model g, Model::Load(req.graph_model));
    st->graph = std::move(g);
    job.graph = &*st->graph;
  }
  if (req.exact_reference) {
    OP_ASSIGN_OR_RETURN(OpenedExact x, OpenExactReference(req, *st->a, *st->b));
    st->exact = std::move(x.side);
    st->exact_built = std::move(x.built);
  }
  const Model* named = st->a->model() != nullptr ? st->a->model() : st->b->model();
  if (named == nullptr && st->graph) named = &*st->graph;
  if (named != nullptr) st->graph_name = named->summary().graph_name;
  const Model* ma = st->a->model();
  const Model* mb = st->b->model();
  if (ma != nullptr && mb != nullptr && req.a.path != req.b.path) {
    auto diff = DiffModels(*ma, *mb);
    st->model_diff = diff.ok() ? SummarizeModelDiff(*diff)
                               : "model diff not available: " + diff.status().message();
    if (diff.ok()) {
      st->diff = std::move(*diff);
      st->rewrites = AlignRewrites(*ma, *mb, *st->diff);
    }
  }
  return std::unique_ptr<ComparisonSession>(new ComparisonSession(std::move(st)));
}

namespace {

// What side A's first fetch of a single comparison also captures for its localization. An
// isolated node is fed side A's values at its inputs; where side B fuses an input away (a
// MatMul's output inside MatMul+Add), the comparison did not fetch it, and side A would run
// again in a session of its own, the whole model's weights loaded and packed again. So the
// first fetch also captures the inputs of the nodes that produce a tensor both sides have (each
// isolated plan's boundary) that side B does not have, held with the rest (GPT-2-medium-shaped:
// 433 more tensors; the comparison 11.2 -> 9.4 s, peak 2.4 -> 2.6-3.3 GB; ResNet-50: 53, peak
// 340 -> 360 MB). Only for a live side A at optimizations disabled (marking a tensor changes no
// kernel there), without a memory budget (as RetainedSide), and not in a session that holds its
// sides over several samples (the focus sample is localized apart).
std::vector<std::string> LocalizationReads(const CompareRequest& req, const CompareJob& job,
                                           const SessionOpenOptions& open, const Side& a,
                                           const Side& b, const SessionRun& run) {
  std::vector<std::string> names;
  const Model* m = a.model();
  if (m == nullptr || job.max_memory > 0 || open.hold_sessions || run.compared != nullptr ||
      !req.localize || !run.localize || a.info().kind != SideKind::kLive ||
      a.session_options().optimization_level != OptLevel::kDisabled)
    return names;
  std::set<std::string> in_a, hidden_b(b.hidden().begin(), b.hidden().end()), added;
  for (const auto& t : a.tensors()) in_a.insert(t.name);
  const GraphIndex& idx = m->index();
  for (const auto& t : b.tensors()) {
    const TensorEntry* e = in_a.count(t.name) ? idx.Find(t.name) : nullptr;
    if (e == nullptr || e->producer < 0) continue;
    for (const auto& x : idx.nodes()[e->producer].inputs) {
      if (in_a.count(x) && hidden_b.count(x) && added.insert(x).second) names.push_back(x);
    }
  }
  return names;
}

// A side running loops unrolled names a copy of a body node "<node>@<iteration>": the culprit is
// named as the user knows the node (the body's), its iteration said in the reason and its tensor.
void NameBodyNodes(LocalizeResult* l) {
  auto split = [](const std::string& n, std::string* base) -> std::string {
    size_t at = n.rfind('@');
    if (at == std::string::npos || at == 0 || at + 1 == n.size() ||
        n.find_first_not_of("0123456789", at + 1) != std::string::npos)
      return "";
    *base = n.substr(0, at);
    return n.substr(at + 1);
  };
  auto rename = [&](Culprit& c) {
    std::string base;
    std::string iteration = split(c.node, &base);
    if (iteration.empty()) return;
    c.node = base;
    c.reason =
        "iteration " + iteration + " of the loop" + (c.reason.empty() ? "" : "; " + c.reason);
    for (auto& n : c.nodes) {
      std::string b;
      if (!split(n, &b).empty()) n = b;
    }
  };
  for (auto& c : l->culprits) rename(c);
  for (auto& c : l->drift_origins) rename(c);
}

// Two model files: B's tensors paired with the A tensors they stand for after a rewrite, and
// A's tensors whose name B reused for another meaning left unpaired (engine/rewrites.h).
void ApplyRewrites(const RewriteAlignment& rw, CompareJob* job, CompareReport* report) {
  job->reshaped_ok = true;         // rows: intermediate tensors only (ComparePair)
  job->kernel.reshaped_ok = true;  // a node run alone is judged by its values
  for (const auto& [x, y] : rw.rename) job->rename.emplace(x, y);  // explicit entries win
  for (const auto& [x, why] : rw.distrusted) {
    if (!job->rename.count(x)) job->distrusted.emplace(x, why);
  }
  report->rewrites = rw.rewrites;
  report->rewrite_kinds = rw.kinds;
  if (rw.renamed > 0)
    report->notes.push_back(std::to_string(rw.renamed) +
                            " tensors paired under another name in B (read by the same nodes)");
}

}  // namespace

// One run's stages, in order (Run): each reads what the earlier ones settled and adds its part
// of the report. `job` is the session's, plus what alignment and quantization add for this run.
struct ComparisonSession::Stages {
  State& st;
  const SessionRun& run;
  RetainedSide& retained;
  Side& sa;
  Side& sb;
  CompareJob job;
  CompareReport report;
  std::vector<NamedTensor> inputs;
  std::shared_ptr<quant::QuantSession> quantized;  // B compared as a quantized A
  bool reuse = false;                   // the comparison's rows are the caller's (run.compared)
  std::optional<CaptureFacts> capture;  // a PyTorch side A's records of the culprits' tensors

  // The shared inputs set on both sides (and the exact reference); what each side says.
  Status Prepare() {
    const CompareRequest& req = st.req;
    report.graph_name = st.graph_name;
    if (const Model* m = sa.model() != nullptr ? sa.model() : sb.model())
      for (const auto& v : m->summary().outputs) report.graph_outputs.push_back(v.name);
    OP_ASSIGN_OR_RETURN(inputs, SharedInputs(sa, sb, run, &report));
    Status set = sa.SetInputs(inputs);
    if (set.ok()) set = sb.SetInputs(inputs);
    if (set.ok() && st.exact) {
      set = st.exact->SetInputs(inputs).WithContext("the exact reference");
      job.exact = st.exact.get();
      report.exact = st.exact_built;
      report.notes.push_back(st.exact_built->Summary());
      for (const auto& n : DescribeInexactNodes(*st.exact_built))
        report.notes.push_back("exact reference: " + n);
    }
    OP_RETURN_IF_ERROR(NameRefusedNodes(set, sa, sb, req, inputs));
    retained.AlsoFetch(LocalizationReads(req, st.job, st.open, *st.a, sb, run));
    report.notes.insert(report.notes.end(), st.req.notes.begin(), st.req.notes.end());
    for (const auto& n : sa.info().notes) report.notes.push_back("side A: " + n);
    for (const auto& n : sb.info().notes) report.notes.push_back("side B: " + n);
    for (const auto& in : inputs)
      report.inputs.push_back({in.name, in.tensor.dtype(), in.tensor.shape()});
    return Status::Ok();
  }

  // A side that lets the CPU provider run what its provider does not take says which nodes.
  Status Place() {
    const CompareRequest& req = st.req;
    for (bool is_a : {true, false}) {
      const SideRequest& s = is_a ? req.a : req.b;
      Placement& placed = is_a ? st.placement_a : st.placement_b;
      if (!OnOtherProvider(is_a ? sa : sb, s) || !s.session.allow_fallback) continue;
      if (placed.provider.empty()) {
        auto p = FindPlacement(s.path, s.ort_library, RunningSession(is_a ? sa : sb, s), inputs);
        if (!p.ok()) return p.status().WithContext(std::string(SideName(is_a)) + " placement");
        placed = std::move(*p);
      }
      (is_a ? report.placement_a : report.placement_b) = placed;
      report.notes.push_back(std::string(SideName(is_a)) + ": " + DescribePlacement(placed));
    }
    return Status::Ok();
  }

  // How the sides' tensors pair: a PyTorch capture's module outputs aligned with the ONNX
  // tensors, a quantized side B by structure, two model files through their rewrites.
  Status Pair() {
    const CompareRequest& req = st.req;
    if (sa.info().kind == SideKind::kTorchCapture && sb.model() != nullptr) {
      auto aligned = AlignTorchCapture(sa, sb, job.max_memory);
      if (!aligned.ok()) return aligned.status().WithContext("aligning the PyTorch capture");
      Alignment& al = *aligned;
      for (const auto& [x, y] : al.rename) job.rename.emplace(x, y);  // explicit entries win
      for (const auto& x : al.advisory) {
        auto it = job.rename.find(x);
        if (it != job.rename.end() && al.rename.count(x) && it->second == al.rename.at(x))
          job.advisory.insert(x);
      }
      // a value inside a module call is judged only when the call's outputs (or the boundaries
      // of calls inside it, after the value) confirm it
      job.confirm_by = ConfirmingRows(al.rows, job.advisory, sb.model());
      report.parity = std::move(al.parity);
      report.alignment = std::move(al.rows);
    }
    OP_ASSIGN_OR_RETURN(quantized, quant::Attach(sa, sb, req.quant, &job, &report.notes));
    if (!quantized && st.a_path == req.a.path && st.diff) ApplyRewrites(st.rewrites, &job, &report);
    return Status::Ok();
  }

  // Every paired tensor measured (or the caller's rows reused).
  Status CompareRows() {
    const CompareRequest& req = st.req;
    // a side held from one run to the next counts every run it made: this run's are the
    // difference
    const size_t runs_a0 = sa.runs(), runs_b0 = sb.runs();
    reuse = run.compared != nullptr && !quantized && sa.info().kind != SideKind::kTorchCapture;
    auto compared = reuse                    ? Expected<ComparisonResult>(*run.compared)
                    : req.bisect_per_run > 0 ? RunBisection(sa, sb, job, req.bisect_per_run)
                                             : RunComparison(sa, sb, job, run.on_row);
    if (!compared.ok()) return NameRefusedNodes(compared.status(), sa, sb, req, inputs);
    report.comparison = std::move(*compared);
    ComparisonResult& r = report.comparison;
    if (std::string note = DumpOfAnotherModel(r.side_a, r.side_b); !note.empty())
      report.notes.push_back(note);
    // inputs NaN/Inf everywhere, run as asked (--allow-nonfinite-inputs): their NaN outputs are
    // said, not failed
    if (req.inputs.allow_nonfinite) {
      for (auto& n : r.nan_outputs) report.notes.push_back(n + " (NaN/Inf inputs were allowed)");
      r.nan_outputs.clear();
    }
    if (!reuse) {
      r.runs_a = r.runs_a >= runs_a0 ? r.runs_a - runs_a0 : r.runs_a;
      r.runs_b = r.runs_b >= runs_b0 ? r.runs_b - runs_b0 : r.runs_b;
    }
    if (r.aborted) {
      Status named = NameRefusedNodes(r.abort_status, sa, sb, req, inputs);
      if (named.code() == ErrorCode::kUnsupported) return named;
    }
    // an unconfirmed value inside a module call is no boundary for isolation either
    for (const auto& row : r.rows) {
      if (row.state == RowState::kAdvisory && job.confirm_by.count(row.name))
        job.rename.erase(row.name);
    }
    return Status::Ok();
  }

  // Where the error is introduced: each quantized layer alone, or each candidate node alone
  // on side B's runtime with side A's inputs; the rows' roles settled from it.
  Status Localize() {
    const CompareRequest& req = st.req;
    ComparisonResult& r = report.comparison;
    const LocalizeOptions& lopt = req.localize_options;
    bool drift = lopt.drift && run.drift;
    // a failing advisory row (a value inside a module call its outputs did not confirm, a pair
    // found by values alone) is confirmed or explained there
    bool unconfirmed = std::any_of(r.rows.begin(), r.rows.end(), [&](const TensorResult& row) {
      return row.state == RowState::kAdvisory && !row.within_tolerance &&
             (job.confirm_by.count(row.name) || job.advisory.count(row.name));
    });
    bool wanted = r.failures > 0 || unconfirmed || lopt.candidates == Candidates::kAll ||
                  (drift && r.first_difference >= 0 && sb.model() != nullptr);
    if (quantized) {  // quantized layers are isolated their own way
      OP_ASSIGN_OR_RETURN(report.quant, quant::Finish(*quantized, sa, sb, inputs, r));
      quant::SettleRoles(report.quant, &r);
      return Status::Ok();
    }
    if (!req.localize || !run.localize || r.aborted || !wanted) return Status::Ok();
    LocalizeOptions lo = lopt;
    lo.drift = lo.drift && (run.drift || r.failures > 0);
    if (!req.isolate_runtime) lo.keep_cases = req.diagnose.max_cases;
    // PyTorch values exist at module boundaries only: a plan spans a whole module call
    if (sa.info().kind == SideKind::kTorchCapture)
      lo.max_subgraph_nodes = std::max<size_t>(lo.max_subgraph_nodes, kModuleSpanNodes);
    OP_ASSIGN_OR_RETURN(report.localization, onnxprobe::Localize(sa, sb, inputs, job, lo, r));
    if (job.Stopped()) return InvalidArgument("comparison stopped by the caller while isolating");
    ApplyRoles(report.localization, &r);
    PassInheritedOnly(sa.model(), sb.model(), &report);
    if (sb.model() != nullptr)
      AddParityCulprits(report.parity, *sb.model(), r, &report.localization);
    if (sa.info().kind == SideKind::kTorchCapture) {  // each culprit's place in the user's code
      std::vector<std::string> tensors;
      for (const auto& c : report.localization.culprits) tensors.push_back(c.tensor);
      auto read = ReadCaptureFacts(st.a_path, tensors);
      if (read.ok())
        capture = std::move(*read);  // the comparison read it already: else nothing new
      for (size_t i = 0; capture && i < tensors.size(); ++i)
        report.localization.culprits[i].origin = capture->origins[i];
    }
    return Status::Ok();
  }

  // Why each introduced culprit differs, and the fix (diagnose/).
  Status DiagnoseCulprits() {
    const CompareRequest& req = st.req;
    const ComparisonResult& r = report.comparison;
    if (r.failures == 0 || r.aborted || req.diagnose.max_cases <= 0 || req.isolate_runtime ||
        !(report.localization.ran || report.quant.active()))
      return Status::Ok();
    DiagnoseInput in;
    in.a = {st.a_path, st.a_path == req.a.path ? req.a.ort_library : "", RunningSession(sa, req.a),
            sa.model()};
    in.b = {req.b.path, req.b.ort_library, RunningSession(sb, req.b), sb.model()};
    in.comparison = &r;
    in.localization = &report.localization;
    in.diff = st.diff && st.a_path == req.a.path ? &*st.diff : nullptr;  // A not replaced
    // sides running If nodes as their taken branches or loops unrolled: the diff of what they
    // run (the bodies' nodes and weights are main-graph ones there)
    std::optional<ModelDiff> inlined;
    auto rewrote = [](const Side& s) {
      return !s.info().inlined_ifs.empty() || !s.info().unrolled_loops.empty();
    };
    if (in.diff != nullptr && (rewrote(sa) || rewrote(sb))) {
      auto d = DiffModels(*sa.model(), *sb.model());
      if (d.ok()) {
        inlined = std::move(*d);
        in.diff = &*inlined;
      }
    }
    in.quant = report.quant.active() ? &report.quant : nullptr;
    in.capture = capture ? &*capture : nullptr;
    OP_ASSIGN_OR_RETURN(report.diagnosis, Diagnose(in, req.diagnose));
    return Status::Ok();
  }

  // What the report says last: the repro bundle not written, loop bodies' node names, where a
  // FAIL is born, the models' diff, each side's latency and memory, the optimizations explained.
  Status Finish() {
    const CompareRequest& req = st.req;
    const ComparisonResult& r = report.comparison;
    const LocalizeOptions& lopt = req.localize_options;
    if (!lopt.repro_dir.empty() && r.failures == 0 && !r.aborted)
      report.notes.push_back("no repro bundle written to " + lopt.repro_dir +
                             ": every tensor passes, so there is nothing to reproduce");
    // after diagnosis, which finds the culprits' nodes in the model B runs
    if (!sb.info().unrolled_loops.empty()) NameBodyNodes(&report.localization);
    report.origin_note = OriginNote(report);
    report.model_diff = st.model_diff;
    if (!r.aborted && run.measure_resources) {
      // the numbers are the result; a side that cannot be timed loses only its timing
      Status measured = MeasureSideResources(req, sa, sb, inputs, &report);
      if (!measured.ok())
        report.notes.push_back("latency and peak memory not measured: " + measured.message());
    }
    if (req.explain_optimizations) {  // one model, A unoptimized, B optimized (CheckRequest)
      const SideRequest& y = req.b;
      ExplainRequest er{y.path, y.ort_library, y.session, run.inputs, job.policy};
      OP_ASSIGN_OR_RETURN(report.optimizations, ExplainOptimizations(er));
      report.optimizations_explained = true;
    }
    return Status::Ok();
  }
};

Expected<CompareReport> ComparisonSession::Run(const SessionRun& run) {
  State& st = *state_;
  ++st.runs;
  if (!run.side_a.empty() && run.side_a != st.a_path) {
    if (!IsDumpPath(run.side_a))
      return InvalidArgument("a run replaces side A by a dump only; " + run.side_a + " is not one");
    SideRequest next{run.side_a, SessionOptions(), false, ""};
    auto a = OpenRequested(next, true, st.req.isolate_runtime, st.job.max_memory, false, &st.cache);
    if (!a.ok()) return a.status().WithContext("side A");
    st.a = std::move(*a);
    st.a_path = run.side_a;
  }
  // without a memory budget side A's tensors stay in memory for the run's localization
  RetainedSide retained(*st.a);
  Side& sa = st.job.max_memory == 0 ? static_cast<Side&>(retained) : *st.a;
  Stages stages{st, run, retained, sa, *st.b, st.job, {}, {}, {}, false, {}};
  OP_RETURN_IF_ERROR(stages.Prepare());
  OP_RETURN_IF_ERROR(stages.Place());
  OP_RETURN_IF_ERROR(stages.Pair());
  OP_RETURN_IF_ERROR(stages.CompareRows());
  OP_RETURN_IF_ERROR(stages.Localize());
  OP_RETURN_IF_ERROR(stages.DiagnoseCulprits());
  OP_RETURN_IF_ERROR(stages.Finish());
  return std::move(stages.report);
}

}  // namespace onnxprobe
