// Comparison costs, measured side by side in one process:
//   kernel      CompareTensors throughput against a plain memcpy of the same bytes
//   end to end  every tensor both sides expose, optimizations off vs all, off vs off and all vs
//               all, against one plain inference of the same model at side A's level (and the
//               two sides' plain inferences together)
// usage: compare_bench [MODEL] [--elements N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/compare/compare.h"
#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/side/side.h"

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

// A side that times its fetches (the runs), so the comparison's own cost shows apart from them.
class TimedSide : public Side {
 public:
  explicit TimedSide(std::unique_ptr<Side> s) : s_(std::move(s)) {}
  const SideInfo& info() const override { return s_->info(); }
  const std::vector<SideTensor>& tensors() const override { return s_->tensors(); }
  const Model* model() const override { return s_->model(); }
  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    return s_->RecordedInputs();
  }
  Status SetInputs(const std::vector<NamedTensor>& in) override { return s_->SetInputs(in); }
  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override {
    auto t0 = Clock::now();
    auto r = s_->Fetch(names);
    ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return r;
  }
  size_t runs() const override { return s_->runs(); }
  Expected<std::vector<RunOutput>> RunOther(
      const std::string& bytes, const std::string& dir,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override {
    return s_->RunOther(bytes, dir, inputs, outputs);
  }
  const std::vector<std::string>& hidden() const override { return s_->hidden(); }
  SessionOptions session_options() const override { return s_->session_options(); }
  double ms = 0;

 private:
  std::unique_ptr<Side> s_;
};

struct Case {
  const char* name;
  OptLevel level_a, level_b;
  double target;  // times one plain inference at level_a
};

void EndToEnd(const std::string& path, int runs) {
  BenchModel bm = LoadBenchModel(path);
  const Model& model = bm.model;
  std::vector<std::string> outs;
  for (const auto& o : model.summary().outputs) outs.push_back(o.name);
  SessionOptions opts;
  opts.intra_op_threads = 2;
  std::map<OptLevel, std::unique_ptr<BackendSession>> plain;  // by optimization level
  auto plain_run = [&](OptLevel level) {
    if (!plain.count(level)) {
      SessionOptions o = opts;
      o.optimization_level = level;
      // as the sides' sessions do: worker threads stop spinning when a run returns, so the
      // baseline's threads do not take the cores from the comparison timed right after it
      o.config_entries.emplace("session.force_spinning_stop", "1");
      auto s = bm.backend->CreateSession(*MarkOutputs(model, {}), model.dir(), o);
      Check(s.status());
      plain[level] = std::move(*s);
      for (int i = 0; i < 3; ++i) Check(plain[level]->Run(bm.refs, outs).status());
    }
    return MedianMs(3, [&] { Check(plain[level]->Run(bm.refs, outs).status()); });
  };
  std::printf(
      "end to end, %s, every tensor both sides expose, sessions reused (I/O binding), %d "
      "intra-op threads, median of %d rounds; each round times one plain inference per side's "
      "level, then the comparison:\n",
      path.c_str(), opts.intra_op_threads, runs);
  const Case cases[] = {{"off vs all", OptLevel::kDisabled, OptLevel::kAll, 3.0},
                        {"off vs off", OptLevel::kDisabled, OptLevel::kDisabled, 1.5},
                        {"all vs all", OptLevel::kAll, OptLevel::kAll, 1.5}};
  for (const Case& c : cases) {
    SideSpec sa{path, opts, "", true}, sb{path, opts, "", true};
    sa.session.optimization_level = c.level_a;
    sb.session.optimization_level = c.level_b;
    auto oa = OpenLiveSide(model, sa);
    auto ob = OpenLiveSide(model, sb);
    Check(oa.status());
    Check(ob.status());
    TimedSide a(std::move(*oa)), b(std::move(*ob));
    Check(a.SetInputs(bm.inputs));
    Check(b.SetInputs(bm.inputs));
    CompareJob job;
    size_t rows = 0, failed = 0, hidden = 0;
    auto t0 = Clock::now();
    {
      auto r = RunComparison(a, b, job);
      Check(r.status());
      rows = r->rows.size();
      failed = r->failures;
      hidden = r->hidden_b.size();
    }
    double t_first = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::vector<double> t_a, t_b, t_cmp, t_fa, t_fb, r_one, r_two;
    for (int k = 0; k < runs; ++k) {
      double pa = plain_run(c.level_a), pb = plain_run(c.level_b);
      a.ms = b.ms = 0;
      double t = MedianMs(1, [&] { Check(RunComparison(a, b, job).status()); });
      t_a.push_back(pa);
      t_b.push_back(pb);
      t_cmp.push_back(t);
      t_fa.push_back(a.ms);
      t_fb.push_back(b.ms);
      r_one.push_back(t / pa);
      r_two.push_back(t / (pa + pb));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    double cmp = median(t_cmp), fa = median(t_fa), fb = median(t_fb);
    std::printf("  %s: %zu tensors compared (%zu failed), %zu fused away in B\n", c.name, rows,
                failed, hidden);
    std::printf("    plain inference, A's level          %8.2f ms   1.00x\n", median(t_a));
    std::printf("    plain inference, B's level          %8.2f ms   %.2fx\n", median(t_b),
                median(t_b) / median(t_a));
    std::printf("    comparison, first (sessions created) %7.2f ms   %.2fx\n", t_first,
                t_first / median(t_a));
    std::printf(
        "    comparison, sessions reused          %7.2f ms   %.2fx one plain inference   "
        "target <= %.1fx\n",
        cmp, median(r_one), c.target);
    std::printf(
        "      = %.2fx both sides' plain inferences; runs A %.2f ms, B %.2f ms, "
        "comparing and the rest %.2f ms\n",
        median(r_two), fa, fb, cmp - fa - fb);
  }
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
