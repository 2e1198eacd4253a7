#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// A tensor loaded from a file, before it is bound to a model input.
struct Given {
  Tensor tensor;
  std::string source;    // the file it came from
  bool by_stem = false;  // a bare .npy: the name is the file stem, not chosen by the caller
};

Status Add(const std::string& name, Tensor t, const std::string& source, bool by_stem,
           std::map<std::string, Given>* out) {
  auto [it, fresh] = out->emplace(name, Given{std::move(t), source, by_stem});
  if (!fresh) {
    return InvalidArgument("input '" + name + "' is given twice (by " + it->second.source +
                           " and by " + source + ")");
  }
  return Status::Ok();
}

Status LoadFile(const std::string& spec, const ModelSummary& s, size_t pb_index,
                std::map<std::string, Given>* out) {
  std::string name, path = spec;
  auto eq = spec.find('=');
  if (eq != std::string::npos && !fs::exists(spec)) {
    name = spec.substr(0, eq);
    path = spec.substr(eq + 1);
  }
  std::string ext = fs::path(path).extension().string();
  if (IsDumpPath(path)) {  // the inputs an earlier `onnxprobe run` used
    OP_ASSIGN_OR_RETURN(auto dump, DumpReader::Open(path));
    size_t n = 0;
    for (const auto& e : dump->entries()) {
      if (e.kind != DumpEntryKind::kInput) continue;
      OP_ASSIGN_OR_RETURN(Tensor t, dump->Load(e));
      OP_RETURN_IF_ERROR(Add(e.name, std::move(t), path, false, out));
      ++n;
    }
    if (n == 0) return InvalidArgument(path + ": the dump recorded no inputs");
    return Status::Ok();
  }
  if (ext == ".npz") {
    OP_ASSIGN_OR_RETURN(auto arrays, ReadNpz(path));
    if (arrays.empty()) return InvalidArgument(path + ": holds no arrays");
    for (auto& [k, t] : arrays) OP_RETURN_IF_ERROR(Add(k, std::move(t), path, false, out));
    return Status::Ok();
  }
  if (ext == ".npy") {
    OP_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
    bool by_stem = name.empty();
    if (by_stem) name = fs::path(path).stem().string();
    return Add(name, std::move(t), path, by_stem, out);
  }
  if (ext == ".pb") {
    OP_ASSIGN_OR_RETURN(NamedTensor nt, ReadTensorProto(path));
    if (name.empty()) name = nt.name;
    if (name.empty()) {
      if (pb_index >= s.inputs.size()) {
        return InvalidArgument(path + ": unnamed TensorProto but the model has only " +
                               std::to_string(s.inputs.size()) + " inputs");
      }
      name = s.inputs[pb_index].name;
    }
    return Add(name, std::move(nt.tensor), path, false, out);
  }
  return InvalidArgument(path + ": unknown input file type '" + ext +
                         "' (expected .npy, .npz, .pb or an onnxprobe dump)");
}

std::string InputList(const ModelSummary& s) {
  std::string list;
  for (const auto& in : s.inputs) list += (list.empty() ? "" : ", ") + in.name;
  return list;
}

bool IsInput(const ModelSummary& s, const std::string& name) {
  for (const auto& in : s.inputs)
    if (in.name == name) return true;
  return false;
}

// Every dimension name set must be a symbolic dimension of some input.
Status CheckDimNames(const Model& model, const InputOptions& o) {
  std::set<std::string> names;
  for (const auto& in : model.summary().inputs) {
    for (const Dim& d : in.dims)
      if (!d.param.empty()) names.insert(d.param);
  }
  for (const auto& [name, value] : o.dim_params) {
    if (value == 0) {
      return InvalidArgument("--dim " + name +
                             "=0: every input with that dimension would be empty, leaving "
                             "nothing to capture or compare; give 1 or more");
    }
    if (names.count(name)) continue;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument(
        "no input of " + model.path() + " has a dimension named '" + name + "' (" +
        (list.empty() ? "its inputs have no named dimensions" : "named dimensions: " + list) + ")");
  }
  return Status::Ok();
}

Status FillRandom(Tensor* t, std::pair<double, double> range, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(range.first, range.second);
  uint64_t n = t->num_elements();
  auto ints = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    auto lo = static_cast<int64_t>(std::ceil(range.first));
    auto hi = static_cast<int64_t>(std::ceil(range.second)) - 1;
    if (hi < lo) hi = lo;
    std::uniform_int_distribution<int64_t> d(lo, hi);
    for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<T>(d(rng));
  };
  switch (t->dtype()) {
    case DType::kFloat32: {
      auto* p = t->data_as<float>();
      for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<float>(real(rng));
      break;
    }
    case DType::kFloat64: {
      auto* p = t->data_as<double>();
      for (uint64_t i = 0; i < n; ++i) p[i] = real(rng);
      break;
    }
    case DType::kFloat16: {
      auto* p = t->data_as<uint16_t>();
      for (uint64_t i = 0; i < n; ++i) p[i] = FloatToHalf(static_cast<float>(real(rng)));
      break;
    }
    case DType::kBFloat16: {
      auto* p = t->data_as<uint16_t>();
      for (uint64_t i = 0; i < n; ++i) p[i] = FloatToBFloat16(static_cast<float>(real(rng)));
      break;
    }
    case DType::kBool: {
      auto* p = t->data_as<uint8_t>();
      std::bernoulli_distribution b(0.5);
      for (uint64_t i = 0; i < n; ++i) p[i] = b(rng) ? 1 : 0;
      break;
    }
    case DType::kInt8:
      ints(t->data_as<int8_t>());
      break;
    case DType::kInt16:
      ints(t->data_as<int16_t>());
      break;
    case DType::kInt32:
      ints(t->data_as<int32_t>());
      break;
    case DType::kInt64:
      ints(t->data_as<int64_t>());
      break;
    case DType::kUInt8:
      ints(t->data_as<uint8_t>());
      break;
    case DType::kUInt16:
      ints(t->data_as<uint16_t>());
      break;
    case DType::kUInt32:
      ints(t->data_as<uint32_t>());
      break;
    case DType::kUInt64:
      ints(t->data_as<uint64_t>());
      break;
  }
  return Status::Ok();
}

// A --dim that names the symbolic dimension `i` of `in` must agree with the size `size` another
// option (--shape, --input) gives it: else that --dim would be silently ignored there.
Status DimAgrees(const ValueInfo& in, size_t i, int64_t size, const InputOptions& o,
                 const std::string& by) {
  if (i >= in.dims.size() || in.dims[i].param.empty()) return Status::Ok();
  auto p = o.dim_params.find(in.dims[i].param);
  if (p == o.dim_params.end() || p->second == size) return Status::Ok();
  return InvalidArgument("input '" + in.name + "': " + by + " gives dimension '" +
                         in.dims[i].param + "' the size " + std::to_string(size) + ", --dim " +
                         in.dims[i].param + "=" + std::to_string(p->second) + " another");
}

// The concrete shape for a declared input. A symbolic dimension no option sets is 1 (the batch
// of one a user means almost every time), said in one note per dimension name.
Expected<Shape> ResolveShape(const ValueInfo& in, const InputOptions& o,
                             std::vector<std::string>* notes) {
  auto it = o.shapes.find(in.name);
  if (it != o.shapes.end()) {
    if (in.has_shape && in.dims.size() != it->second.size()) {
      return InvalidArgument("input '" + in.name + "': --shape gives rank " +
                             std::to_string(it->second.size()) + ", model declares " +
                             ValueInfoTypeString(in));
    }
    for (size_t i = 0; in.has_shape && i < in.dims.size(); ++i) {
      if (in.dims[i].value >= 0 && in.dims[i].value != it->second[i]) {
        return InvalidArgument("input '" + in.name + "': --shape " + ShapeToString(it->second) +
                               " contradicts the declared " + ValueInfoTypeString(in));
      }
      OP_RETURN_IF_ERROR(
          DimAgrees(in, i, it->second[i], o, "--shape " + ShapeToString(it->second)));
    }
    return it->second;
  }
  if (!in.has_shape) {
    return InvalidArgument("input '" + in.name + "' has no declared shape; give one with --shape " +
                           in.name + ":1x3x224x224");
  }
  Shape shape;
  for (const Dim& d : in.dims) {
    if (d.value >= 0) {
      shape.push_back(d.value);
      continue;
    }
    auto p = o.dim_params.find(d.param);
    if (!d.param.empty() && p != o.dim_params.end()) {
      shape.push_back(p->second);
    } else {
      shape.push_back(1);
      std::string note =
          d.param.empty()
              ? "input '" + in.name + "' " + ValueInfoTypeString(in) +
                    ": an unnamed dimension is set to 1 (--shape " + in.name + ":... chooses)"
              : "symbolic dimension '" + d.param + "' is set to 1 (first in input '" + in.name +
                    "' " + ValueInfoTypeString(in) + "; --dim " + d.param + "=N chooses)";
      bool said = false;
      for (const auto& n : *notes) said = said || n.find("'" + d.param + "' is set to 1") != n.npos;
      if (!said || d.param.empty()) notes->push_back(note);
    }
  }
  return shape;
}

Status CheckGiven(const ValueInfo& in, const Tensor& t) {
  if (in.elem_type != 0) {
    auto dt = DTypeFromOnnx(in.elem_type);
    if (dt.ok() && *dt != t.dtype()) {
      return InvalidArgument("input '" + in.name + "': expected " + DTypeName(*dt) + ", got " +
                             DTypeName(t.dtype()));
    }
  }
  if (!in.has_shape) return Status::Ok();
  bool ok = in.dims.size() == t.shape().size();
  for (size_t i = 0; ok && i < in.dims.size(); ++i) {
    if (in.dims[i].value >= 0 && in.dims[i].value != t.shape()[i]) ok = false;
  }
  if (!ok) {
    return InvalidArgument("input '" + in.name + "': expected shape " + ValueInfoTypeString(in) +
                           ", got " + ShapeToString(t.shape()));
  }
  return Status::Ok();
}

// An input that is NaN/Inf everywhere makes every tensor after it NaN/Inf on both sides, which
// compare as equal: a comparison that can only pass. Refused unless allowed; a partly
// non-finite input is noted with its share, which every report states first.
Status CheckFinite(const std::string& name, const Given& g, bool allow, InputPreparation* prep) {
  const Tensor& t = g.tensor;
  if (!IsFloating(t.dtype()) || t.num_elements() == 0) return Status::Ok();
  TensorStats st = ComputeStats(t);
  uint64_t bad = st.nan_count + st.inf_count;
  if (bad == 0) return Status::Ok();
  std::string what = "input '" + name + "' (from " + g.source + ")";
  if (bad == t.num_elements() && !allow) {
    return InvalidArgument(what + " is NaN/Inf in all " + std::to_string(bad) +
                           " values: every tensor computed from it is too, and NaN compares "
                           "equal to NaN; --allow-nonfinite-inputs runs it anyway");
  }
  prep->nonfinite_inputs.push_back(
      what + ": " + FormatNumber(100.0 * double(bad) / double(t.num_elements())) + "% of its " +
      std::to_string(t.num_elements()) + " values are NaN/Inf (" + std::to_string(st.nan_count) +
      " NaN, " + std::to_string(st.inf_count) + " Inf)");
  return Status::Ok();
}

}  // namespace

Expected<std::vector<NamedTensor>> PrepareInputs(const Model& model, const InputOptions& o,
                                                 InputPreparation* prep) {
  InputPreparation ignored;
  if (prep == nullptr) prep = &ignored;
  auto fail = [&](InputField field, Status st) {
    prep->failed = field;
    return st;
  };
  const ModelSummary& s = model.summary();
  std::map<std::string, Given> given;
  size_t pb_index = 0;
  for (const auto& f : o.files) {
    Status st = LoadFile(f, s, pb_index, &given);
    if (!st.ok()) return fail(InputField::kFiles, st);
    ++pb_index;
  }
  for (const auto& nt : o.tensors) {
    Status st = Add(nt.name, nt.tensor, "an array given in memory", false, &given);
    if (!st.ok()) return fail(InputField::kFiles, st);
  }
  // a bare .npy whose stem names no input: the only input, or ask for NAME=FILE
  for (auto it = given.begin(); it != given.end();) {
    if (!it->second.by_stem || IsInput(s, it->first)) {
      ++it;
      continue;
    }
    const std::string& source = it->second.source;
    if (s.inputs.size() != 1) {
      return fail(InputField::kFiles,
                  InvalidArgument(source + ": the file name '" + it->first +
                                  "' is not an input of " + model.path() +
                                  " (inputs: " + InputList(s) + "); bind it as NAME=" + source));
    }
    const std::string& only = s.inputs[0].name;
    prep->notes.push_back(source + " bound to input '" + only + "', the only input of " +
                          model.path());
    Given g = std::move(it->second);
    it = given.erase(it);
    Status st = Add(only, std::move(g.tensor), g.source, false, &given);
    if (!st.ok()) return fail(InputField::kFiles, st);
    it = given.begin();
  }
  for (const auto& [name, g] : given) {
    if (!IsInput(s, name)) {
      return fail(InputField::kFiles, InvalidArgument("input '" + name + "' (from " + g.source +
                                                      ") is not an input of " + model.path() +
                                                      " (inputs: " + InputList(s) + ")"));
    }
  }
  for (const auto& [name, shape] : o.shapes) {
    if (!IsInput(s, name)) {
      return fail(InputField::kShapes,
                  InvalidArgument("a shape is given for '" + name + "', which is not an input of " +
                                  model.path() + " (inputs: " + InputList(s) + ")"));
    }
    if (given.count(name)) {
      return fail(InputField::kShapes,
                  InvalidArgument("a shape is given for input '" + name +
                                  "', which is loaded from " + given.at(name).source));
    }
  }
  Status dims = CheckDimNames(model, o);
  if (!dims.ok()) return fail(InputField::kDimParams, dims);
  std::vector<NamedTensor> out;
  uint64_t k = 0;
  for (const auto& in : s.inputs) {
    ++k;
    auto g = given.find(in.name);
    if (g != given.end()) {
      Status st = CheckGiven(in, g->second.tensor);
      for (size_t i = 0; st.ok() && in.has_shape && i < g->second.tensor.shape().size(); ++i) {
        st = DimAgrees(in, i, g->second.tensor.shape()[i], o, "its value from " + g->second.source);
      }
      if (st.ok()) st = CheckFinite(in.name, g->second, o.allow_nonfinite, prep);
      if (!st.ok()) return fail(InputField::kFiles, st);
      out.push_back({in.name, std::move(g->second.tensor)});
      continue;
    }
    if (!given.empty() && o.shapes.count(in.name) == 0) {
      return fail(InputField::kFiles,
                  InvalidArgument("input '" + in.name + "' " + ValueInfoTypeString(in) +
                                  " is missing from the given inputs"));
    }
    auto dt = DTypeFromOnnx(in.elem_type);
    if (!dt.ok()) return dt.status().WithContext("input '" + in.name + "'");
    OP_ASSIGN_OR_RETURN(Shape shape, ResolveShape(in, o, &prep->notes));
    OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dt, shape));
    std::pair<double, double> range =
        IsFloating(*dt) ? std::make_pair(-1.0, 1.0) : std::make_pair(0.0, 10.0);
    if (auto r = o.ranges.find("*"); r != o.ranges.end()) range = r->second;
    if (auto r = o.ranges.find(in.name); r != o.ranges.end()) range = r->second;
    OP_RETURN_IF_ERROR(FillRandom(&t, range, o.seed * 1000003ULL + k));
    out.push_back({in.name, std::move(t)});
  }
  return out;
}

}  // namespace onnxprobe
