// Non-tensor outputs (sequences, maps) as one tensor, so that they compare by value.
#include "backend/ort/ort_values.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace onnxprobe {
namespace {

// An OrtValue released when it goes out of scope.
struct Held {
  const OrtApi* api;
  OrtValue* v = nullptr;
  ~Held() {
    if (v != nullptr) api->ReleaseValue(v);
  }
};

// A tensor OrtValue's element type, shape and data (the data stays the value's).
struct View {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  Shape shape;
  const uint8_t* data = nullptr;
  uint64_t count = 0;
};

Expected<View> ViewOf(const OrtApi* api, OrtValue* v, const std::string& what) {
  ONNXType t;
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetValueType(v, &t), what));
  if (t != ONNX_TYPE_TENSOR) return Unsupported(what + " holds a non-tensor element");
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetTensorTypeAndShape(v, &info), what));
  View out;
  size_t rank = 0;
  Status st = FromOrt(api, api->GetTensorElementType(info, &out.type), what);
  if (st.ok()) st = FromOrt(api, api->GetDimensionsCount(info, &rank), what);
  out.shape.resize(rank);
  if (st.ok()) st = FromOrt(api, api->GetDimensions(info, out.shape.data(), rank), what);
  api->ReleaseTensorTypeAndShapeInfo(info);
  OP_RETURN_IF_ERROR(st);
  if (out.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) return Unsupported(what + " holds strings");
  out.count = 1;
  for (auto d : out.shape) out.count *= uint64_t(std::max<int64_t>(d, 0));
  void* data = nullptr;
  if (out.count > 0) OP_RETURN_IF_ERROR(FromOrt(api, api->GetTensorMutableData(v, &data), what));
  out.data = static_cast<const uint8_t*>(data);
  return out;
}

// A tensor view's values as float64, and their dtype.
Expected<std::vector<double>> Doubles(const View& v, DType* dtype) {
  OP_ASSIGN_OR_RETURN(*dtype, DTypeFromOnnx(int(v.type)));
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dtype, Shape{int64_t(v.count)}));
  if (v.count > 0) std::memcpy(t.data(), v.data, t.byte_size());
  std::vector<double> out(v.count);
  for (uint64_t i = 0; i < v.count; ++i) out[i] = ElementAsDouble(t, i);
  return out;
}

// A map's values in the order of its keys (numeric keys sorted; a map with string keys keeps the
// runtime's order, the same for one model on both sides), as float64 per value.
Expected<std::vector<double>> MapValues(const OrtApi* api, OrtAllocator* alloc, OrtValue* map,
                                        const std::string& what, DType* dtype) {
  Held keys{api}, values{api};
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetValue(map, 0, alloc, &keys.v), what));
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetValue(map, 1, alloc, &values.v), what));
  OP_ASSIGN_OR_RETURN(View vv, ViewOf(api, values.v, what + " values"));
  OP_ASSIGN_OR_RETURN(std::vector<double> out, Doubles(vv, dtype));
  auto kv = ViewOf(api, keys.v, what + " keys");
  if (!kv.ok() || kv->count != vv.count) return out;  // string keys: the runtime's order
  DType kt;
  OP_ASSIGN_OR_RETURN(std::vector<double> k, Doubles(*kv, &kt));
  std::vector<size_t> order(vv.count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return k[a] < k[b]; });
  std::vector<double> sorted;
  for (size_t i : order) sorted.push_back(out[i]);
  return sorted;
}

template <typename T>
void Fill(Tensor* t, const std::vector<double>& v) {
  T* p = t->data_as<T>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
}

// The values in `dt` where it is float32, float64, int64 or int32 (exact for what float64
// holds: integers up to 2^53), else in float64.
Expected<Tensor> FromDoubles(DType dt, Shape shape, const std::vector<double>& v) {
  if (dt != DType::kFloat32 && dt != DType::kInt64 && dt != DType::kInt32) dt = DType::kFloat64;
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, std::move(shape)));
  switch (dt) {
    case DType::kFloat32:
      Fill<float>(&t, v);
      break;
    case DType::kInt64:
      Fill<int64_t>(&t, v);
      break;
    case DType::kInt32:
      Fill<int32_t>(&t, v);
      break;
    default:
      Fill<double>(&t, v);
  }
  return t;
}

}  // namespace

Expected<Tensor> FlattenValue(const OrtApi* api, OrtValue* v, const std::string& what) {
  ONNXType type;
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetValueType(v, &type), what));
  OrtAllocator* alloc = nullptr;
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetAllocatorWithDefaultOptions(&alloc), what));
  if (type == ONNX_TYPE_MAP) {
    DType dt = DType::kFloat32;
    OP_ASSIGN_OR_RETURN(auto values, MapValues(api, alloc, v, what, &dt));
    return FromDoubles(dt, Shape{int64_t(values.size())}, values);
  }
  if (type != ONNX_TYPE_SEQUENCE) return Unsupported(what + " is an optional or opaque value");
  size_t n = 0;
  OP_RETURN_IF_ERROR(FromOrt(api, api->GetValueCount(v, &n), what));
  std::vector<double> all;
  DType dt = DType::kFloat32;
  int64_t width = -1;  // values per element, when every element has as many
  for (size_t i = 0; i < n; ++i) {
    Held e{api};
    OP_RETURN_IF_ERROR(FromOrt(api, api->GetValue(v, int(i), alloc, &e.v), what));
    ONNXType et;
    OP_RETURN_IF_ERROR(FromOrt(api, api->GetValueType(e.v, &et), what));
    std::vector<double> part;
    DType pt = DType::kFloat32;
    const std::string elem = what + " element " + std::to_string(i);
    if (et == ONNX_TYPE_MAP) {
      OP_ASSIGN_OR_RETURN(part, MapValues(api, alloc, e.v, elem, &pt));
    } else {
      OP_ASSIGN_OR_RETURN(View ev, ViewOf(api, e.v, elem));
      OP_ASSIGN_OR_RETURN(part, Doubles(ev, &pt));
    }
    if (i > 0 && pt != dt) return Unsupported(what + " mixes element types");
    dt = pt;
    width = i == 0 ? int64_t(part.size()) : (width == int64_t(part.size()) ? width : -1);
    all.insert(all.end(), part.begin(), part.end());
  }
  Shape shape = width >= 0 ? Shape{int64_t(n), width} : Shape{int64_t(all.size())};
  return FromDoubles(dt, shape, all);
}

}  // namespace onnxprobe
