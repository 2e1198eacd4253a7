// DiscoverDecoderIo over the naming conventions of decoder exports, and LayerFromName.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../graph_builder.h"
#include "onnxprobe/generate/generate.h"

namespace onnxprobe {
namespace {

void AddValue(onnx::ValueInfoProto* v, const std::string& name, int elem,
              const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  for (const auto& d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

// A "decoder" whose outputs are Identity copies: only the names and shapes matter here.
struct Spec {
  std::vector<std::string> int_inputs;
  std::vector<std::pair<std::string, std::string>> cache;  // past -> present
  std::vector<std::string> float_outputs;                  // besides the presents
  std::vector<std::string> cache_dims = {"batch", "4", "past_seq", "16"};
};

Expected<DecoderIo> Discover(const Spec& s, const DecoderIoHints& hints = {}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  for (const auto& n : s.int_inputs) AddValue(g->add_input(), n, 7, {"batch", "seq"});
  for (const auto& [past, present] : s.cache) {
    AddValue(g->add_input(), past, 1, s.cache_dims);
    auto* node = g->add_node();
    node->set_op_type("Identity");
    node->add_input(past);
    node->add_output(present);
    AddValue(g->add_output(), present, 1, s.cache_dims);
  }
  for (const auto& o : s.float_outputs) {
    auto* node = g->add_node();
    node->set_op_type("Identity");
    node->add_input(s.cache.front().first);
    node->add_output(o);
    AddValue(g->add_output(), o, 1, {"batch", "seq", "32"});
  }
  std::filesystem::path dir;
  std::string error;
  auto model = test::WriteAndLoad(m, "decoder_io", &dir, &error);
  if (model == nullptr) return InvalidArgument(error);
  auto io = DiscoverDecoderIo(*model, hints);
  std::filesystem::remove_all(dir);
  return io;
}

TEST(DecoderIo, HuggingFaceNames) {
  Spec s;
  s.int_inputs = {"input_ids", "attention_mask", "position_ids"};
  for (int l = 1; l >= 0; --l) {  // declared out of order
    for (const char* k : {"value", "key"}) {
      s.cache.push_back({"past_key_values." + std::to_string(l) + "." + k,
                         "present." + std::to_string(l) + "." + k});
    }
  }
  s.float_outputs = {"logits"};
  auto io = Discover(s);
  ASSERT_TRUE(io.ok()) << io.status().message();
  EXPECT_EQ(io->input_ids, "input_ids");
  EXPECT_EQ(io->attention_mask, "attention_mask");
  EXPECT_EQ(io->position_ids, "position_ids");
  EXPECT_EQ(io->logits, "logits");
  EXPECT_EQ(io->layers, 2);
  ASSERT_EQ(io->cache.size(), 4u);
  EXPECT_EQ(io->cache[0].past, "past_key_values.0.key");
  EXPECT_EQ(io->cache[0].present, "present.0.key");
  EXPECT_EQ(io->cache[1].kind, 'v');
  EXPECT_EQ(io->cache[3].present, "present.1.value");
  EXPECT_EQ(io->cache[0].seq_axis, 2);
}

TEST(DecoderIo, OtherConventions) {
  // past_key_N / past_value_N -> present_key_N / present_value_N, no mask or positions,
  // a single float output not called logits
  Spec s;
  s.int_inputs = {"ids"};
  s.cache = {{"past_key_0", "present_key_0"}, {"past_value_0", "present_value_0"}};
  s.float_outputs = {"output"};
  auto io = Discover(s);
  ASSERT_TRUE(io.ok()) << io.status().message();
  EXPECT_EQ(io->input_ids, "ids");
  EXPECT_EQ(io->attention_mask, "");
  EXPECT_EQ(io->logits, "output");
  ASSERT_EQ(io->cache.size(), 2u);
  EXPECT_EQ(io->cache[0].kind, 'k');
  EXPECT_EQ(io->cache[1].present, "present_value_0");
}

TEST(DecoderIo, KeyAndValueInOneTensorGrowOnTheirSequenceAxis) {
  Spec s;
  s.int_inputs = {"input_ids"};
  s.cache = {{"past_0", "present_0"}, {"past_1", "present_1"}};
  s.float_outputs = {"logits"};
  s.cache_dims = {"2", "batch", "4", "past_sequence_length", "16"};
  auto io = Discover(s);
  ASSERT_TRUE(io.ok()) << io.status().message();
  EXPECT_EQ(io->cache[0].kind, 'c');
  EXPECT_EQ(io->cache[0].seq_axis, 3);
}

TEST(DecoderIo, UnmappableNamesSayWhichOptionMapsThem) {
  Spec s;
  s.int_inputs = {"input_ids", "use_cache_branch"};
  s.cache = {{"past_key_values.0.key", "present.0.key"}};
  s.float_outputs = {"logits"};
  auto io = Discover(s);
  ASSERT_FALSE(io.ok());
  EXPECT_NE(io.status().message().find("'use_cache_branch'"), std::string::npos);
  EXPECT_NE(io.status().message().find("--io"), std::string::npos);

  Spec t;
  t.int_inputs = {"input_ids"};
  t.cache = {{"past_key_values.0.key", "kv_out_a"}};
  t.float_outputs = {"logits"};
  io = Discover(t);
  ASSERT_FALSE(io.ok());
  EXPECT_NE(io.status().message().find("--io past_key_values.0.key=PRESENT"), std::string::npos);
  io = Discover(t, {{"past_key_values.0.key", "kv_out_a"}});
  ASSERT_TRUE(io.ok()) << io.status().message();
  EXPECT_EQ(io->cache[0].present, "kv_out_a");

  Spec u = s;
  u.int_inputs = {"input_ids"};
  u.float_outputs = {"scores", "hidden"};
  io = Discover(u);
  ASSERT_FALSE(io.ok());
  EXPECT_NE(io.status().message().find("--io logits=NAME"), std::string::npos);
  io = Discover(u, {{"logits", "scores"}});
  ASSERT_TRUE(io.ok()) << io.status().message();
  EXPECT_EQ(io->logits, "scores");
}

TEST(LayerFromName, ModulePaths) {
  EXPECT_EQ(LayerFromName("/model/layers.2/self_attn/q_proj/MatMul"), 2);
  EXPECT_EQ(LayerFromName("/transformer/h.11/attn/MatMul"), 11);
  EXPECT_EQ(LayerFromName("encoder.block.3.ff"), 3);
  EXPECT_EQ(LayerFromName("MatMul_123"), -1);
  EXPECT_EQ(LayerFromName("/embed_tokens/Gather"), -1);
  EXPECT_EQ(LayerFromName("/Constant_12_output_0"), -1);
}

}  // namespace
}  // namespace onnxprobe
