// Framing over a Unix stream socket, payload fields, and tensors through shared memory.
#include "side/wire.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

namespace onnxprobe::wire {
namespace {

struct Header {
  uint32_t type;
  uint32_t has_fd;
  uint64_t size;
};

constexpr uint64_t kAlign = 64;
constexpr uint64_t kMaxPayload = uint64_t(1) << 40;  // a sanity bound, never reached in practice

enum class Got { kAll, kEnd };  // kEnd: the peer closed the socket or died

// Writes all of `n` bytes; the first sendmsg carries `fd` when there is one.
Status SendAll(int sock, const char* p, size_t n, int fd, bool* peer_gone) {
  while (n > 0) {
    struct iovec iov = {const_cast<char*>(p), n};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(struct cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
    if (fd >= 0) {
      std::memset(ctrl, 0, sizeof ctrl);
      mh.msg_control = ctrl;
      mh.msg_controllen = sizeof ctrl;
      struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) {
        if (peer_gone != nullptr) *peer_gone = true;
        return BackendError("the other process is gone");
      }
      return BackendError(std::string("sending to another process: ") + std::strerror(errno));
    }
    fd = -1;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

// Reads exactly `n` bytes, or reports that the peer is gone.
Expected<Got> RecvAll(int sock, char* p, size_t n, UniqueFd* fd) {
  size_t got = 0;
  while (got < n) {
    struct iovec iov = {p + got, n - got};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(struct cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
    mh.msg_control = ctrl;
    mh.msg_controllen = sizeof ctrl;
    ssize_t k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) return Got::kEnd;
      return BackendError(std::string("receiving from another process: ") + std::strerror(errno));
    }
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int received = -1;
        std::memcpy(&received, CMSG_DATA(c), sizeof(int));
        if (fd != nullptr && !fd->valid()) {
          fd->reset(received);
        } else {
          close(received);
        }
      }
    }
    if (k == 0) return Got::kEnd;  // possibly in the middle of a message
    got += static_cast<size_t>(k);
  }
  return Got::kAll;
}

void Unmap(uint8_t* p, uint64_t n) {
  if (p != nullptr && n > 0) munmap(p, n);
}

Expected<uint8_t*> Map(int fd, uint64_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    return ResourceExhausted("mapping " + std::to_string(size) +
                             " bytes of shared memory: " + std::strerror(errno));
  }
  return static_cast<uint8_t*>(p);
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

Status Send(int sock, MsgType type, const std::string& payload, int fd, bool* peer_gone) {
  if (peer_gone != nullptr) *peer_gone = false;
  Header h{static_cast<uint32_t>(type), fd >= 0 ? 1u : 0u, payload.size()};
  OP_RETURN_IF_ERROR(SendAll(sock, reinterpret_cast<const char*>(&h), sizeof h, fd, peer_gone));
  return SendAll(sock, payload.data(), payload.size(), -1, peer_gone);
}

Expected<Message> Receive(int sock) {
  Message m;
  Header h{};
  OP_ASSIGN_OR_RETURN(Got got, RecvAll(sock, reinterpret_cast<char*>(&h), sizeof h, &m.fd));
  if (got == Got::kEnd) return Message();
  if (h.type == 0 || h.size > kMaxPayload)
    return Corrupt("malformed message from the child process");
  m.type = static_cast<MsgType>(h.type);
  try {
    m.payload.resize(h.size);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("a message of " + std::to_string(h.size) +
                             " bytes does not fit in memory");
  }
  if (h.size > 0) {
    OP_ASSIGN_OR_RETURN(Got body, RecvAll(sock, m.payload.data(), h.size, nullptr));
    if (body == Got::kEnd) return Message();
  }
  if (h.has_fd && !m.fd.valid()) return Corrupt("a message lost its file descriptor");
  return m;
}

Expected<Message> Exchange(int sock, MsgType type, const std::string& payload, int fd) {
  bool gone = false;
  Status sent = Send(sock, type, payload, fd, &gone);
  if (!sent.ok()) {
    if (gone) return Message();
    return sent;
  }
  return Receive(sock);
}

Status SharedRegion::Reserve(uint64_t bytes) {
  if (bytes <= size_) return Status::Ok();
  static std::atomic<uint64_t> generations{0};
  UniqueFd fd(memfd_create("onnxprobe-tensors", MFD_CLOEXEC));
  if (!fd.valid())
    return ResourceExhausted(std::string("creating shared memory: ") + std::strerror(errno));
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return ResourceExhausted("sizing shared memory to " + std::to_string(bytes) +
                             " bytes: " + std::strerror(errno));
  }
  OP_ASSIGN_OR_RETURN(uint8_t * base, Map(fd.get(), bytes));
  fd_ = std::move(fd);
  map_ = std::shared_ptr<uint8_t>(base, [bytes](uint8_t* p) { Unmap(p, bytes); });
  size_ = bytes;
  generation_ = ++generations;
  sent_ = false;
  return Status::Ok();
}

uint64_t PackedSize(const std::vector<TensorItem>& items) {
  uint64_t total = 0;
  for (const auto& it : items) {
    const Tensor* t = it.tensor;
    if (t != nullptr && !t->empty()) total += (t->byte_size() + kAlign - 1) / kAlign * kAlign;
  }
  return total;
}

Expected<int> PackTensors(const std::vector<TensorItem>& items, SharedRegion* region, Writer* w,
                          std::vector<uint64_t>* offsets_out) {
  uint64_t total = 0;
  std::vector<uint64_t> offsets(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor* t = items[i].tensor;
    if (t == nullptr || t->empty() || t->byte_size() == 0) continue;
    offsets[i] = total;
    total += (t->byte_size() + kAlign - 1) / kAlign * kAlign;
  }
  if (total > 0) OP_RETURN_IF_ERROR(region->Reserve(total));
  w->U64(total > 0 ? region->generation_ : 0);
  w->U64(total > 0 ? region->size_ : 0);
  w->U64(items.size());
  uint8_t* base = region->map_.get();
  for (size_t i = 0; i < items.size(); ++i) {
    const TensorItem& it = items[i];
    w->Str(*it.name);
    w->U8(static_cast<uint8_t>(it.skipped != nullptr ? it.skipped->kind : SkipKind::kNone));
    w->Str(it.skipped != nullptr ? it.skipped->detail : std::string());
    const Tensor* t = it.tensor;
    bool has = t != nullptr && !t->empty();
    w->U8(has ? 1 : 0);
    if (!has) continue;
    w->U8(static_cast<uint8_t>(t->dtype()));
    w->U64(t->shape().size());
    for (int64_t d : t->shape()) w->I64(d);
    w->U64(offsets[i]);
    if (t->byte_size() > 0 && t->data() != base + offsets[i])
      std::memcpy(base + offsets[i], t->data(), t->byte_size());
  }
  if (offsets_out != nullptr) *offsets_out = std::move(offsets);
  if (total == 0 || region->sent_) return -1;
  region->sent_ = true;
  return region->fd_.get();
}

Expected<SharedRegion*> RegionPool::Take(uint64_t bytes) {
  Entry* best = nullptr;
  for (auto& e : entries_) {
    if (!e.in_use && e.region->size() >= bytes &&
        (best == nullptr || e.region->size() < best->region->size()))
      best = &e;
  }
  if (best == nullptr) {
    // none fits: a new region, and the free ones that are too small go
    size_t kept = 0;
    for (auto& e : entries_) {
      if (!e.in_use) dropped_.push_back(e.region->generation());
      if (e.in_use) entries_[kept++] = std::move(e);
    }
    entries_.resize(kept);
    auto region = std::make_unique<SharedRegion>();
    OP_RETURN_IF_ERROR(region->Reserve(bytes));
    entries_.push_back({std::move(region), false});
    best = &entries_.back();
  }
  best->in_use = true;
  return best->region.get();
}

void RegionPool::Released(const std::vector<uint64_t>& generations) {
  for (uint64_t g : generations) {
    for (auto& e : entries_) {
      if (e.region->generation() == g) e.in_use = false;
    }
  }
  // keep the two largest free regions, whose pages are ready for the next messages
  constexpr size_t kKeepFree = 2;
  std::vector<size_t> free;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].in_use) free.push_back(i);
  }
  if (free.size() <= kKeepFree) return;
  std::sort(free.begin(), free.end(), [&](size_t a, size_t b) {
    return entries_[a].region->size() > entries_[b].region->size();
  });
  std::vector<char> drop(entries_.size(), 0);
  for (size_t k = kKeepFree; k < free.size(); ++k) drop[free[k]] = 1;
  size_t kept = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (drop[i]) {
      dropped_.push_back(entries_[i].region->generation());
    } else {
      entries_[kept++] = std::move(entries_[i]);
    }
  }
  entries_.resize(kept);
}

std::vector<uint64_t> RegionPool::TakeDropped() {
  std::vector<uint64_t> out;
  out.swap(dropped_);
  return out;
}

struct RegionMap::Released {
  std::mutex mu;
  std::vector<uint64_t> generations;
};

RegionMap::RegionMap() : released_(std::make_shared<Released>()) {}

std::vector<uint64_t> RegionMap::TakeReleased() {
  std::lock_guard<std::mutex> lock(released_->mu);
  std::vector<uint64_t> out;
  out.swap(released_->generations);
  return out;
}

void RegionMap::Forget(const std::vector<uint64_t>& generations) {
  for (uint64_t g : generations) cache_.erase(g);
}

Expected<std::vector<RunOutput>> RegionMap::Unpack(Reader* r, UniqueFd fd, Reuse reuse) {
  uint64_t generation = r->U64(), size = r->U64();
  uint64_t n = r->Count(2 * sizeof(uint64_t) + 1);
  if (!r->ok()) return Corrupt("malformed tensor list from the child process");
  std::shared_ptr<uint8_t> base;
  if (fd.valid()) {
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || static_cast<uint64_t>(st.st_size) < size || size == 0)
      return Corrupt("shared memory from the child process is smaller than announced");
    OP_ASSIGN_OR_RETURN(uint8_t * p, Map(fd.get(), size));
    base = std::shared_ptr<uint8_t>(p, [size](uint8_t* q) { Unmap(q, size); });
    if (reuse != Reuse::kOnce) cache_[generation] = {base, size};
  } else if (size > 0) {
    auto it = cache_.find(generation);
    if (reuse == Reuse::kOnce || it == cache_.end() || it->second.second != size)
      return Corrupt("tensors from the child process refer to shared memory never sent");
    base = it->second.first;
  }
  if (base != nullptr && reuse == Reuse::kPooled) {
    // the tensors share one lease: when the last goes, the region is reported released
    auto released = released_;
    auto mapping = base;
    base = std::shared_ptr<uint8_t>(mapping.get(), [mapping, released, generation](uint8_t*) {
      std::lock_guard<std::mutex> lock(released->mu);
      released->generations.push_back(generation);
    });
  }
  std::vector<RunOutput> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    RunOutput o;
    o.name = r->Str();
    uint8_t kind = r->U8();
    if (kind > static_cast<uint8_t>(SkipKind::kLast))
      return Corrupt("malformed tensor list from the child process");
    o.skipped.kind = static_cast<SkipKind>(kind);
    o.skipped.detail = r->Str();
    if (r->U8() != 0) {
      uint8_t dt = r->U8();
      uint64_t rank = r->Count(sizeof(int64_t));
      Shape shape(rank);
      for (auto& d : shape) d = r->I64();
      uint64_t offset = r->U64();
      if (!r->ok() || dt > static_cast<uint8_t>(DType::kBool))
        return Corrupt("malformed tensor '" + o.name + "' from the child process");
      DType dtype = static_cast<DType>(dt);
      OP_ASSIGN_OR_RETURN(uint64_t bytes, NumBytes(dtype, shape));
      if (bytes == 0) {
        OP_ASSIGN_OR_RETURN(o.tensor, Tensor::Allocate(dtype, shape));
      } else {
        if (base == nullptr || offset > size || bytes > size - offset)
          return Corrupt("tensor '" + o.name + "' lies outside the shared memory it came in");
        // an aliasing pointer: the mapping lives as long as any tensor in it
        o.tensor = Tensor::Wrap(dtype, std::move(shape),
                                std::shared_ptr<uint8_t>(base, base.get() + offset));
      }
    }
    out.push_back(std::move(o));
  }
  if (!r->ok()) return Corrupt("malformed tensor list from the child process");
  return out;
}

}  // namespace onnxprobe::wire
