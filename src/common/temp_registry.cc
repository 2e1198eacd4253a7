// Live temporaries and their removal on SIGINT/SIGTERM/SIGHUP. Paths sit in preallocated slots so
// the signal handler allocates nothing; it uses only system calls (unlink, openat, getdents64,
// unlinkat) to remove files and empty folders, then re-raises the signal with its default action.
#include "common/temp_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "onnxprobe/common/cleanup.h"

namespace onnxprobe {
namespace {

// Temporaries alive at once: a dump folder, the file being written into it, a report or two,
// per thread that writes. Beyond this, new temporaries are simply not tracked.
constexpr int kSlots = 128;
constexpr int kMaxDepth = 16;  // folder nesting the handler descends into

enum : int { kFree = 0, kLive = 1, kRemoving = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

Slot g_slots[kSlots];
// Serializes registration between threads; the handler never takes it (it claims a live slot
// with a compare-exchange instead, after which no thread rewrites that slot).
std::mutex g_mutex;

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

void RemoveAt(int dirfd, const char* name, int depth);

// Removes every entry of the open folder `fd`. Rescans from the start after a pass that removed
// something, since removing entries while reading a folder may skip others.
void EmptyFolder(int fd, int depth) {
  alignas(8) char buf[2048];
  for (int pass = 0; pass < 64; ++pass) {
    bool removed = false;
    if (lseek(fd, 0, SEEK_SET) != 0) return;
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
        off += d->d_reclen;
        if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
        RemoveAt(fd, d->d_name, depth + 1);
        removed = true;
      }
    }
    if (!removed) return;
  }
}

// Removes `name` in folder `dirfd`: a file (or link) directly, a folder after emptying it.
void RemoveAt(int dirfd, const char* name, int depth) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) return;  // Linux says EISDIR, POSIX allows EPERM
  if (depth > kMaxDepth) return;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  EmptyFolder(fd, depth);
  close(fd);
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

extern "C" void OnTerminatingSignal(int sig) {
  int saved_errno = errno;
  RemoveLiveTemporaries();
  // SA_RESETHAND restored the default action; `sig` stays blocked until this handler returns,
  // and is then delivered again with that action, ending the process.
  raise(sig);
  errno = saved_errno;
}

}  // namespace

void RegisterTemporary(const std::string& path) {
  std::string abs = Absolute(path);
  if (abs.size() >= PATH_MAX) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_relaxed) != kFree) continue;
    std::memcpy(s.path, abs.c_str(), abs.size() + 1);
    s.state.store(kLive, std::memory_order_release);
    return;
  }
}

void UnregisterTemporary(const std::string& path) {
  std::string abs = Absolute(path);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) != kLive || abs != s.path) continue;
    int live = kLive;
    s.state.compare_exchange_strong(live, kFree);  // fails only while the handler removes it
    return;
  }
}

void RemoveLiveTemporaries() {
  for (Slot& s : g_slots) {
    int live = kLive;
    if (!s.state.compare_exchange_strong(live, kRemoving, std::memory_order_acquire)) continue;
    RemoveAt(AT_FDCWD, s.path, 0);
    s.state.store(kFree, std::memory_order_release);
  }
}

Status InstallTemporaryCleanup() {
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnTerminatingSignal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : signals) sigaddset(&sa.sa_mask, sig);  // one cleanup at a time
  for (int sig : signals) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) {
      return Status(ErrorCode::kUnsupported, std::string("cannot read the action of signal ") +
                                                 strsignal(sig) + ": " + std::strerror(errno));
    }
    bool has_handler =
        (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr : old.sa_handler != SIG_DFL;
    if (has_handler && old.sa_handler != OnTerminatingSignal)
      continue;  // ignored, or the program's
    if (sigaction(sig, &sa, nullptr) != 0) {
      return Status(ErrorCode::kUnsupported, std::string("cannot install a handler for signal ") +
                                                 strsignal(sig) + ": " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace onnxprobe
