// Internal: pairs the nodes, initializers and graph inputs of two graphs, by name first, then
// by structure. Protobuf-free so unit tests build graphs directly.
//
// Structure: a node's key is its op, its attributes and where each input comes from, written
// in A's terms: "I:<A name>" for an initializer (matched by name, else by identical bytes),
// "G:<A name>" for a graph input (matched by name, else by position), "N:<A node>:<slot>" for
// the output of an already matched node. B is walked in topological order, so producers are
// matched before their consumers and a renamed chain is matched link by link. Nodes left over
// are paired loosely: same op, and every input whose source is known agrees (at least one), or
// the only unmatched node of that op and attributes on both sides.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace onnxprobe {

struct MatchGraph {
  struct Node {
    std::string name;
    std::string op;     // "Conv", or "domain.Op" outside the ONNX domain
    std::string attrs;  // canonical rendering: equal exactly when the attributes are equal
    std::vector<std::string> inputs, outputs;
  };
  std::vector<Node> nodes;                // topological order
  std::vector<std::string> graph_inputs;  // graph inputs that are not initializers
  std::vector<std::pair<std::string, std::string>> initializers;  // name, content hash
};

enum class MatchHow { kNone, kName, kStructure, kLoose };

class GraphMatcher {
 public:
  GraphMatcher(const MatchGraph& a, const MatchGraph& b);

  // Index of the matched node on the other side, or -1.
  int BForA(int a) const { return a_to_b_[a]; }
  int AForB(int b) const { return b_to_a_[b]; }
  MatchHow HowB(int b) const { return how_[b]; }
  // A's initializer / graph input matched to B's of that name; "" when none.
  std::string InitializerAForB(const std::string& b) const;
  std::string InputAForB(const std::string& b) const;

  // Where tensor `t` of A (of B, in A's terms) comes from; for B, "?" + name when its source
  // has no counterpart in A.
  std::string SourceA(const std::string& t) const;
  std::string SourceB(const std::string& t) const;

 private:
  void MapInitializers();
  void MapInputs();
  void MatchByName();
  // One pass over B's unmatched nodes in topological order: exact keys, and with `loose` the
  // loose pairing for nodes without one. True when something was paired.
  bool Sweep(bool loose);
  // The best loose partner among A's unmatched nodes of the same op, or -1. `unique`: the
  // node's op and attributes occur once among the unmatched nodes of each side.
  int LooseCandidate(int b, const std::vector<int>& same_op, bool unique) const;
  void Pair(int a, int b, MatchHow how);
  std::string KeyA(int a) const;
  // "" when an input's source is not known in A's terms yet.
  std::string KeyB(int b) const;

  const MatchGraph& a_;
  const MatchGraph& b_;
  std::vector<int> a_to_b_, b_to_a_;
  std::vector<MatchHow> how_;
  std::unordered_map<std::string, std::string> init_b_to_a_, input_b_to_a_;
  std::unordered_map<std::string, int> init_a_, input_a_;  // names on A's side
  std::unordered_map<std::string, std::pair<int, int>> producer_a_, producer_b_;
};

}  // namespace onnxprobe
