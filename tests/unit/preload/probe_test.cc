// onnxprobe::Probe: capture of an application's runs through a shadow session whose output
// buffers are reused across runs. References are fresh probes (no reuse) on the same inputs.
#include "onnxprobe/preload/probe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace onnxprobe {
namespace {

namespace fs = std::filesystem;
const std::string kDemo = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx";

std::vector<NamedTensor> Input(float scale) {
  auto t = Tensor::Allocate(DType::kFloat32, {1, 3, 32, 32});
  EXPECT_TRUE(t.ok());
  float* p = t->data_as<float>();
  for (uint64_t i = 0; i < t->num_elements(); ++i) p[i] = scale * static_cast<float>(i % 17) - 1;
  return {{"input", std::move(*t)}};
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxprobe-probe-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static std::unique_ptr<Probe> Attach(ProbeOptions o = {}) {
    auto p = Probe::Attach(kDemo, o);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? std::move(*p) : nullptr;
  }
  // Every tensor of two dumps is bitwise equal (inputs included), and there are several.
  static void ExpectSameDump(const std::string& a, const std::string& b) {
    auto ra = DumpReader::Open(a);
    auto rb = DumpReader::Open(b);
    ASSERT_TRUE(ra.ok() && rb.ok());
    ASSERT_EQ((*ra)->entries().size(), (*rb)->entries().size());
    ASSERT_GT((*ra)->entries().size(), 5u);
    for (const auto& e : (*ra)->entries()) {
      const DumpEntry* f = (*rb)->Find(e.name, e.kind);
      ASSERT_NE(f, nullptr) << e.name;
      auto ta = (*ra)->Load(e);
      auto tb = (*rb)->Load(*f);
      ASSERT_TRUE(ta.ok() && tb.ok());
      EXPECT_TRUE(ta->BitwiseEqual(*tb)) << e.name;
    }
  }
  fs::path dir_;
};

TEST_F(ProbeTest, ReusedBuffersHoldEachRunsOwnValues) {
  auto probe = Attach();
  ASSERT_NE(probe, nullptr);
  auto first = probe->CaptureRun(Input(0.25f), Path("a"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = probe->CaptureRun(Input(-0.5f), Path("b"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_GT(second->capture.captured, 5u);
  EXPECT_EQ(second->capture.runs, 1u);

  auto fresh = Attach();
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->CaptureRun(Input(-0.5f), Path("b_fresh")).ok());
  ExpectSameDump(Path("b"), Path("b_fresh"));

  auto ra = DumpReader::Open(Path("a"));
  auto rb = DumpReader::Open(Path("b"));
  ASSERT_TRUE(ra.ok() && rb.ok());
  auto pa = (*ra)->Load(*(*ra)->Find("probs"));
  auto pb = (*rb)->Load(*(*rb)->Find("probs"));
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_FALSE(pa->BitwiseEqual(*pb));  // different inputs, different outputs
}

TEST_F(ProbeTest, ConcurrentCallsEachWriteTheirOwnRun) {
  auto probe = Attach();
  ASSERT_NE(probe, nullptr);
  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto r = probe->CaptureRun(Input(0.1f * (t + 1)), Path("t" + std::to_string(t)));
      results[t] = r.status();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(results[t].ok()) << results[t].message();
    auto fresh = Attach();
    ASSERT_TRUE(fresh->CaptureRun(Input(0.1f * (t + 1)), Path("f" + std::to_string(t))).ok());
    ExpectSameDump(Path("t" + std::to_string(t)), Path("f" + std::to_string(t)));
  }
}

TEST_F(ProbeTest, BatchedUnderABudgetEqualsOneRun) {
  ProbeOptions small;
  small.max_memory = 100 * 1024;  // the largest tensor is 64 KiB, the selection far more
  auto batched = Attach(small);
  ASSERT_NE(batched, nullptr);
  auto r = batched->CaptureRun(Input(0.3f), Path("batched"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->capture.runs, 1u);
  auto whole = Attach();
  ASSERT_TRUE(whole->CaptureRun(Input(0.3f), Path("whole")).ok());
  ExpectSameDump(Path("batched"), Path("whole"));
}

TEST_F(ProbeTest, ABudgetBelowOneTensorFailsAndWritesNothing) {
  ProbeOptions tiny;
  tiny.max_memory = 1024;
  auto probe = Attach(tiny);
  ASSERT_NE(probe, nullptr);
  ProbeFault fault = ProbeFault::kNone;
  auto r = probe->CaptureRun(Input(1), Path("none"), &fault);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(fault, ProbeFault::kMemoryBudget);
  EXPECT_NE(r.status().message().find("1024"), std::string::npos) << r.status().message();
  EXPECT_FALSE(fs::exists(Path("none")));
}

TEST_F(ProbeTest, AnUnknownTensorIsASelectionFault) {
  ProbeOptions o;
  o.selection.names = {"no_such_tensor"};
  ProbeFault fault = ProbeFault::kNone;
  auto p = Probe::Attach(kDemo, o, &fault);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(fault, ProbeFault::kSelection);
  EXPECT_NE(p.status().message().find("no_such_tensor"), std::string::npos);
}

}  // namespace
}  // namespace onnxprobe
