// Comparison costs, measured side by side in one process:
//   kernel      CompareTensors throughput against a plain memcpy of the same bytes
//   end to end  every intermediate tensor of a model, optimizations off vs all, against one
//               plain inference of the same model
// usage: compare_bench [MODEL] [--elements N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "onnxprobe/backend.h"
#include "onnxprobe/compare.h"
#include "onnxprobe/comparison.h"
#include "onnxprobe/graph.h"

using namespace onnxprobe;         // NOLINT
using namespace onnxprobe::bench;  // NOLINT

namespace {

void Kernel(uint64_t n, int runs) {
  auto a = *Tensor::Allocate(DType::kFloat32, {int64_t(n)});
  auto b = *Tensor::Allocate(DType::kFloat32, {int64_t(n)});
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  for (uint64_t i = 0; i < n; ++i) {
    a.data_as<float>()[i] = d(rng);
    b.data_as<float>()[i] = a.data_as<float>()[i] * (1 + 1e-4f * d(rng));
  }
  std::vector<char> dst(2 * n * 4);
  auto copy = [&] {
    std::memcpy(dst.data(), a.data(), n * 4);
    std::memcpy(dst.data() + n * 4, b.data(), n * 4);
  };
  auto compare = [&](unsigned threads) {
    CompareOptions o;
    o.threads = static_cast<int>(threads);
    o.channels = false;
    (void)CompareTensors(a, b, Tolerance(), -1, o);
  };
  copy();
  compare(1);
  // rounds alternate memcpy and the kernel, so the machine's load drifts on both alike; the
  // ratio is the median of the rounds' ratios
  std::vector<double> t_copy, t_one, ratio;
  for (int r = 0; r < runs; ++r) {
    t_copy.push_back(MedianMs(3, copy));
    t_one.push_back(MedianMs(3, [&] { compare(1); }));
    ratio.push_back(t_copy.back() / t_one.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double gb = 2.0 * n * 4 / 1e9, tc = median(t_copy), t1 = median(t_one);
  std::printf(
      "compare kernel, float32, %llu elements per side (%.0f MB read), %d rounds of "
      "memcpy/kernel:\n",
      static_cast<unsigned long long>(n), gb * 1e3, runs);
  std::printf("  memcpy of the same bytes, 1 thread   %7.2f ms  %6.2f GB/s\n", tc, gb / (tc / 1e3));
  std::printf(
      "  CompareTensors, 1 thread             %7.2f ms  %6.2f GB/s  %.2fx memcpy per thread   "
      "target >= 0.5x\n",
      t1, gb / (t1 / 1e3), median(ratio));
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned th = 2; th <= hw; th *= 2) {
    double t = MedianMs(runs, [&] { compare(th); });
    std::printf(
        "  CompareTensors, %u threads           %7.2f ms  %6.2f GB/s  %.2fx memcpy per thread, "
        "%.2fx speed-up\n",
        th, t, gb / (t / 1e3), (tc / t) / th, t1 / t);
  }
}

void EndToEnd(const std::string& path, int runs) {
  BenchModel bm = LoadBenchModel(path);
  Model* model = &bm.model;
  auto* backend = &bm.backend;
  auto* inputs = &bm.inputs;
  const auto& refs = bm.refs;
  SessionOptions plain_opts;
  plain_opts.intra_op_threads = 2;
  auto plain = (*backend)->CreateSession(*MarkOutputs(*model, {}), model->dir(), plain_opts);
  Check(plain.status());
  std::vector<std::string> outs;
  for (const auto& o : model->summary().outputs) outs.push_back(o.name);
  for (int i = 0; i < 3; ++i) Check((*plain)->Run(refs, outs).status());
  double t_plain = MedianMs(runs * 2, [&] { Check((*plain)->Run(refs, outs).status()); });

  SideSpec sa{path, plain_opts, "", true}, sb{path, plain_opts, "", true};
  sb.session.optimization_level = 99;
  auto a = OpenSide(sa);
  auto b = OpenSide(sb);
  Check(a.status());
  Check(b.status());
  Check((*a)->SetInputs(*inputs));
  Check((*b)->SetInputs(*inputs));
  CompareJob job;
  size_t rows = 0, failed = 0;
  double t_first = MedianMs(1, [&] {
    auto r = RunComparison(**a, **b, job);
    Check(r.status());
    rows = r->rows.size();
    failed = r->failures;
  });
  double t_steady = MedianMs(runs, [&] { Check(RunComparison(**a, **b, job).status()); });
  std::printf(
      "end to end, %s, optimizations off vs all, %zu tensors compared (%zu failed), median of "
      "%d:\n",
      path.c_str(), rows, failed, runs);
  std::printf("  plain inference                         %8.2f ms   1.00x\n", t_plain);
  std::printf("  comparison, first (sessions created)    %8.2f ms   %.2fx\n", t_first,
              t_first / t_plain);
  std::printf("  comparison, sessions reused             %8.2f ms   %.2fx   target <= 3x\n",
              t_steady, t_steady / t_plain);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  uint64_t n = 16 << 20;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--elements" && i + 1 < argc)
      n = std::stoull(argv[++i]);
    else if (a == "--runs" && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else
      model = a;
  }
  Kernel(n, runs);
  if (!model.empty()) EndToEnd(model, runs);
  return 0;
}
