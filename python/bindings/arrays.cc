// Tensors as numpy arrays and back, sharing memory wherever the layout allows.
#include <cstring>
#include <vector>

#include "bindings.h"

namespace onnxprobe::python {
namespace {

py::dtype NumpyDType(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kBFloat16:  // converted (ToNumpy)
      return py::dtype::of<float>();
    case DType::kFloat16:
      return py::dtype("float16");
    case DType::kFloat64:
      return py::dtype::of<double>();
    case DType::kInt8:
      return py::dtype::of<int8_t>();
    case DType::kInt16:
      return py::dtype::of<int16_t>();
    case DType::kInt32:
      return py::dtype::of<int32_t>();
    case DType::kInt64:
      return py::dtype::of<int64_t>();
    case DType::kUInt8:
      return py::dtype::of<uint8_t>();
    case DType::kUInt16:
      return py::dtype::of<uint16_t>();
    case DType::kUInt32:
      return py::dtype::of<uint32_t>();
    case DType::kUInt64:
      return py::dtype::of<uint64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
  }
  return py::dtype::of<float>();
}

Expected<DType> FromNumpyDType(const py::dtype& dt, const std::string& what) {
  const auto size = dt.itemsize();
  switch (dt.kind()) {
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      break;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      break;
    case 'u':
      if (size == 1) return DType::kUInt8;
      if (size == 2) return DType::kUInt16;
      if (size == 4) return DType::kUInt32;
      if (size == 8) return DType::kUInt64;
      break;
    case 'b':
      if (size == 1) return DType::kBool;
      break;
    default:
      break;
  }
  std::string name = py::str(dt.attr("name"));
  if (name == "bfloat16" && size == 2) return DType::kBFloat16;  // ml_dtypes
  return InvalidArgument(what + ": numpy dtype " + name + " is not supported");
}

}  // namespace

py::array ToNumpy(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.dtype() == DType::kBFloat16) {
    py::array_t<float> out(shape);
    float* dst = out.mutable_data();
    const uint16_t* src = t.data_as<uint16_t>();
    for (uint64_t i = 0; i < t.num_elements(); ++i) dst[i] = BFloat16ToFloat(src[i]);
    return std::move(out);
  }
  if (t.empty()) return py::array(NumpyDType(t.dtype()), shape);
  auto* keep = new Tensor(t);  // shares the buffer; freed with the array
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(NumpyDType(t.dtype()), shape, keep->data(), owner);
}

Expected<Tensor> FromNumpy(py::handle obj, const std::string& what) {
  py::array arr = py::array::ensure(obj);
  if (!arr) return InvalidArgument(what + ": not convertible to a numpy array");
  OP_ASSIGN_OR_RETURN(DType dtype, FromNumpyDType(arr.dtype(), what));
  if (arr.dtype().byteorder() == '>')
    arr = arr.attr("astype")(arr.dtype().attr("newbyteorder")("="));
  // a copy only when the memory is not one C-ordered, aligned block
  arr = py::array::ensure(arr, py::array::c_style | py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (!arr) return InvalidArgument(what + ": cannot be made contiguous");
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  OP_RETURN_IF_ERROR(NumElements(shape).status());
  auto* data = static_cast<uint8_t*>(const_cast<void*>(arr.data()));
  auto* keep = new py::object(arr);
  std::shared_ptr<uint8_t> owner(data, [keep](uint8_t*) {
    py::gil_scoped_acquire gil;  // the last reference may drop where the GIL was released
    delete keep;
  });
  return Tensor::Wrap(dtype, std::move(shape), std::move(owner));
}

std::vector<NamedTensor> InputArrays(const py::dict& arrays) {
  std::vector<NamedTensor> tensors;
  for (auto [name, value] : arrays) {
    std::string n = py::str(name);
    tensors.push_back({n, Unwrap(FromNumpy(value, "input '" + n + "'"))});
  }
  return tensors;
}

}  // namespace onnxprobe::python
