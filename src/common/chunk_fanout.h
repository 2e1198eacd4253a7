// Internal: one read of a byte stream shared by several consumers, each on its own thread (file
// MD5, file SHA-256 and the model scan see the same chunks, so the file is read once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

// A consumer's view of the stream: every chunk, in order.
class ChunkStream {
 public:
  virtual ~ChunkStream() = default;
  // The next chunk; false at the end of the stream, or after a read failure (which the FanOut
  // call returns). The chunk stays valid until the next call.
  virtual bool Next(const uint8_t** data, size_t* size) = 0;
};

// A consumer may return before the end; the rest of the stream is then skipped for it.
using ChunkConsumer = std::function<void(ChunkStream&)>;

// Reads bytes [offset, offset + length) of `path` once through a small ring of buffers (a few
// MiB, never the whole range) and runs every consumer on its own thread over the same chunks.
// Fails naming the file when it cannot be opened, a read fails, or it is shorter than the range.
Status FanOutFile(const std::string& path, uint64_t offset, uint64_t length,
                  const std::vector<ChunkConsumer>& consumers);

// The same over bytes already in memory: consumers see slices of `data`, nothing is copied.
void FanOutMemory(const void* data, size_t size, const std::vector<ChunkConsumer>& consumers);

}  // namespace onnxprobe
