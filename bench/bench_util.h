// Shared by the benchmark drivers: median timing and fail-fast status checks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "onnxprobe/status.h"

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

}  // namespace onnxprobe::bench
