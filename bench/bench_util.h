// Shared by the benchmark drivers: median timing and fail-fast status checks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe::bench {

using Clock = std::chrono::steady_clock;

// Median wall time of `runs` calls of `f`, in milliseconds.
template <typename F>
double MedianMs(int runs, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A benchmark cannot go on after a failed step: print it and exit 2.
inline void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench: %s\n", s.message().c_str());
    std::exit(2);
  }
}

// A model loaded with the default ONNX Runtime and seeded random inputs (batch 1).
struct BenchModel {
  Model model;
  std::shared_ptr<Backend> backend;
  std::vector<NamedTensor> inputs;
  std::vector<std::pair<std::string, const Tensor*>> refs;  // into `inputs`, for Run()
};

inline BenchModel LoadBenchModel(const std::string& path) {
  auto model = Model::Load(path);
  Check(model.status());
  auto backend = LoadOrtBackend();
  Check(backend.status());
  InputOptions io;
  for (const auto& in : model->summary().inputs) {  // a symbolic batch dimension, where named
    for (const Dim& d : in.dims)
      if (d.param == "batch") io.dim_params["batch"] = 1;
  }
  auto inputs = PrepareInputs(*model, io);
  Check(inputs.status());
  BenchModel m{std::move(*model), std::move(*backend), std::move(*inputs), {}};
  for (const auto& nt : m.inputs) m.refs.emplace_back(nt.name, &nt.tensor);
  return m;
}

}  // namespace onnxprobe::bench
