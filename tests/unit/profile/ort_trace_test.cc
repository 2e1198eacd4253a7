// ParseOrtTrace on hand-written traces in ONNX Runtime's event layout, and Median.
#include "profile/ort_trace.h"

#include <gtest/gtest.h>

#include "onnxprobe/profile/latency.h"

namespace onnxprobe {
namespace {

std::string Event(const std::string& cat, const std::string& name, double ts, double dur,
                  const std::string& args = "{}") {
  return "{\"cat\":\"" + cat + "\",\"pid\":1,\"tid\":1,\"dur\":" + std::to_string(dur) +
         ",\"ts\":" + std::to_string(ts) + ",\"ph\":\"X\",\"name\":\"" + name +
         "\",\"args\":" + args + "}";
}

std::string Kernel(const std::string& node, const std::string& op, double ts, double dur) {
  return Event("Node", node + "_kernel_time", ts, dur,
               "{\"op_name\":\"" + op + "\",\"provider\":\"CPUExecutionProvider\"}");
}

TEST(OrtTrace, KernelsBelongToTheRunThatStartedLastBeforeThem) {
  std::string text = "[" + Event("Session", "model_loading_array", 0, 50) + "," +
                     Event("Session", "model_run", 100, 40) + "," +
                     Event("Node", "mm_fence_before", 101, 0, "{\"op_name\":\"MatMul\"}") + "," +
                     Kernel("mm", "MatMul", 102, 20) + "," + Kernel("relu", "Relu", 125, 5) + "," +
                     Event("Session", "model_run", 200, 30) + "," +
                     Kernel("mm", "MatMul", 201, 18) + "," + Kernel("relu", "Relu", 221, 4) + "]";
  auto runs = ParseOrtTrace(text, "trace");
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_DOUBLE_EQ((*runs)[0].dur_us, 40);
  ASSERT_EQ((*runs)[0].kernels.size(), 2u);  // the fence event has no provider
  EXPECT_EQ((*runs)[0].kernels[0].node, "mm");
  EXPECT_EQ((*runs)[0].kernels[0].op_type, "MatMul");
  EXPECT_EQ((*runs)[0].kernels[0].provider, "CPUExecutionProvider");
  EXPECT_DOUBLE_EQ((*runs)[1].kernels[0].dur_us, 18);
  EXPECT_EQ((*runs)[1].kernels[1].node, "relu");
}

TEST(OrtTrace, ATraceWithoutRunsOrNotAnArrayIsCorrupt) {
  auto none = ParseOrtTrace("[" + Kernel("mm", "MatMul", 1, 2) + "]", "t.json");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(none.status().message().find("t.json"), std::string::npos);
  EXPECT_FALSE(ParseOrtTrace("{}", "t.json").ok());
  EXPECT_FALSE(ParseOrtTrace("[", "t.json").ok());
  // truncated mid-event, and an event that is not JSON
  std::string run = Event("Session", "model_run", 1, 2);
  EXPECT_FALSE(ParseOrtTrace("[" + run + "," + run.substr(0, 20), "t.json").ok());
  EXPECT_FALSE(ParseOrtTrace("[" + run + ",{\"cat\": nope}]", "t.json").ok());
  EXPECT_FALSE(ParseOrtTrace("[" + run + "}]", "t.json").ok());
}

TEST(OrtTrace, BracketsInsideStringsAreText) {
  std::string text =
      "[" + Event("Session", "model_run", 1, 9) + "," + Kernel("odd]{name\\\"", "Add", 2, 3) + "]";
  auto runs = ParseOrtTrace(text, "trace");
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ((*runs)[0].kernels.size(), 1u);
  EXPECT_EQ((*runs)[0].kernels[0].node, "odd]{name\"");  // the JSON escape decoded
}

TEST(Latency, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

}  // namespace
}  // namespace onnxprobe

namespace onnxprobe {
namespace {

TraceRun MakeRun(double ts, double dur, std::vector<KernelEvent> kernels) {
  return TraceRun{ts, dur, std::move(kernels)};
}
KernelEvent K(const std::string& node, const std::string& op, double dur,
              const std::string& provider = "CPUExecutionProvider") {
  return KernelEvent{node, op, provider, 0, dur};
}

TEST(AggregateTrace, MediansOverMeasuredRunsGroupsAndTotals) {
  std::vector<TraceRun> runs = {
      MakeRun(0, 1000, {K("conv", "Conv", 900), K("add", "Add", 90)}),  // warm-up: left out
      MakeRun(10, 50,
              {K("conv", "Conv", 10), K("add", "Add", 5), K("loop_body", "Add", 1),
               K("loop_body", "Add", 2)}),
      MakeRun(20, 60,
              {K("conv", "Conv", 30), K("add", "Add", 7), K("gpu_mm", "MatMul", 8, "CUDA")}),
      MakeRun(30, 70, {K("conv", "Conv", 20), K("add", "Add", 6), K("loop_body", "Add", 4)}),
  };
  ProfileReport r;
  ASSERT_TRUE(AggregateTrace(runs, 1, {"conv", "add", "folded"}, &r).ok());
  ASSERT_EQ(r.nodes.size(), 4u);  // first-seen order
  EXPECT_EQ(r.nodes[0].node, "conv");
  EXPECT_DOUBLE_EQ(r.nodes[0].median_us, 20);  // of 10, 30, 20
  EXPECT_DOUBLE_EQ(r.nodes[0].min_us, 10);
  EXPECT_DOUBLE_EQ(r.nodes[0].max_us, 30);
  EXPECT_EQ(r.nodes[0].topo_index, 0);
  EXPECT_DOUBLE_EQ(r.nodes[1].median_us, 6);
  EXPECT_EQ(r.nodes[2].node, "loop_body");  // 3 (two calls), 0, 4 -> 3
  EXPECT_DOUBLE_EQ(r.nodes[2].median_us, 3);
  EXPECT_EQ(r.nodes[2].calls, 2);
  EXPECT_EQ(r.nodes[2].topo_index, -1);       // not a model node
  EXPECT_DOUBLE_EQ(r.nodes[3].median_us, 0);  // ran once in three runs: 0, 8, 0
  EXPECT_DOUBLE_EQ(r.nodes_total_us, 20 + 6 + 3 + 0);
  EXPECT_DOUBLE_EQ(r.run_median_us, 60);
  EXPECT_DOUBLE_EQ(r.kernels_run_median_us, 30);  // per run: 18, 45, 30
  ASSERT_EQ(r.by_op_type.size(), 3u);
  EXPECT_EQ(r.by_op_type[0].name, "Conv");
  EXPECT_EQ(r.by_op_type[1].name, "Add");
  EXPECT_EQ(r.by_op_type[1].nodes, 2u);
  EXPECT_DOUBLE_EQ(r.by_op_type[1].total_us, 9);
  EXPECT_DOUBLE_EQ(r.by_op_type[1].share, 9.0 / 29);
  ASSERT_EQ(r.by_provider.size(), 2u);
  EXPECT_EQ(r.by_provider[0].name, "CPUExecutionProvider");
  EXPECT_EQ(r.by_provider[1].nodes, 1u);
  EXPECT_EQ(r.not_run, (std::vector<std::string>{"folded"}));
}

TEST(AggregateTrace, NoMoreRunsThanWarmupIsCorrupt) {
  ProfileReport r;
  EXPECT_EQ(AggregateTrace({MakeRun(0, 1, {})}, 1, {}, &r).code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace onnxprobe
