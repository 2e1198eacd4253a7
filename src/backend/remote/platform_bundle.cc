// WritePlatformBundle: the folder a device runs as a side (the worker, its runtime, a start
// script), written complete or not at all.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/file_util.h"
#include "onnxprobe/backend/platform.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

Status Copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_symlink(from, ec)) {  // the runtime's soname links stay links
    fs::copy_symlink(from, to, ec);
  } else {
    fs::copy_file(from, to, ec);
  }
  if (ec)
    return IoError("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

Expected<PlatformBundle> WritePlatformBundle(const std::string& arch, const std::string& dir,
                                             const std::string& version) {
  if (arch != "aarch64" && arch != "x86_64")
    return InvalidArgument("unknown architecture '" + arch + "' (aarch64 or x86_64)");
  if (dir.empty()) return InvalidArgument("no folder to write the bundle to");
  PlatformBundle b;
  b.dir = dir;
  b.arch = arch;
  // the runtime a side on that CPU runs (the library --platform/--ort-version would load)
  Platform p;
  p.arch = arch;
  OP_ASSIGN_OR_RETURN(std::string library, PlatformLibrary(p, version, ""));
  size_t at = library.rfind(".so.");
  if (library.empty() || at == std::string::npos)
    return InvalidArgument(
        "this build has no default ONNX Runtime: give a version (--ort-version)");
  b.version = library.substr(at + 4);
  fs::path libs = fs::path(library).parent_path();
  std::string lib = fs::path(library).filename().string();
  std::string worker = PlatformWorkerPath(arch);
  std::error_code ec;
  if (worker.empty() || !fs::is_regular_file(worker, ec))
    return NotFound("onnxprobe's " + arch + " worker is not built" +
                    (worker.empty() ? std::string(" in this build") : " (" + worker + ")"));
  struct stat st;
  std::string target = dir;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  if (::lstat(target.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return InvalidArgument(dir + " is a symbolic link: give a folder path of its own");
    if (!S_ISDIR(st.st_mode)) return InvalidArgument(dir + " exists and is not a folder");
    if (!fs::is_empty(target, ec)) return InvalidArgument(dir + " exists and is not empty");
  }
  std::string tmp = TempSiblingPath(target);
  fs::create_directories(fs::path(tmp) / "lib", ec);
  if (ec) {
    RemoveTemporary(tmp);
    return IoError("cannot create " + tmp + ": " + ec.message());
  }
  auto write = [&]() -> Status {
    OP_RETURN_IF_ERROR(Copy(worker, fs::path(tmp) / "onnxprobe-worker"));
    b.files.push_back("onnxprobe-worker");
    for (const auto& e : fs::directory_iterator(libs, ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind("libonnxruntime", 0) != 0 || name.find(".so") == std::string::npos) continue;
      OP_RETURN_IF_ERROR(Copy(e.path(), fs::path(tmp) / "lib" / name));
      b.files.push_back("lib/" + name);
    }
    if (ec) return IoError("cannot list " + libs.string() + ": " + ec.message());
    std::string script =
        "#!/bin/sh\n"
        "# onnxprobe's platform worker (" +
        arch + ", ONNX Runtime " + b.version +
        "): sessions for "
        "a host running\n# onnxprobe, spoken to on stdin/stdout. The host starts it: --b-remote "
        "'ssh board <this file>'.\n"
        "here=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n"
        "exec \"$here/onnxprobe-worker\" \"$here/lib/" +
        lib + "\"\n";
    fs::path run = fs::path(tmp) / "run-worker.sh";
    {
      std::ofstream f(run, std::ios::binary);
      f << script;
      f.close();
      if (!f) return IoError("cannot write " + run.string() + ": " + std::strerror(errno));
    }
    fs::permissions(run,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec,
                    ec);
    if (ec) return IoError("cannot make " + run.string() + " executable: " + ec.message());
    b.files.push_back("run-worker.sh");
    if (std::error_code rc = RenameTemporary(tmp, target))
      return IoError("cannot move the bundle into " + dir + ": " + rc.message());
    return Status::Ok();
  };
  Status written = write();
  if (!written.ok()) {
    RemoveTemporary(tmp);
    return written;
  }
  return b;
}

}  // namespace onnxprobe
