#include "onnxprobe/tensor/tensor_proto.h"

#include <cstring>

#include "common/file_util.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {
namespace {

template <typename Src, typename Dst>
void CopyCast(const Src& field, Dst* out) {
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

// Fills `t` from the typed repeated fields, checking their length against the element count.
Status FromTypedFields(const onnx::TensorProto& p, Tensor* t, const std::string& what) {
  uint64_t n = t->num_elements();
  auto check = [&](int have) -> Status {
    if (uint64_t(have) != n) {
      return Corrupt(what + ": tensor has " + std::to_string(have) + " values, expected " +
                     std::to_string(n) + " for shape " + ShapeToString(t->shape()));
    }
    return Status::Ok();
  };
  switch (t->dtype()) {
    case DType::kFloat32:
      OP_RETURN_IF_ERROR(check(p.float_data_size()));
      CopyCast(p.float_data(), t->data_as<float>());
      break;
    case DType::kFloat64:
      OP_RETURN_IF_ERROR(check(p.double_data_size()));
      CopyCast(p.double_data(), t->data_as<double>());
      break;
    case DType::kInt64:
      OP_RETURN_IF_ERROR(check(p.int64_data_size()));
      CopyCast(p.int64_data(), t->data_as<int64_t>());
      break;
    case DType::kUInt32:
      OP_RETURN_IF_ERROR(check(p.uint64_data_size()));
      CopyCast(p.uint64_data(), t->data_as<uint32_t>());
      break;
    case DType::kUInt64:
      OP_RETURN_IF_ERROR(check(p.uint64_data_size()));
      CopyCast(p.uint64_data(), t->data_as<uint64_t>());
      break;
    case DType::kInt32:
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      CopyCast(p.int32_data(), t->data_as<int32_t>());
      break;
    case DType::kInt8:
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      CopyCast(p.int32_data(), t->data_as<int8_t>());
      break;
    case DType::kInt16:
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      CopyCast(p.int32_data(), t->data_as<int16_t>());
      break;
    case DType::kUInt8:
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      CopyCast(p.int32_data(), t->data_as<uint8_t>());
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:  // 16-bit types keep their bit pattern in int32_data
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      CopyCast(p.int32_data(), t->data_as<uint16_t>());
      break;
    case DType::kBool: {
      OP_RETURN_IF_ERROR(check(p.int32_data_size()));
      auto* b = t->data_as<uint8_t>();
      for (int i = 0; i < p.int32_data_size(); ++i) b[i] = p.int32_data(i) != 0;
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

Expected<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::string& what,
                                 const std::string* external_bytes) {
  auto dt = DTypeFromOnnx(p.data_type());
  if (!dt.ok()) return dt.status().WithContext(what);
  Shape shape(p.dims().begin(), p.dims().end());
  auto bytes = NumBytes(*dt, shape);
  if (!bytes.ok()) return bytes.status().WithContext(what);
  bool external = p.data_location() == onnx::TensorProto::EXTERNAL;
  if (external && external_bytes == nullptr) {
    return Unsupported(what + ": tensor data is stored externally");
  }
  const std::string* raw = external ? external_bytes : (p.has_raw_data() ? &p.raw_data() : nullptr);
  if (raw != nullptr && raw->size() != *bytes) {
    return Corrupt(what + ": raw data is " + std::to_string(raw->size()) + " bytes, expected " +
                   std::to_string(*bytes) + " for " + DTypeName(*dt) + " " + ShapeToString(shape));
  }
  if (raw == nullptr) {
    // typed fields: check the value count before allocating what the dims claim
    uint64_t have = 0;
    switch (*dt) {
      case DType::kFloat32:
        have = uint64_t(p.float_data_size());
        break;
      case DType::kFloat64:
        have = uint64_t(p.double_data_size());
        break;
      case DType::kInt64:
        have = uint64_t(p.int64_data_size());
        break;
      case DType::kUInt32:
      case DType::kUInt64:
        have = uint64_t(p.uint64_data_size());
        break;
      default:
        have = uint64_t(p.int32_data_size());
        break;
    }
    if (have != *bytes / DTypeSize(*dt)) {
      return Corrupt(what + ": tensor has " + std::to_string(have) + " values, expected " +
                     std::to_string(*bytes / DTypeSize(*dt)) + " for shape " +
                     ShapeToString(shape));
    }
  }
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*dt, shape));
  if (raw != nullptr) {
    if (*bytes > 0) std::memcpy(t.data(), raw->data(), *bytes);
    return t;
  }
  OP_RETURN_IF_ERROR(FromTypedFields(p, &t, what));
  return t;
}

void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->Clear();
  p->set_name(name);
  p->set_data_type(DTypeToOnnx(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.byte_size()));
}

Expected<NamedTensor> ParseTensorProto(const std::string& bytes, const std::string& what) {
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes))
    return Corrupt(what + ": not a valid TensorProto (protobuf parse failed)");
  OP_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p, what));
  return NamedTensor{p.name(), std::move(t)};
}

Expected<NamedTensor> ReadTensorProto(const std::string& path) {
  OP_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseTensorProto(bytes, path);
}

std::string SerializeTensorProto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  TensorToProto(t, name, &p);
  return p.SerializeAsString();
}

Status WriteTensorProto(const std::string& path, const Tensor& t, const std::string& name) {
  return WriteFileAtomic(path, SerializeTensorProto(t, name));
}

}  // namespace onnxprobe
