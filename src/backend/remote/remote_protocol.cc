#include "backend/remote/remote_protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace onnxprobe::remote {
namespace {

Status WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return BackendError(std::string("writing to the worker: ") + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

// Reads exactly n bytes; false at a clean end of stream before the first byte.
Expected<bool> ReadAll(int fd, char* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = ::read(fd, p + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return BackendError(std::string("reading from the worker: ") + std::strerror(errno));
    if (k == 0) {
      if (got == 0) return false;
      return BackendError("the worker's stream ended inside a message");
    }
    got += static_cast<size_t>(k);
  }
  return true;
}

}  // namespace

Status WriteFrame(int fd, Op op, const std::string& payload) {
  char header[12];
  uint32_t type = static_cast<uint32_t>(op);
  uint64_t size = payload.size();
  std::memcpy(header, &type, 4);
  std::memcpy(header + 4, &size, 8);
  OP_RETURN_IF_ERROR(WriteAll(fd, header, sizeof header));
  return WriteAll(fd, payload.data(), payload.size());
}

Expected<Frame> ReadFrame(int fd, bool* closed) {
  if (closed != nullptr) *closed = false;
  char header[12];
  OP_ASSIGN_OR_RETURN(bool any, ReadAll(fd, header, sizeof header));
  if (!any) {
    if (closed != nullptr) *closed = true;
    return BackendError("closed");
  }
  uint32_t type;
  uint64_t size;
  std::memcpy(&type, header, 4);
  std::memcpy(&size, header + 4, 8);
  if (type < static_cast<uint32_t>(Op::kHello) || type > static_cast<uint32_t>(Op::kReply))
    return Corrupt("a frame of unknown type " + std::to_string(type) + " from the worker");
  if (size > (uint64_t(1) << 40)) return Corrupt("a frame of impossible size from the worker");
  Frame f;
  f.op = static_cast<Op>(type);
  f.payload.resize(size);
  OP_ASSIGN_OR_RETURN(bool whole, ReadAll(fd, f.payload.data(), size));
  if (!whole && size > 0) return BackendError("the worker's stream ended inside a message");
  return f;
}

void PutOptions(wire::Writer& w, const SessionOptions& o) {
  w.Str(o.provider);
  w.U64(o.provider_options.size());
  for (const auto& [k, v] : o.provider_options) {
    w.Str(k);
    w.Str(v);
  }
  w.Str(o.provider_library);
  w.I64(OptLevelNumber(o.optimization_level));
  w.U8(o.sequential);
  w.I64(o.intra_op_threads);
  w.I64(o.inter_op_threads);
  w.U8(o.low_memory);
  w.U64(o.config_entries.size());
  for (const auto& [k, v] : o.config_entries) {
    w.Str(k);
    w.Str(v);
  }
  w.Str(o.save_optimized_model);
  w.Strings(o.custom_op_libraries);
  w.U8(o.exact_kernels);
  w.U8(o.allow_fallback);
  w.Str(o.profile_prefix);
  w.U8(o.quiet);
}

SessionOptions GetOptions(wire::Reader& r) {
  SessionOptions o;
  o.provider = r.Str();
  for (uint64_t n = r.Count(16); n > 0; --n) {
    std::string k = r.Str();
    o.provider_options[k] = r.Str();
  }
  o.provider_library = r.Str();
  auto level = OptLevelFromNumber(static_cast<double>(r.I64()));
  o.optimization_level = level.ok() ? *level : OptLevel::kDisabled;
  o.sequential = r.U8() != 0;
  o.intra_op_threads = static_cast<int>(r.I64());
  o.inter_op_threads = static_cast<int>(r.I64());
  o.low_memory = r.U8() != 0;
  for (uint64_t n = r.Count(16); n > 0; --n) {
    std::string k = r.Str();
    o.config_entries[k] = r.Str();
  }
  o.save_optimized_model = r.Str();
  o.custom_op_libraries = r.Strings();
  o.exact_kernels = r.U8() != 0;
  o.allow_fallback = r.U8() != 0;
  o.profile_prefix = r.Str();
  o.quiet = r.U8() != 0;
  return o;
}

void PutTensor(wire::Writer& w, const Tensor& t) {
  w.U8(static_cast<uint8_t>(t.dtype()));
  w.U64(t.shape().size());
  for (int64_t d : t.shape()) w.I64(d);
  w.Str(std::string(static_cast<const char*>(t.data()), t.byte_size()));
}

Expected<Tensor> GetTensor(wire::Reader& r) {
  auto dtype = static_cast<DType>(r.U8());
  Shape shape(r.Count(sizeof(int64_t)));
  for (auto& d : shape) d = r.I64();
  std::string bytes = r.Str();
  if (!r.ok()) return Corrupt("a tensor message from the worker is cut short");
  auto need = NumBytes(dtype, shape);
  if (!need.ok() || *need != bytes.size())
    return Corrupt("a tensor from the worker holds " + std::to_string(bytes.size()) +
                   " bytes, not what its dtype and shape need");
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (!bytes.empty()) std::memcpy(t.data(), bytes.data(), bytes.size());
  return t;
}

void PutOutputs(wire::Writer& w, const std::vector<RunOutput>& outputs) {
  w.U64(outputs.size());
  for (const auto& o : outputs) {
    w.Str(o.name);
    w.U8(static_cast<uint8_t>(o.skipped.kind));
    w.Str(o.skipped.detail);
    w.U8(!o.tensor.empty());
    if (!o.tensor.empty()) PutTensor(w, o.tensor);
  }
}

Expected<std::vector<RunOutput>> GetOutputs(wire::Reader& r) {
  std::vector<RunOutput> out(r.Count(16));
  for (auto& o : out) {
    o.name = r.Str();
    uint8_t kind = r.U8();
    if (kind > static_cast<uint8_t>(SkipKind::kLast))
      return Corrupt("an output of the worker has an unknown skip reason");
    o.skipped.kind = static_cast<SkipKind>(kind);
    o.skipped.detail = r.Str();
    if (r.U8() != 0) {
      OP_ASSIGN_OR_RETURN(o.tensor, GetTensor(r));
    }
  }
  OP_RETURN_IF_ERROR(r.Finish("the worker's outputs"));
  return out;
}

}  // namespace onnxprobe::remote
