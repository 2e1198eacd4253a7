#include "common/file_util.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "common/temp_registry.h"

namespace fs = std::filesystem;

namespace onnxprobe {

Expected<std::string> ReadFile(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return IoError(path + ": cannot open (" + ec.message() + ")");
  }
  if (!fs::exists(st)) return NotFound(path + ": no such file");
  if (fs::is_directory(st)) return InvalidArgument(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  auto size = static_cast<uint64_t>(in.tellg());
  if (size > max_bytes) {
    return ResourceExhausted(path + ": " + std::to_string(size) + " bytes exceeds the limit of " +
                             std::to_string(max_bytes));
  }
  in.seekg(0);
  std::string data(size, '\0');
  if (size > 0 && !in.read(data.data(), static_cast<std::streamsize>(size))) {
    return IoError(path + ": read failed");
  }
  return data;
}

namespace {

std::string WithoutTrailingSlash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

std::string ParentFolder(const std::string& path) {
  return fs::path(WithoutTrailingSlash(path)).parent_path().string();
}

std::string TempSiblingPath(const std::string& path) {
  static std::atomic<int> counter{0};
  std::string tmp = WithoutTrailingSlash(path) + ".tmp-" + std::to_string(getpid()) + "-" +
                    std::to_string(counter++);
  RegisterTemporary(tmp);
  return tmp;
}

size_t RemoveStaleTemporaries(const std::string& path) {
  const fs::path p(WithoutTrailingSlash(path));
  const std::string prefix = p.filename().string() + ".tmp-";
  fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  fs::directory_iterator it(parent, ec), end;
  std::vector<fs::path> stale;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());  // "<pid>-<n>"
    size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    const std::string digits = rest.substr(0, dash);  // outlives `stop`, which points into it
    char* stop = nullptr;
    long pid = std::strtol(digits.c_str(), &stop, 10);
    if (*stop != '\0' || pid <= 0 || pid == getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours
    stale.push_back(it->path());
  }
  for (const auto& s : stale) fs::remove_all(s, ec);
  return stale.size();
}

std::error_code RenameTemporary(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (!ec) UnregisterTemporary(tmp);
  return ec;
}

Expected<std::string> MakeTemporaryFolder(const std::string& prefix) {
  const char* env = std::getenv("TMPDIR");
  std::string parent = env != nullptr && env[0] != '\0' ? env : "/tmp";
  std::string tmpl = parent + "/" + prefix + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr)
    return IoError("cannot create a temporary folder in " + parent + ": " + std::strerror(errno));
  RegisterTemporary(tmpl);
  return tmpl;
}

void RemoveTemporary(const std::string& tmp) {
  RemoveAll(tmp);
  UnregisterTemporary(tmp);
}

namespace {

bool UnderFdFolder(const std::string& p) {
  return p.rfind("/proc/self/fd/", 0) == 0 || p.rfind("/dev/fd/", 0) == 0 ||
         p.rfind("/proc/thread-self/fd/", 0) == 0;
}

// Writes all of `data` to `fd`; 0 or the OS reason of the first failure.
int WriteAll(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    done += static_cast<size_t>(w);
  }
  return 0;
}

}  // namespace

std::string OutputPath(const std::string& path) {
  fs::path p(WithoutTrailingSlash(path));
  for (int hops = 0; hops < 40 && !UnderFdFolder(p.string()); ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = (target.is_absolute() ? target : p.parent_path() / target).lexically_normal();
  }
  return p == fs::path(WithoutTrailingSlash(path)) ? path : p.string();
}

bool IsStreamOutput(const std::string& path) {
  if (UnderFdFolder(path)) return true;
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return false;
  return fs::is_character_file(st) || fs::is_block_file(st) || fs::is_fifo(st) || fs::is_socket(st);
}

Status WriteFileAtomic(const std::string& user_path, const std::string& data) {
  const std::string path = OutputPath(user_path);
  if (UnderFdFolder(path)) {
    // this process's own descriptor: written through it, sharing its offset with what the
    // process prints there (opening the file again would start at 0, under what was printed)
    const std::string digits = path.substr(path.rfind('/') + 1);
    char* end = nullptr;
    long fd = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || fd < 0)
      return IoError(user_path + ": not a file descriptor");
    int err = WriteAll(static_cast<int>(fd), data);
    if (err != 0) return IoError(user_path + ": write failed (" + std::strerror(err) + ")");
    return Status::Ok();
  }
  if (IsStreamOutput(path)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return IoError(user_path + ": cannot open (" + std::strerror(errno) + ")");
    int err = WriteAll(fd, data);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) return IoError(user_path + ": write failed (" + std::strerror(err) + ")");
    return Status::Ok();
  }
  std::string tmp = TempSiblingPath(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    Status st = IoError(path + ": cannot create (" + std::strerror(errno) + ")");
    UnregisterTemporary(tmp);
    return st;
  }
  int err = WriteAll(fd, data);  // the OS reason, kept before any cleanup call can change it
  if (::close(fd) != 0 && err == 0) err = errno;  // NFS and some full disks report here
  if (err != 0) {
    RemoveTemporary(tmp);
    return IoError(path + ": write failed (" + std::strerror(err) + ")");
  }
  std::error_code ec = RenameTemporary(tmp, path);
  if (ec) {
    RemoveTemporary(tmp);
    return IoError(path + ": rename failed (" + ec.message() + ")");
  }
  return Status::Ok();
}

void RemoveAll(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace onnxprobe
