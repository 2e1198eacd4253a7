// Internal: the part of a row's budget that comes from the graph and the reference magnitudes
// (never from an error measured on another row): Sin/Cos allowed their argument's absolute
// error, and nodes that only move values allowed what their inputs were allowed.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/graph/fp16_graph.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

struct RowBudget {
  double argument_scale = 0;  // > 0: a Sin/Cos whose argument's row had this max|a|
  double carried = 0;         // absolute error allowed the values a data-movement node copies
  // The unit roundoff of the coarsest float type B's value passed through on its way here by
  // Casts and data movement alone (a float16 tensor cast back to float32: 2^-11); 0 when none.
  double roundoff_b = 0;
  // One quantization step of B's value, where B computes it quantized: 1 for the integer output
  // of a quantizing op (QuantizeLinear, QLinearConv, ...), the scale (its largest, per channel)
  // for a DequantizeLinear with a constant scale; 0 otherwise (docs/metrics.md, "One
  // quantization step").
  double quant_step = 0;
};

class RowBudgets {
 public:
  explicit RowBudgets(const Model* graph_b) : graph_(graph_b) {}
  // The budget of the row for side B's tensor `name_b` (rows come in topological order).
  RowBudget For(const std::string& name_b) const;
  // Whether For(name_b) reads what earlier rows recorded (a Sin/Cos, a data-movement node).
  bool ReadsEarlierRows(const std::string& name_b) const;
  // RowBudget::roundoff_b of B's tensor `name_b` (infers graph B's types on first use: asked
  // for with an exact reference only): the coarsest unit roundoff its value carries. Casts and
  // data movement pass on what they read; a computing node carries what all of its computed
  // floating inputs carry (a float32 node reading only float16-rounded values computes from
  // float16's rounding; one that also reads a float32-computed value, e.g. a float16 mask added
  // to float32 scores, does not: the float16 value's share of the result is not known here).
  // Weights (values the model fixes) are not counted: a float16 weight is rounding side B's
  // file holds, not arithmetic.
  double CarriedRoundoff(const std::string& name_b) const;
  // Records a compared row's magnitude and the absolute allowance it was judged with.
  void Record(const TensorResult& row);

 private:
  double Allowance(const std::string& name, int depth) const;
  double QuantStep(const NodeInfo& n, const std::string& name_b) const;
  // The node of graph B producing `name_b`; null without a graph or for inputs and initializers.
  const NodeInfo* Producer(const std::string& name_b) const;
  const Model* graph_;
  std::unordered_map<std::string, double> scale_, allowed_;
  mutable std::unordered_map<std::string, double> dequantize_scale_;  // by scale tensor name
  mutable std::optional<TensorTypes> types_;  // of graph B, inferred on first need
  // CarriedRoundoff of every tensor of graph B, computed in one pass on first need
  mutable std::optional<std::unordered_map<std::string, double>> carried_;
};

}  // namespace onnxprobe
