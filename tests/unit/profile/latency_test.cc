// MeasureLatency's count of runs against a backend whose runs take a known time: exactly `runs`
// without a time limit; under max_measured_ms, the measured runs stop once they have taken that
// long in all, never before the first one.
#include "onnxprobe/profile/latency.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../fake_side.h"

namespace onnxprobe {
namespace {

class SleepySession : public BackendSession {
 public:
  SleepySession(int ms, int* runs) : ms_(ms), runs_(runs) {}
  const std::vector<std::string>& input_names() const override { return inputs_; }
  const std::vector<std::string>& output_names() const override { return outputs_; }
  Expected<std::vector<RunOutput>> Run(const std::vector<std::pair<std::string, const Tensor*>>&,
                                       const std::vector<std::string>&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    ++*runs_;
    return std::vector<RunOutput>();
  }
  Status RunInto(const std::vector<std::pair<std::string, const Tensor*>>&,
                 const std::vector<std::string>&, std::vector<RunOutput>*) override {
    return Unsupported("not used");
  }

 private:
  int ms_;
  int* runs_;
  std::vector<std::string> inputs_{"X"}, outputs_{"Y"};
};

// Every run sleeps `ms` milliseconds; `runs` counts the runs of every session it made.
class SleepyBackend : public Backend {
 public:
  explicit SleepyBackend(int ms) : ms_(ms) {}
  std::string name() const override { return "sleepy"; }
  std::string version() const override { return "0"; }
  std::string library_path() const override { return ""; }
  std::vector<std::string> available_providers() const override { return {"CPU"}; }
  Expected<std::unique_ptr<BackendSession>> CreateSession(const std::string&, const std::string&,
                                                          const SessionOptions&) override {
    return std::unique_ptr<BackendSession>(std::make_unique<SleepySession>(ms_, &runs));
  }
  std::vector<std::string> TakeLog() override { return {}; }
  int runs = 0;

 private:
  int ms_;
};

Model Identity(const std::string& name) {
  auto m = fake::BuildModel(::testing::TempDir() + "/" + name, {{"id", "Identity", {"X"}, {"Y"}}},
                            {"X"}, {"Y"});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

LatencyOptions Options(int runs, double max_measured_ms = 0) {
  LatencyOptions o;
  o.runs = runs;
  o.warmup = 1;
  o.max_measured_ms = max_measured_ms;
  return o;
}

TEST(Latency, RunsExactlyAsManyAsAskedWithoutATimeLimit) {
  Model m = Identity("latency_exact.onnx");
  SleepyBackend backend(20);
  LatencyOptions o = Options(4);
  auto got = MeasureLatency(m, backend, SessionOptions(), {}, o, false);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(backend.runs, 5);
  EXPECT_EQ(got->latency.runs, 4);
  EXPECT_EQ(got->latency.warmup, 1);
  ASSERT_EQ(got->latency.run_ms.size(), 4u);
  for (double ms : got->latency.run_ms) EXPECT_GE(ms, 20.0);
}

TEST(Latency, MeasuredRunsStopOnceTheyTookTheTimeLimit) {
  Model m = Identity("latency_limit.onnx");
  // runs of at least 40 ms under a 100 ms limit: at most 3 (40, 80, 120), fewer on a busy
  // machine; the runs stop at the first one that brings the total to the limit
  SleepyBackend backend(40);
  LatencyOptions o = Options(10, 100);
  auto got = MeasureLatency(m, backend, SessionOptions(), {}, o, false);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const std::vector<double>& r = got->latency.run_ms;
  ASSERT_GE(r.size(), 1u);
  EXPECT_LE(r.size(), 3u);
  EXPECT_EQ(got->latency.runs, static_cast<int>(r.size()));
  EXPECT_EQ(backend.runs, got->latency.runs + 1);  // the warm-up is not measured nor counted
  double total = 0;
  for (double ms : r) total += ms;
  EXPECT_GE(total, 100.0);
  EXPECT_LT(total - r.back(), 100.0);
}

TEST(Latency, ARunLongerThanTheLimitIsStillMeasuredOnce) {
  Model m = Identity("latency_one.onnx");
  SleepyBackend backend(30);
  LatencyOptions o = Options(3, 1);
  auto got = MeasureLatency(m, backend, SessionOptions(), {}, o, false);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->latency.runs, 1);
  EXPECT_EQ(backend.runs, 2);
  EXPECT_EQ(got->latency.median_ms, got->latency.run_ms[0]);
}

}  // namespace
}  // namespace onnxprobe
