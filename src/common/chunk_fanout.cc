#include "common/chunk_fanout.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace onnxprobe {
namespace {

// 4 MiB chunks amortize the hand-over between threads; six of them let the reader run ahead of
// the slowest consumer (MD5) without holding more than 24 MiB.
constexpr size_t kChunkBytes = size_t{4} << 20;
constexpr size_t kSlots = 6;

struct Ring {
  std::mutex mu;
  std::condition_variable published_cv, released_cv;
  std::unique_ptr<uint8_t[]> buffers[kSlots];
  size_t lengths[kSlots] = {};
  int holders[kSlots] = {};  // consumers that have not finished the chunk in this slot
  uint64_t published = 0;    // chunks handed out so far
  bool finished = false;     // no chunk will follow (end of range or read failure)
};

class RingStream : public ChunkStream {
 public:
  explicit RingStream(Ring* ring) : ring_(ring) {}

  bool Next(const uint8_t** data, size_t* size) override {
    std::unique_lock<std::mutex> lock(ring_->mu);
    Release();
    ring_->published_cv.wait(lock, [&] { return ring_->published > next_ || ring_->finished; });
    if (ring_->published <= next_) return false;
    size_t slot = next_ % kSlots;
    *data = ring_->buffers[slot].get();
    *size = ring_->lengths[slot];
    ++next_;
    holding_ = true;
    return true;
  }

  // Lets the reader reuse every slot this consumer still holds or has not reached.
  void Drain() {
    const uint8_t* d;
    size_t n;
    while (Next(&d, &n)) {
    }
  }

 private:
  void Release() {  // with ring_->mu held
    if (!holding_) return;
    holding_ = false;
    if (--ring_->holders[(next_ - 1) % kSlots] == 0) ring_->released_cv.notify_all();
  }

  Ring* ring_;
  uint64_t next_ = 0;
  bool holding_ = false;
};

class SliceStream : public ChunkStream {
 public:
  SliceStream(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  bool Next(const uint8_t** data, size_t* size) override {
    if (left_ == 0) return false;
    *data = p_;
    *size = std::min(left_, kChunkBytes);
    p_ += *size;
    left_ -= *size;
    return true;
  }

 private:
  const uint8_t* p_;
  size_t left_;
};

// Fills `buf` from `fd` at `offset`; returns the bytes read (short only at end of file), or -1.
ssize_t ReadFully(int fd, uint8_t* buf, size_t size, uint64_t offset) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = pread(fd, buf + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

Status FanOutFile(const std::string& path, uint64_t offset, uint64_t length,
                  const std::vector<ChunkConsumer>& consumers) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_SEQUENTIAL);
  Ring ring;
  std::vector<std::thread> threads;
  for (const auto& consume : consumers) {
    threads.emplace_back([&ring, &consume] {
      RingStream stream(&ring);
      consume(stream);
      stream.Drain();
    });
  }
  Status status;
  for (uint64_t done = 0, chunk = 0; done < length; ++chunk) {
    size_t slot = chunk % kSlots;
    {
      std::unique_lock<std::mutex> lock(ring.mu);
      ring.released_cv.wait(lock, [&] { return ring.holders[slot] == 0; });
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, length - done));
    if (!ring.buffers[slot]) ring.buffers[slot] = std::make_unique<uint8_t[]>(want);
    ssize_t got = ReadFully(fd, ring.buffers[slot].get(), want, offset + done);
    if (got < 0) {
      status = IoError(path + ": read failed (" + std::strerror(errno) + ")");
      break;
    }
    if (static_cast<size_t>(got) < want) {
      status =
          IoError(path + ": ended at byte " + std::to_string(offset + done + got) + ", expected " +
                  std::to_string(offset + length) + " (did the file change while it was read?)");
      break;
    }
    std::lock_guard<std::mutex> lock(ring.mu);
    ring.lengths[slot] = want;
    ring.holders[slot] = static_cast<int>(consumers.size());
    ++ring.published;
    done += want;
    ring.published_cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(ring.mu);
    ring.finished = true;
    ring.published_cv.notify_all();
  }
  for (auto& t : threads) t.join();
  close(fd);
  return status;
}

void FanOutMemory(const void* data, size_t size, const std::vector<ChunkConsumer>& consumers) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  std::vector<std::thread> threads;
  for (size_t i = 1; i < consumers.size(); ++i) {
    threads.emplace_back([&, i] {
      SliceStream stream(bytes, size);
      consumers[i](stream);
    });
  }
  if (!consumers.empty()) {
    SliceStream stream(bytes, size);
    consumers[0](stream);
  }
  for (auto& t : threads) t.join();
}

}  // namespace onnxprobe
