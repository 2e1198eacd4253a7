// Values the model fixes whatever runs it (TensorsFixedByModel, FixedByModel): one rule, asked
// for a whole graph or one tensor, on a graph written here with ONNX's own protobuf classes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "onnxprobe/model/model.h"

namespace onnxprobe {
namespace {

void AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
             const std::string& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("n_" + out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
}

TEST(FixedByModel, WeightsAndWhatIsMadeOfThemAloneNotInputsOrRandomSources) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  for (int i = 0; i < 4; ++i) w->add_float_data(float(i));
  for (const char* name : {"x"}) {
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  AddNode(g, "Transpose", {"w"}, "t");    // a weight, transposed: fixed
  AddNode(g, "Constant", {}, "c");        // a Constant: fixed
  AddNode(g, "Add", {"t", "c"}, "s");     // made of fixed values only: fixed
  AddNode(g, "RandomNormal", {}, "r");    // a source without inputs: not fixed
  AddNode(g, "Add", {"r", "c"}, "z");     // reads a random value: not fixed
  AddNode(g, "MatMul", {"x", "s"}, "y");  // reads the input: not fixed
  g->add_output()->set_name("y");
  g->add_output()->set_name("z");
  auto dir = std::filesystem::path(::testing::TempDir());
  std::string path = (dir / "fixed_by_model.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GraphIndex& idx = model->index();
  EXPECT_EQ(TensorsFixedByModel(idx), (std::set<std::string>{"t", "c", "s"}));
  for (const char* name : {"w", "t", "c", "s", ""}) EXPECT_TRUE(FixedByModel(idx, name)) << name;
  for (const char* name : {"x", "r", "z", "y", "nope"})
    EXPECT_FALSE(FixedByModel(idx, name)) << name;
}

}  // namespace
}  // namespace onnxprobe
