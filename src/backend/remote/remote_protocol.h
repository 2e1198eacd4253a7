// Internal: what a platform worker (src/backend/remote/worker_main.cc) and the host's
// RemoteBackend exchange over a byte stream (the worker's stdin and stdout). Unlike the isolated
// side's wire (Unix socket, shared memory), a stream reaches a process under qemu-user as well
// as one behind any command prefix, so tensors travel inline. A frame is a u32 type, a u64
// payload size and the payload (wire::Writer's little-endian fields).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/byte_codec.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe::remote {

// Bumped whenever a message changes: a worker of another version is refused by name.
inline constexpr uint32_t kProtocolVersion = 2;

enum class Op : uint32_t {
  kHello = 1,     // -> protocol version, runtime name, version, library, providers, machine
  kCreate,        // model bytes, folder, options -> session id, input names, output names
  kRun,           // session id, inputs, output names -> outputs
  kRelease,       // session id -> nothing
  kTakeLog,       // -> the runtime's log lines
  kEndProfiling,  // session id -> the trace file's path
  kReply,         // every answer: a Status first, then the op's fields when it is ok
};

struct Frame {
  Op op = Op::kReply;
  std::string payload;
};

// Writes one frame; kBackend with the OS reason when the peer is gone.
Status WriteFrame(int fd, Op op, const std::string& payload);
// Reads one frame; kBackend "closed" (`*closed` set) at the end of the stream.
Expected<Frame> ReadFrame(int fd, bool* closed = nullptr);

void PutOptions(wire::Writer& w, const SessionOptions& o);
SessionOptions GetOptions(wire::Reader& r);

// Tensors with their names and skip reasons, bytes inline.
void PutTensor(wire::Writer& w, const Tensor& t);
Expected<Tensor> GetTensor(wire::Reader& r);
void PutOutputs(wire::Writer& w, const std::vector<RunOutput>& outputs);
Expected<std::vector<RunOutput>> GetOutputs(wire::Reader& r);

}  // namespace onnxprobe::remote
