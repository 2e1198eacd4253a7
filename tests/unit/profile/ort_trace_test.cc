// ParseOrtTrace on hand-written traces in ONNX Runtime's event layout, and Median.
#include "profile/ort_trace.h"

#include <gtest/gtest.h>

#include "onnxprobe/latency.h"

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
