// Small ONNX graphs built with ONNX's generated classes, for tests that need a loaded Model.
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe::test {

// A model at IR 8, opset 13, whose graph "g" has one input, "x", and nothing else yet.
inline onnx::ModelProto ModelWithInputX() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("g");
  m.mutable_graph()->add_input()->set_name("x");
  return m;
}

// A node `op` reading `in` and making `out`, named "n_<out>".
inline void AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                    const std::string& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("n_" + out);
  for (const auto& x : in) n->add_input(x);
  n->add_output(out);
}

// A float initializer of one element, 0.5.
inline void AddInitializer(onnx::GraphProto* g, const std::string& name) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->add_float_data(0.5f);
}

// `m` written to a fresh folder under the temporary directory (named after `tag` and this
// process) and loaded; `dir` receives the folder, for the caller to remove. Null when it does
// not load (the reason in `error`).
inline std::unique_ptr<Model> WriteAndLoad(const onnx::ModelProto& m, const std::string& tag,
                                           std::filesystem::path* dir, std::string* error) {
  *dir = std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(*dir);
  std::string path = (*dir / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  auto loaded = Model::Load(path);
  if (!loaded.ok()) {
    *error = loaded.status().message();
    return nullptr;
  }
  return std::make_unique<Model>(std::move(*loaded));
}

}  // namespace onnxprobe::test
