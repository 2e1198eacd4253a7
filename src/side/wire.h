// Internal: the messages an isolated side and its child processes exchange over a Unix socket.
// A message is a fixed header (type, payload size, whether a descriptor rides along), a payload of
// little-endian fields, and at most one file descriptor (SCM_RIGHTS). Tensor bytes travel in a
// memfd that both processes map: a tensor is copied once, not twice through the socket.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend.h"
#include "onnxprobe/status.h"

namespace onnxprobe::wire {

// A file descriptor closed when it goes out of scope.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

enum class MsgType : uint32_t {
  kClosed = 0,  // not sent: the peer closed the socket or died
  // keeper control
  kSpawn = 1,
  kSpawned,
  kReap,
  kReaped,
  // worker requests and replies
  kHello,
  kSetInputs,
  kFetch,
  kRunOther,
  kHash,
  kReply,
};

struct Message {
  MsgType type = MsgType::kClosed;
  std::string payload;
  UniqueFd fd;  // the descriptor that came with it, if any
};

// Sends one message (never raises SIGPIPE). Fails with kBackend; `peer_gone` tells whether the
// peer had closed the socket (or died).
Status Send(int sock, MsgType type, const std::string& payload, int fd = -1,
            bool* peer_gone = nullptr);
// Receives one message; type kClosed when the peer closed the socket or died.
Expected<Message> Receive(int sock);

// Sends a request and receives the reply: type kClosed when the peer is gone.
Expected<Message> Exchange(int sock, MsgType type, const std::string& payload, int fd = -1);

// Payload encoding. Reads past the end, or impossible sizes, make the Reader fail (sticky); the
// caller checks ok() once at the end.
class Writer {
 public:
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, sizeof v); }
  void U64(uint64_t v) { Raw(&v, sizeof v); }
  void I64(int64_t v) { Raw(&v, sizeof v); }
  void Str(const std::string& s) {
    U64(s.size());
    bytes_.append(s);
  }
  void Stat(const Status& s) {
    U32(static_cast<uint32_t>(s.code()));
    Str(s.message());
  }
  void Strings(const std::vector<std::string>& v) {
    U64(v.size());
    for (const auto& s : v) Str(s);
  }
  std::string& bytes() { return bytes_; }

 private:
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  uint8_t U8();
  uint32_t U32();
  uint64_t U64();
  int64_t I64();
  std::string Str();
  Status Stat();
  std::vector<std::string> Strings();
  // A count of items that each take at least `min_item_bytes` of what is left; 0 and failure when
  // the payload cannot hold that many.
  uint64_t Count(uint64_t min_item_bytes);
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == bytes_.size(); }
  // kCorrupt naming `what` unless every byte was read without running past the end.
  Status Finish(const std::string& what) const;

 private:
  bool Take(void* out, size_t n);
  const std::string& bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// One tensor to send: a name, a value (may be null or empty) and why it was not captured.
struct TensorItem {
  const std::string* name = nullptr;
  const Tensor* tensor = nullptr;
  const std::string* skipped = nullptr;  // may be null
};

// Sending side of tensor transfers: a memfd mapped here. A region kept between messages is
// rewritten in place by the next transfer (its descriptor travels once); a region used for one
// message is never written again after it is sent.
class SharedRegion {
 public:
  SharedRegion() = default;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();
  // Grows (never shrinks) to at least `bytes`: a new memfd, which must be sent again.
  Status Reserve(uint64_t bytes);
  uint8_t* data() const { return base_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_.get(); }

 private:
  friend Expected<int> PackTensors(const std::vector<TensorItem>&, SharedRegion*, Writer*);
  UniqueFd fd_;
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t generation_ = 0;
  bool sent_ = false;
};

// Writes the descriptors of `items` into `w` and their bytes into `region` (64-byte aligned
// offsets). Returns the descriptor that must travel with the message, or -1 when the peer has
// already mapped the region (or nothing has bytes).
Expected<int> PackTensors(const std::vector<TensorItem>& items, SharedRegion* region, Writer* w);

// Receiving side: maps what PackTensors sent.
class RegionMap {
 public:
  // Reads descriptors from `r`; `fd` is the descriptor that came with the message, if any. With
  // `alias` the region is kept mapped and the tensors point into it: the sender overwrites them
  // with its next transfer into the same region. Without it each message's region is mapped for
  // its own tensors only, which the sender never writes again.
  Expected<std::vector<RunOutput>> Unpack(Reader* r, UniqueFd fd, bool alias);

 private:
  std::shared_ptr<uint8_t> kept_;
  uint64_t kept_size_ = 0, kept_generation_ = 0;
};

}  // namespace onnxprobe::wire
