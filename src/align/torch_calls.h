// The module calls of a PyTorch capture, as the companion records them in the manifest's "torch"
// section (or, for older captures, rebuilt from the tensors' module metadata without dataflow).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxprobe/align/align.h"
#include "onnxprobe/side/side.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe::align {

// What a call read or what an output is the same tensor as.
struct TorchRef {
  enum class Kind { kUnknown, kInput, kTensor };
  Kind kind = Kind::kUnknown;
  std::string name;  // model input name or capture tensor name
};

struct TorchOutput {
  std::string tensor;  // capture tensor name
  TorchRef same_as;    // kUnknown: a tensor the call made
};

struct TorchCall {
  std::string module, type;
  int call_index = 0;
  int parent = -1;        // index into calls; -1 for the root
  std::string scope;      // the exporter's scope name for this call's nodes, without "_k"
  int scope_ordinal = 0;  // k-th call with this scope name (its nodes carry "_k" when k > 0)
  bool batchnorm = false;
  std::vector<std::vector<std::string>> params;  // the module's own parameters, every name of each
  std::vector<std::string> buffers;              // the module's own buffers (full names)
  double eps = 0;                                // BatchNorm's epsilon
  // training-mode remnants seen by the companion: the call's own code drew random numbers, or
  // the call changed its own buffers (names), though the model ran in eval mode
  bool rng_draws = false;
  std::vector<std::string> buffers_written;
  std::string source;  // "file:line" of the user's code that called the module ("" unknown)
  std::vector<TorchRef> inputs;
  std::vector<TorchOutput> outputs;
};

struct TorchTensorMeta {
  std::string name;
  int call = -1, output = 0;  // producing call, output index
  DType dtype = DType::kFloat32;
  Shape shape;
  bool known_type = false;  // dtype and shape known
};

// A parameter or buffer saved with the capture (for parameter parity).
struct TorchParam {
  std::vector<std::string> names;  // every name (tied weights have several)
  std::string file, key;           // in a dump folder / an .npz
  DType dtype = DType::kFloat32;
  Shape shape;
};

// A call's input that no module made and no model input is (functional code between modules),
// recorded by the companion with its value: the call's boundary on the PyTorch side.
struct TorchCallInput {
  int call = -1;  // index into calls
  int input = 0;  // position among the call's flattened arguments
  std::string tensor;
};

// The output of a torch function a module call ran itself (not inside a child call), recorded by
// the companion with its value: a boundary inside a module PyTorch exposes as one call.
struct TorchFunctional {
  int call = -1;         // index into calls
  std::string function;  // "softmax", "bmm", "linear", "add" (reflected spellings folded)
  int ordinal = 0;       // k-th call of this function within the call
  int input = -1;        // -1: the function's output; else its p-th tensor argument (one no other
                         // record holds, e.g. a transposed view it reads)
  std::string tensor;    // capture tensor name
  DType dtype = DType::kFloat32;
  Shape shape;
  bool known_type = false;
};

struct TorchCalls {
  std::vector<TorchCall> calls;          // in call order (a parent before its children)
  std::vector<TorchTensorMeta> tensors;  // capture tensors in recording order (call outputs)
  std::vector<TorchCallInput> call_inputs;
  std::vector<TorchFunctional> functional;  // in call order
  bool dataflow = false;  // inputs and same_as are recorded (the companion's "torch" section)
  // the torch functions every call ran were recorded (torch.functional_recorded): an absent
  // batch_norm record then means none ran
  bool functional_recorded = false;
  std::vector<TorchParam> params;
  // tensor -> the dtype PyTorch computed it in where the capture saved another (bfloat16 values
  // are saved as float32); device -> dtype of the autocast on at capture (torch.settings)
  std::map<std::string, std::string> torch_dtypes, autocast;
  // bytes of ONNX tensors one alignment fetch may hold (the comparison's --max-memory; 0: no
  // limit): FetchInBatches splits every run of the ONNX side by it
  uint64_t fetch_budget = 0;
};

// Reads the "torch" section of the capture at `dump_path` (folder or .npz). Falls back to
// RebuildTorchCalls when the manifest has none. Fails when the manifest cannot be read or the
// section is malformed (naming the field).
Expected<TorchCalls> ReadTorchCalls(const std::string& dump_path,
                                    const std::vector<SideTensor>& tensors);

// Calls rebuilt from module paths and call indices: static scopes, parents by path prefix.
TorchCalls RebuildTorchCalls(const std::vector<SideTensor>& tensors);

// The saved value of a parameter. Fails when the capture lacks it or it disagrees with the
// manifest.
Expected<Tensor> LoadTorchParam(const std::string& dump_path, const TorchParam& p);

// The exporter's name of a module inside its parent's scope: the path from its last non-numeric
// atom ("layer1.0.conv1" -> "conv1", "features.4.block.1" -> "block.1").
std::string UnqualifiedName(const std::string& module_path);

// An alignment row for `torch_name` of `call` (output `output_index`, -1 for a tensor that is
// not one of the call's outputs), not yet paired.
AlignmentRow CallRow(const TorchCall& call, const std::string& torch_name, int output_index);

}  // namespace onnxprobe::align
