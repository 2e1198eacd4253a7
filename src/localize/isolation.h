// Isolation's shared pieces (src/localize/isolate.cc, plan.cc, drift.cc): a plan is a node (plus
// the nodes only side B has before it) run alone on side B's runtime with side A's tensors.
#pragma once

#include <deque>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "localize/growth.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/localize/localize.h"

namespace onnxprobe::isolation {

struct Plan {
  std::string name_b;
  std::vector<int> nodes;                 // topo indices in the graph of B
  std::vector<std::string> boundary;      // tensors fed from side A (B names)
  std::vector<std::string> graph_inputs;  // tensors fed from the shared inputs
  size_t weight_nodes = 0;                // of `nodes`: computing from B's initializers alone
  std::string error;
};

struct Ctx {
  Side& a;
  Side& b;
  const Model& g;
  const CompareJob& job;
  const ComparisonResult& r;
  LocalizeResult* out;
  std::unordered_map<std::string, std::string> b_to_a;
  std::set<std::string> a_names;
  // B's tensors its optimized graph fuses away: fed from A they split the fused region, which
  // must run whole to reproduce what B computes (MakePlan's through_fused; B names)
  std::set<std::string> hidden_b;
  std::unordered_map<std::string, const Tensor*> shared;
  std::unordered_map<std::string, Tensor> from_a;  // side A tensors fetched so far (A names)
  // side B's dtype of each compared tensor (B names): a float16 side B is fed A's float32 values
  // rounded to float16, as its graph declares them
  std::unordered_map<std::string, DType> b_dtypes;
  std::function<void(size_t)> on_run;  // LocalizeOptions::on_run
  // side A is a PyTorch capture: every isolated node differs by framework rounding, so a
  // sub-tolerance source must stand out from its neighbours' noise (StandOutLevel)
  bool framework_noise = false;
  size_t fits = 0;  // culprits whose constants were fitted (FitConstants), against kMaxFits

  std::string AName(const std::string& b_name) const {
    auto m = b_to_a.find(b_name);
    return m == b_to_a.end() ? b_name : m->second;
  }
};

struct Run {
  std::string bytes;
  std::vector<std::pair<std::string, const Tensor*>> feed;
  std::deque<Tensor> owned;  // A's tensors converted to side B's float dtype
  const Tensor* expected = nullptr;
  Tensor observed;
  std::vector<RunOutput> outputs;  // Overrides::every_output
  std::string error;
};

// A pair of Cast nodes in a plan, the first read only by the second (float32 -> float16 ->
// float32 and the like): `from` is what the first reads, `to` what the second makes.
struct RoundTrip {
  int first = -1, second = -1;
  std::string from, to;
};

// The node producing `name_b` plus the nodes it needs that side A cannot provide (nodes only in
// B), and any node in `expand`; through_fused: B's fused-away tensors are not boundaries.
Plan MakePlan(const Ctx& cx, const std::string& name_b, size_t max_nodes,
              const std::set<int>& expand = {}, bool through_fused = false);
// Fetches from side A, in one run, every tensor the plans need that is not fetched yet.
Status FetchFor(Ctx& cx, const std::vector<Plan>& plans);
// The side-A tensors each plan reads, for GroupByBudget (fetch_groups.h).
std::vector<std::set<std::string>> NeedsOf(const Ctx& cx, const std::vector<Plan>& plans);
// float32 <-> float16/bfloat16 (rounded to nearest even); other pairs fail.
Expected<Tensor> CastFloat(const Tensor& t, DType to);
// Other values for a plan's constants: a weight (an initializer, or a Constant node of the plan,
// which is then left out) fed as this tensor, float attributes set.
struct Overrides {
  std::vector<std::pair<std::string, Tensor>> constants;
  std::vector<FloatAttributeValue> attributes;
  bool every_output = false;  // Run::outputs: every output of the plan's nodes, the plan's first
};
// Builds the plan's model (without `drop`, with `aliases` as Identity nodes) and runs it on side
// B's runtime with side A's tensors.
Run Execute(Ctx& cx, const Plan& p, const std::set<int>& drop = {},
            const std::vector<std::pair<std::string, std::string>>& aliases = {},
            const Overrides* overrides = nullptr);
// A culprit whose plan holds several computing nodes: the one node whose scalar constant or float
// attribute, set to another value, makes the plan reproduce side A's value names it
// (src/localize/constant_fit.cc).
void FitConstants(Ctx& cx, const Plan& p, const Tolerance& tol, Culprit* c);
// Largest error over the reference's magnitude.
double ScaleNormalized(const TensorMetrics& m);
// The scale-normalized error a source must reach to stand out from framework rounding.
double StandOutLevel(const Ctx& cx, const std::vector<Culprit>& culprits);
std::string NodeName(const NodeInfo& n, int k);
// A culprit record for a plan, with the nodes only in B named.
Culprit Describe(const Ctx& cx, const Plan& p, int row);
// Names the nodes only in B as culprit when the candidate's node alone matches.
void Bypass(Ctx& cx, const Plan& p, const Tolerance& tol, Culprit* c);
std::vector<RoundTrip> RoundTrips(const Ctx& cx, const Plan& p);
// Names a Cast round trip whose removal removes the error; whether one was named.
bool BypassRoundTrips(Ctx& cx, const Plan& p, const Tolerance& tol, bool failed, Culprit* c);
// A culprit whose tensor a node computes from the model's initializers alone (a Transpose of a
// changed weight) is named by the first node that computes with it on data (the MatMul reading
// that Transpose), which keeps the static node in its list. A Constant (no inputs) holds the
// value itself and keeps its name.
void NameStaticReader(const Ctx& cx, Culprit* c);
// A plan through a region side B's optimizer fused is named by the node the fusion starts from.
void NameFusion(const Ctx& cx, const Plan& p, Culprit* c);
// Whether the plan is fed a tensor side B's optimized graph fuses away (it then runs unfused).
bool CrossesFusion(const Ctx& cx, const Plan& p);
// On a PyTorch side, the node making what the plan's output node only passes on.
void NarrowToSource(const Ctx& cx, const Plan& p, Culprit* c);
// Failing advisory rows (values paired inside a module call that its outputs did not confirm,
// pairs found by values alone) tested by substitution (src/localize/confirm_inside.cc): the rows
// confirmed and the rows not, with the reason. Leaves the confirmed ones' pairing in cx.b_to_a
// (a boundary and a candidate like any row).
struct Confirmation {
  std::vector<std::pair<int, std::string>> confirmed, explained;  // row, why
};
Confirmation ConfirmInside(Ctx& cx);
// Where differences of any size are born (drift origins), into cx.out.
// Returns the origins that are Cast round trips whose removal removes the difference (by node).
std::set<std::string> Drift(Ctx& cx, const LocalizeOptions& o,
                            const std::vector<RowGrowth>& growth);
// `rows` by growth, the first `max` (how many were dropped in `dropped`).
std::vector<int> ByGrowth(std::vector<int> rows, const std::vector<RowGrowth>& growth, size_t max,
                          size_t* dropped);

}  // namespace onnxprobe::isolation
