// Internal: the messages an isolated side and its child processes exchange over a Unix socket.
// A message is a fixed header (type, payload size, whether a descriptor rides along), a payload of
// little-endian fields, and at most one file descriptor (SCM_RIGHTS). Tensor bytes travel in a
// memfd that both processes map: a tensor is copied once, not twice through the socket.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/byte_codec.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/status.h"

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

// One tensor to send: a name, a value (may be null or empty) and why it was not captured.
struct TensorItem {
  const std::string* name = nullptr;
  const Tensor* tensor = nullptr;
  const SkipReason* skipped = nullptr;  // may be null
};

// Sending side of tensor transfers: a memfd mapped here. Its descriptor travels with the first
// message that uses it; later messages that reuse it name it by its generation.
class SharedRegion {
 public:
  uint64_t generation() const { return generation_; }
  // Grows (never shrinks) to at least `bytes`: a new memfd, which must be sent again. The old
  // mapping lives on while anything holds mapping() of it.
  Status Reserve(uint64_t bytes);
  const std::shared_ptr<uint8_t>& mapping() const { return map_; }
  uint64_t size() const { return size_; }

 private:
  friend Expected<int> PackTensors(const std::vector<TensorItem>&, SharedRegion*, Writer*,
                                   std::vector<uint64_t>*);
  UniqueFd fd_;
  std::shared_ptr<uint8_t> map_;
  uint64_t size_ = 0;
  uint64_t generation_ = 0;
  bool sent_ = false;
};

// The bytes PackTensors needs for `items`.
uint64_t PackedSize(const std::vector<TensorItem>& items);

// Writes the descriptors of `items` into `w` and their bytes into `region` at 64-byte aligned
// offsets (returned in `offsets` when asked; a tensor already at its place is not copied).
// Returns the descriptor that must travel with the message, or -1 when the peer has already
// mapped the region (or nothing has bytes).
Expected<int> PackTensors(const std::vector<TensorItem>& items, SharedRegion* region, Writer* w,
                          std::vector<uint64_t>* offsets = nullptr);

// The sender's regions for messages whose tensors the receiver releases when it is done: a
// region is written again only after the receiver has reported every tensor of it released.
// Reusing regions matters: fresh shared memory costs far more than the copy into it (allocating
// and zeroing every page, faulting it in on both sides, freeing it), 150 ms of CPU for 100 MB.
class RegionPool {
 public:
  // A region of at least `bytes` that the receiver no longer uses.
  Expected<SharedRegion*> Take(uint64_t bytes);
  // The receiver released every tensor of these regions (unknown generations are ignored).
  void Released(const std::vector<uint64_t>& generations);
  // Regions this pool destroyed since the last call; the receiver can unmap them.
  std::vector<uint64_t> TakeDropped();
  // Marks `generation` destroyed (a region of another owner, e.g. one rewritten in place).
  void Dropped(uint64_t generation) { dropped_.push_back(generation); }

 private:
  struct Entry {
    std::unique_ptr<SharedRegion> region;
    bool in_use = false;
  };
  std::vector<Entry> entries_;
  std::vector<uint64_t> dropped_;
};

enum class Reuse {
  kOnce,         // the region serves this message only: the tensors keep it mapped
  kPooled,       // the sender reuses it once the tensors are released (RegionPool)
  kOverwritten,  // the sender rewrites it in place with its next transfer into it
};

// Receiving side: maps what PackTensors sent.
class RegionMap {
 public:
  RegionMap();
  // Reads descriptors from `r`; `fd` is the descriptor that came with the message, if any.
  Expected<std::vector<RunOutput>> Unpack(Reader* r, UniqueFd fd, Reuse reuse);
  // Regions (kPooled) whose tensors have all been released since the last call.
  std::vector<uint64_t> TakeReleased();
  // The sender destroyed these regions: forget their mappings.
  void Forget(const std::vector<uint64_t>& generations);

 private:
  struct Released;
  std::map<uint64_t, std::pair<std::shared_ptr<uint8_t>, uint64_t>> cache_;  // mapping, size
  std::shared_ptr<Released> released_;
};

}  // namespace onnxprobe::wire
