// A hand-built CompareReport for reporter tests: 30 rows t0..t29 where
//   t5  is the first row that is not bit-exact (within tolerance, ratio 0.3),
//   t10 passes closest to its tolerance (ratio 0.9),
//   t12 is not compared, t14 is advisory (beyond tolerance, ratio 100, but never failing),
//   t20 introduces the error (ratio 7), t21 inherits it (ratio 3).
#pragma once

#include <string>

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe::synthetic {

inline CompareReport MakeReport() {
  CompareReport rep;
  ComparisonResult& r = rep.comparison;
  r.describe_a = "model.onnx on onnxruntime 1.23.2 CPUExecutionProvider, optimizations off";
  r.describe_b = "model.onnx on onnxruntime 1.23.2 CPUExecutionProvider, optimizations all";
  r.policy.global = Tolerance{1e-4, 1e-3, true};
  for (int i = 0; i < 30; ++i) {
    TensorResult t;
    t.name = t.name_b = "t" + std::to_string(i);
    t.node = "N" + std::to_string(i);
    t.op_type = "Conv";
    t.topo_index = i;
    t.metrics.shape_match = t.metrics.dtype_match = true;
    t.metrics.count = t.metrics.exact_matches = 16;
    r.rows.push_back(t);
  }
  auto differ = [&](int i, double ratio, double max_abs) {
    TensorResult& t = r.rows[i];
    t.tolerance_ratio = ratio;
    t.metrics.max_abs = max_abs;
    t.metrics.exact_matches = 10;
  };
  differ(5, 0.3, 2.5e-7);
  differ(10, 0.9, 1e-5);
  differ(20, 7, 3e-3);
  differ(21, 3, 1e-3);
  differ(14, 100, 0.5);
  r.rows[12].state = RowState::kNotCompared;
  r.rows[12].reason = "a sequence, not a tensor";
  r.rows[14].state = RowState::kAdvisory;
  r.rows[14].within_tolerance = false;
  for (int i : {20, 21}) {
    r.rows[i].pass = r.rows[i].within_tolerance = false;
    r.rows[i].reason = "3 of 16 elements beyond atol+rtol*|a|";
    r.rows[i].grade = Grade::kHighRisk;
  }
  r.rows[20].role = Role::kIntroduced;
  r.rows[21].role = Role::kInherited;
  r.failures = 2;
  r.first_failure = 20;
  r.first_difference = 5;
  r.frontier = {20};
  r.frontier_from_graph = true;
  rep.inputs = {{"input", DType::kFloat32, {1, 3, 8, 8}}};
  rep.input_seed = 42;
  return rep;
}

}  // namespace onnxprobe::synthetic
