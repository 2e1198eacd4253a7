#include "model/node_match.h"

#include <algorithm>
#include <unordered_set>

namespace onnxprobe {

GraphMatcher::GraphMatcher(const MatchGraph& a, const MatchGraph& b)
    : a_(a),
      b_(b),
      a_to_b_(a.nodes.size(), -1),
      b_to_a_(b.nodes.size(), -1),
      how_(b.nodes.size(), MatchHow::kNone) {
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    for (size_t s = 0; s < a.nodes[i].outputs.size(); ++s)
      if (!a.nodes[i].outputs[s].empty()) producer_a_[a.nodes[i].outputs[s]] = {int(i), int(s)};
  }
  for (size_t i = 0; i < b.nodes.size(); ++i) {
    for (size_t s = 0; s < b.nodes[i].outputs.size(); ++s)
      if (!b.nodes[i].outputs[s].empty()) producer_b_[b.nodes[i].outputs[s]] = {int(i), int(s)};
  }
  MapInitializers();
  MapInputs();
  MatchByName();
  // exact structure first; a loose pairing can make more exact keys known, so alternate
  while (Sweep(false) || Sweep(true)) {
  }
}

void GraphMatcher::MapInitializers() {
  std::unordered_set<std::string> names_b;
  for (size_t i = 0; i < a_.initializers.size(); ++i) init_a_[a_.initializers[i].first] = int(i);
  for (const auto& [name, hash] : b_.initializers) names_b.insert(name);
  std::unordered_set<std::string> taken;
  for (const auto& [name, hash] : b_.initializers) {
    if (init_a_.count(name)) {
      init_b_to_a_[name] = name;
      taken.insert(name);
    }
  }
  // renamed: identical bytes, paired in file order among the names left on both sides
  std::multimap<std::string, std::string> free_a;  // hash -> name
  for (const auto& [name, hash] : a_.initializers) {
    if (!taken.count(name) && !names_b.count(name)) free_a.emplace(hash, name);
  }
  for (const auto& [name, hash] : b_.initializers) {
    if (init_b_to_a_.count(name)) continue;
    auto it = free_a.find(hash);
    if (it == free_a.end()) continue;
    init_b_to_a_[name] = it->second;
    free_a.erase(it);
  }
}

void GraphMatcher::MapInputs() {
  std::unordered_set<std::string> names_b(b_.graph_inputs.begin(), b_.graph_inputs.end());
  for (size_t i = 0; i < a_.graph_inputs.size(); ++i) input_a_[a_.graph_inputs[i]] = int(i);
  std::vector<std::string> free_a, free_b;
  for (const auto& n : a_.graph_inputs) {
    if (!names_b.count(n)) free_a.push_back(n);
  }
  for (const auto& n : b_.graph_inputs) {
    if (input_a_.count(n))
      input_b_to_a_[n] = n;
    else
      free_b.push_back(n);
  }
  for (size_t i = 0; i < std::min(free_a.size(), free_b.size()); ++i)
    input_b_to_a_[free_b[i]] = free_a[i];
}

void GraphMatcher::MatchByName() {
  auto unique_names = [](const MatchGraph& g) {
    std::unordered_map<std::string, int> idx;
    std::unordered_set<std::string> dup;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const std::string& n = g.nodes[i].name;
      if (n.empty()) continue;
      if (!idx.emplace(n, int(i)).second) dup.insert(n);
    }
    for (const auto& d : dup) idx.erase(d);
    return idx;
  };
  auto names_a = unique_names(a_);
  auto names_b = unique_names(b_);
  for (size_t i = 0; i < b_.nodes.size(); ++i) {
    auto itb = names_b.find(b_.nodes[i].name);
    if (itb == names_b.end()) continue;
    auto ita = names_a.find(b_.nodes[i].name);
    if (ita != names_a.end()) Pair(ita->second, int(i), MatchHow::kName);
  }
}

void GraphMatcher::Pair(int a, int b, MatchHow how) {
  a_to_b_[a] = b;
  b_to_a_[b] = a;
  how_[b] = how;
}

std::string GraphMatcher::InitializerAForB(const std::string& b) const {
  auto it = init_b_to_a_.find(b);
  return it == init_b_to_a_.end() ? "" : it->second;
}

std::string GraphMatcher::InputAForB(const std::string& b) const {
  auto it = input_b_to_a_.find(b);
  return it == input_b_to_a_.end() ? "" : it->second;
}

std::string GraphMatcher::SourceA(const std::string& t) const {
  if (t.empty()) return "-";
  auto p = producer_a_.find(t);
  if (p != producer_a_.end())
    return "N:" + std::to_string(p->second.first) + ":" + std::to_string(p->second.second);
  if (init_a_.count(t)) return "I:" + t;
  if (input_a_.count(t)) return "G:" + t;
  return "?" + t;
}

std::string GraphMatcher::SourceB(const std::string& t) const {
  if (t.empty()) return "-";
  auto p = producer_b_.find(t);
  if (p != producer_b_.end()) {
    int a = b_to_a_[p->second.first];
    if (a < 0) return "?" + t;
    return "N:" + std::to_string(a) + ":" + std::to_string(p->second.second);
  }
  std::string init = InitializerAForB(t);
  if (!init.empty()) return "I:" + init;
  std::string in = InputAForB(t);
  if (!in.empty()) return "G:" + in;
  return "?" + t;
}

std::string GraphMatcher::KeyA(int a) const {
  const auto& n = a_.nodes[a];
  std::string k = n.op + "\x1f" + n.attrs;
  for (const auto& i : n.inputs) k += "\x1f" + SourceA(i);
  return k;
}

std::string GraphMatcher::KeyB(int b) const {
  const auto& n = b_.nodes[b];
  std::string k = n.op + "\x1f" + n.attrs;
  for (const auto& i : n.inputs) {
    std::string s = SourceB(i);
    if (s[0] == '?') return "";
    k += "\x1f" + s;
  }
  return k;
}

bool GraphMatcher::Sweep(bool loose) {
  // A's unmatched nodes by exact key (back() is the first in topological order) and by op;
  // op+attrs -> unmatched count on each side (for the unique-pair rule)
  std::unordered_map<std::string, std::vector<int>> exact_a, by_op_a;
  std::map<std::string, int> count_a, count_b;
  for (size_t i = a_.nodes.size(); i-- > 0;) {
    if (a_to_b_[i] >= 0) continue;
    exact_a[KeyA(int(i))].push_back(int(i));
    ++count_a[a_.nodes[i].op + "\x1f" + a_.nodes[i].attrs];
  }
  for (size_t i = 0; i < a_.nodes.size(); ++i) {
    if (a_to_b_[i] < 0) by_op_a[a_.nodes[i].op].push_back(int(i));
  }
  for (size_t i = 0; i < b_.nodes.size(); ++i) {
    if (b_to_a_[i] < 0) ++count_b[b_.nodes[i].op + "\x1f" + b_.nodes[i].attrs];
  }
  bool progress = false;
  for (size_t i = 0; i < b_.nodes.size(); ++i) {
    if (b_to_a_[i] >= 0) continue;
    const auto& nb = b_.nodes[i];
    const std::string op_attrs = nb.op + "\x1f" + nb.attrs;
    int pick = -1;
    MatchHow how = MatchHow::kStructure;
    const std::string key = KeyB(int(i));
    auto it = key.empty() ? exact_a.end() : exact_a.find(key);
    if (it != exact_a.end()) {
      while (!it->second.empty() && a_to_b_[it->second.back()] >= 0) it->second.pop_back();
      if (!it->second.empty()) pick = it->second.back();
    }
    if (pick < 0 && loose) {
      pick =
          LooseCandidate(int(i), by_op_a[nb.op], count_a[op_attrs] == 1 && count_b[op_attrs] == 1);
      how = MatchHow::kLoose;
    }
    if (pick < 0) continue;
    --count_a[a_.nodes[pick].op + "\x1f" + a_.nodes[pick].attrs];
    --count_b[op_attrs];
    Pair(pick, int(i), how);
    progress = true;
  }
  return progress;
}

int GraphMatcher::LooseCandidate(int b, const std::vector<int>& same_op, bool unique) const {
  const auto& nb = b_.nodes[b];
  std::vector<std::string> src;
  for (const auto& t : nb.inputs) src.push_back(SourceB(t));
  int best = -1, best_score = -1;
  for (int j : same_op) {
    const auto& na = a_.nodes[j];
    if (a_to_b_[j] >= 0 || na.inputs.size() != nb.inputs.size()) continue;
    int agree = 0;
    bool conflict = false;
    for (size_t s = 0; s < src.size() && !conflict; ++s) {
      if (src[s][0] == '?') continue;
      std::string sa = SourceA(na.inputs[s]);
      if (sa != src[s]) conflict = true;
      if (sa == src[s] && sa != "-") ++agree;
    }
    if (conflict) continue;
    const bool same_attrs = na.attrs == nb.attrs;
    if (agree == 0 && !(unique && same_attrs)) continue;
    int score = agree * 2 + (same_attrs ? 1 : 0);
    if (score > best_score) {
      best = j;
      best_score = score;
    }
  }
  return best;
}

}  // namespace onnxprobe
