// A compiling provider's error as one line: OpenVINO's frames dropped, its reason and the names it
// gives kept (the message is ONNX Runtime 1.24.1-openvino's, for a scikit-learn MLP).
#include "backend/ort/provider_error.h"

#include <gtest/gtest.h>

namespace onnxprobe {
namespace {

TEST(ProviderError, OpenVinoFramesAreDroppedAndTheReasonKept) {
  const std::string raw =
      "Exception during initialization: /onnxruntime/onnxruntime/core/providers/openvino/backends"
      "/basic_backend.cc:136 onnxruntime::openvino_ep::BasicBackend::BasicBackend(std::unique_ptr"
      "<onnx::ModelProto>&, onnxruntime::openvino_ep::SessionContext&, const onnxruntime::openvin"
      "o_ep::SubGraphContext&, onnxruntime::openvino_ep::SharedContext&, onnxruntime::openvino_ep"
      "::ptr_stream_t&) /onnxruntime/onnxruntime/core/providers/openvino/ov_interface.cc:28 auto "
      "onnxruntime::openvino_ep::OvExceptionBoundary(Func&&, std::format_string<Args ...>&&, Args"
      "&& ...) [with bool typed = false; Func = OVCore::CompileModel(std::shared_ptr<const ov::Mo"
      "del>&, std::string&, ov::AnyMap&, bool, const std::string&)::<lambda()>; Args = {const std"
      "::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&}; std::forma"
      "t_string<Args ...> = std::basic_format_string<char, const std::__cxx11::basic_string<char,"
      " std::char_traits<char>, std::allocator<char> >&>] [OpenVINO-EP] Exception while Loading N"
      "etwork for graph OpenVINOExecutionProvider_OpenVINO-EP-subgraph_1_0: Exception from src/in"
      "ference/src/cpp/core.cpp:114: Exception from src/inference/src/dev/plugin.cpp:53: Check '!"
      "shape.rank().is_dynamic()' failed at src/plugins/intel_cpu/src/node.cpp:106: Unexpected: C"
      "PU plug-in doesn't support Parameter operation with dynamic rank. Operation name: array_fe"
      "ature_extractor_result";
  const std::string got = ConciseProviderMessage(raw);
  EXPECT_EQ(got,
            "Exception during initialization: OpenVINO: Exception while Loading Network for graph "
            "OpenVINOExecutionProvider_OpenVINO-EP-subgraph_1_0: Unexpected: CPU plug-in doesn't "
            "support Parameter operation with dynamic rank. Operation name: "
            "array_feature_extractor_result");
  EXPECT_TRUE(ProviderFailedOnItsOwnNodes(raw));
}

TEST(ProviderError, OtherMessagesAreKept) {
  const std::string m = "Load model from m.onnx failed: the graph is not acyclic";
  EXPECT_EQ(ConciseProviderMessage(m), m);
  EXPECT_FALSE(ProviderFailedOnItsOwnNodes(m));
  // a frame without a line number is not a frame
  const std::string odd = "[OpenVINO-EP] Exception from nowhere: reason";
  EXPECT_EQ(ConciseProviderMessage(odd), "OpenVINO: Exception from nowhere: reason");
}

}  // namespace
}  // namespace onnxprobe
