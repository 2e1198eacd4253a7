// The command line's stdout: a stream whose writes keep the OS reason of the first failure, so a
// report printed to a full disk or a closed file ends with exit 2 and that reason, not exit 0.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli.h"

namespace onnxprobe::cli {
namespace {

int g_stdout_errno = 0;

ssize_t WriteToFd1(void* /*cookie*/, const char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::write(STDOUT_FILENO, buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (g_stdout_errno == 0) g_stdout_errno = w < 0 ? errno : EIO;
      return static_cast<ssize_t>(done);  // 0 (nothing written) marks the stream failed
    }
    done += static_cast<size_t>(w);
  }
  return static_cast<ssize_t>(n);
}

}  // namespace

void GuardStdout() {
  cookie_io_functions_t io{};
  io.write = WriteToFd1;
  FILE* f = fopencookie(nullptr, "w", io);
  if (f == nullptr) return;  // keep the plain stream
  std::fflush(stdout);
  std::setvbuf(f, nullptr, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  stdout = f;
}

Status FinishStdout() {
  bool failed = std::fflush(stdout) != 0;
  failed = std::ferror(stdout) != 0 || failed;
  if (!failed) return Status::Ok();
  int e = g_stdout_errno != 0 ? g_stdout_errno : errno;
  return IoError(std::string("stdout: write failed (") + std::strerror(e) + ")");
}

}  // namespace onnxprobe::cli
