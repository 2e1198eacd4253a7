// A value paired inside a module call (a PyTorch op's result matched to an ONNX tensor among the
// call's nodes) is judged only when the call's outputs confirm the pairing (CompareJob::
// confirm_by). An output can pass with a real error inside the call (a changed attention scale
// that a LayerNorm after it hides), so a failing unconfirmed value T gets a second test, by
// substitution: the nodes between T and a confirming row O run alone on side B's runtime twice,
// with side A's value of T and with side B's, everything else fed from side A, every tensor they
// make kept. The pairing holds when A's T leads to A's values at O and at every compared row on
// the way (within their tolerances: B's graph computes from A's value what PyTorch computed), and
// T's difference is real when B's T puts one of those rows more than twice as far from A as A's T
// does (the larger part of that row's error comes from T). A wrong pairing fails the first test
// (A's value of another quantity does not lead to A's O); a difference nothing after it feels
// fails the second. A confirmed value is judged and isolated like any row.
#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>

#include "localize/isolation.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::isolation {
namespace {

constexpr size_t kMaxTried = 16;      // failing unconfirmed values tested per comparison
constexpr size_t kSpanNodes = 512;    // nodes between a value and the row confirming it
constexpr size_t kMaxDownstream = 4;  // rows after a value paired by values alone, to test with

// Nodes on a path from tensor `from` to tensor `to` (B names), `to`'s producer included.
std::set<int> Between(const GraphIndex& idx, const std::string& from, const std::string& to) {
  std::set<int> up;
  const TensorEntry* t = idx.Find(to);
  if (t == nullptr || t->producer < 0) return {};
  std::deque<int> q{t->producer};
  up.insert(t->producer);
  while (!q.empty()) {
    int k = q.front();
    q.pop_front();
    for (const auto& x : idx.nodes()[k].inputs) {
      const TensorEntry* e = x.empty() ? nullptr : idx.Find(x);
      if (e != nullptr && e->producer >= 0 && x != from && up.insert(e->producer).second)
        q.push_back(e->producer);
    }
  }
  std::set<int> out;
  std::deque<std::string> fwd{from};
  std::set<std::string> seen{from};
  while (!fwd.empty()) {
    const TensorEntry* e = idx.Find(fwd.front());
    fwd.pop_front();
    if (e == nullptr) continue;
    for (int k : e->consumers) {
      if (!up.count(k) || !out.insert(k).second) continue;
      for (const auto& o : idx.nodes()[k].outputs) {
        if (!o.empty() && o != to && seen.insert(o).second) fwd.push_back(o);
      }
    }
  }
  return out;
}

double Ratio(const Ctx& cx, const Tensor& expected, const Tensor& observed, const Tolerance& tol) {
  TensorResult judged;
  judged.tolerance = tol;
  JudgeRow(expected, observed, cx.job.policy, cx.job.kernel, &judged);
  return judged.tolerance_ratio;
}

// The compared rows first reached going forward from tensor `from` (B names), nearest first.
std::vector<int> Downstream(const GraphIndex& idx, const std::string& from,
                            const std::unordered_map<std::string, int>& compared_b) {
  std::vector<int> out;
  std::deque<std::string> q{from};
  std::set<std::string> seen{from};
  while (!q.empty() && out.size() < kMaxDownstream) {
    const TensorEntry* e = idx.Find(q.front());
    q.pop_front();
    if (e == nullptr) continue;
    for (int k : e->consumers) {
      for (const auto& o : idx.nodes()[k].outputs) {
        if (o.empty() || !seen.insert(o).second) continue;
        auto c = compared_b.find(o);
        if (c != compared_b.end())
          out.push_back(c->second);  // a row: the values after it are its own
        else
          q.push_back(o);
      }
    }
  }
  return out;
}

}  // namespace

Confirmation ConfirmInside(Ctx& cx) {
  const ComparisonResult& r = cx.r;
  Confirmation result;
  if (cx.job.confirm_by.empty() && cx.job.advisory.empty()) return result;
  std::unordered_map<std::string, int> row_of;
  for (size_t i = 0; i < r.rows.size(); ++i) row_of.emplace(r.rows[i].name, static_cast<int>(i));
  const GraphIndex& idx = cx.g.index();
  std::unordered_map<std::string, int> compared_b;  // B name -> a compared row
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].state == RowState::kCompared)
      compared_b.emplace(r.rows[i].name_b, static_cast<int>(i));
  }
  // failing advisory rows: a value inside a call its outputs did not confirm (tested against
  // those outputs), or a pair found by values alone (against the compared rows after it)
  std::vector<int> todo;
  std::vector<std::vector<int>> confirming;
  std::vector<std::string> b_names;
  for (size_t i = 0; i < r.rows.size() && todo.size() < kMaxTried; ++i) {
    const TensorResult& t = r.rows[i];
    if (t.state != RowState::kAdvisory || t.within_tolerance) continue;
    std::vector<int> by;
    if (auto c = cx.job.confirm_by.find(t.name); c != cx.job.confirm_by.end()) {
      for (const auto& o : c->second) {
        if (auto oi = row_of.find(o); oi != row_of.end()) by.push_back(oi->second);
      }
    } else if (cx.job.advisory.count(t.name)) {
      by = Downstream(idx, t.name_b, compared_b);
    }
    if (by.empty()) continue;
    todo.push_back(static_cast<int>(i));
    confirming.push_back(std::move(by));
    b_names.push_back(t.name_b);
  }
  if (todo.empty()) return result;
  auto from_b = cx.b.Fetch(b_names);
  if (!from_b.ok()) return result;
  for (size_t k = 0; k < todo.size(); ++k) {
    const TensorResult& t = r.rows[todo[k]];
    const Tensor& b_value = (*from_b)[k].tensor;
    if (b_value.empty()) continue;
    // T is fed in the test (side A's value, then side B's); afterwards its pairing is what it
    // was (a pair found by values alone: a boundary; a value inside a call: none), or T's when
    // confirmed
    auto had = cx.b_to_a.find(t.name_b);
    std::optional<std::string> before;
    if (had != cx.b_to_a.end()) before = had->second;
    size_t confirmed_before = result.confirmed.size();
    for (int oi : confirming[k]) {
      const TensorResult& o = r.rows[oi];
      if (o.state != RowState::kCompared || o.name_b == t.name_b) continue;
      std::set<int> between = Between(idx, t.name_b, o.name_b);
      if (between.empty()) continue;
      cx.b_to_a[t.name_b] = t.name;  // T is fed: side A's value, then side B's
      Plan p = MakePlan(cx, o.name_b, kSpanNodes, between);
      bool fed = std::find(p.boundary.begin(), p.boundary.end(), t.name_b) != p.boundary.end();
      if (!p.error.empty() || !fed || !FetchFor(cx, {p}).ok()) continue;
      Overrides every;
      every.every_output = true;
      Run with_a = Execute(cx, p, {}, {}, &every);
      if (!with_a.error.empty()) continue;
      Tensor a_value = cx.from_a[t.name];
      cx.from_a[t.name] = b_value;
      Run with_b = Execute(cx, p, {}, {}, &every);
      cx.from_a[t.name] = std::move(a_value);
      if (!with_b.error.empty() || with_b.outputs.size() != with_a.outputs.size()) continue;
      // the compared rows the span computes (O itself first), with side A's values
      std::vector<size_t> at;
      std::vector<int> rows_at;
      std::vector<std::string> a_names;
      for (size_t j = 1; j < with_a.outputs.size(); ++j) {
        auto c = compared_b.find(with_a.outputs[j].name);
        if (c == compared_b.end()) continue;
        at.push_back(j);
        rows_at.push_back(c->second);
        a_names.push_back(r.rows[c->second].name);
      }
      auto a_vals = cx.a.Fetch(a_names);
      if (!a_vals.ok()) continue;
      bool consistent = true, felt = false;
      std::string where, worst;
      double worst_ra = 0;
      auto judge = [&](const Tensor& expected, const Tensor& xa, const Tensor& xb,
                       const TensorResult& row) {
        if (expected.empty() || xa.empty() || xb.empty()) return;
        double ra = Ratio(cx, expected, xa, row.tolerance);
        double rb = Ratio(cx, expected, xb, row.tolerance);
        consistent = consistent && ra <= 1;
        if (ra > worst_ra) {
          worst_ra = ra;
          worst = row.name;
        }
        if (rb > 2 * ra && !felt) {
          felt = true;
          where = row.name + " is " + FormatNumber(ra) +
                  " of its tolerance from side A with side " + "A's value here, " +
                  FormatNumber(rb) + " with side B's";
        }
      };
      judge(*with_a.expected, with_a.observed, with_b.observed, o);
      for (size_t j = 0; j < at.size() && j < a_vals->size(); ++j)
        judge((*a_vals)[j].tensor, with_a.outputs[at[j]].tensor, with_b.outputs[at[j]].tensor,
              r.rows[rows_at[j]]);
      if (consistent && felt) {
        result.confirmed.emplace_back(todo[k], "confirmed by substitution (" + where + ")");
      } else if (!consistent) {
        result.explained.emplace_back(
            todo[k], "not confirmed by substitution: side A's value here puts " + worst + " " +
                         FormatNumber(worst_ra) +
                         " of its tolerance from side A (a pairing side A's values after it "
                         "do not bear out)");
      } else {
        result.explained.emplace_back(
            todo[k],
            "not confirmed by substitution: its difference is not felt after it (side B's "
            "value here moves no compared row after it more than twice as far from side A)");
      }
      break;  // the first confirming row that runs decides
    }
    if (result.confirmed.size() > confirmed_before)
      cx.b_to_a[t.name_b] = t.name;
    else if (before)
      cx.b_to_a[t.name_b] = *before;
    else
      cx.b_to_a.erase(t.name_b);
    cx.from_a.clear();  // one row's tensors at a time
  }
  return result;
}

}  // namespace onnxprobe::isolation
