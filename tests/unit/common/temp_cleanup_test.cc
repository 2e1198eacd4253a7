// Temporaries removed on SIGINT/SIGTERM/SIGHUP (onnxprobe/common/cleanup.h): a forked child creates
// temporaries like the writers do, installs the cleanup and is signalled.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "common/file_util.h"
#include "onnxprobe/common/cleanup.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

std::string MakeTempDir() {
  char tmpl[] = "/tmp/onnxprobe_cleanup_XXXXXX";
  return mkdtemp(tmpl);
}

void Touch(const std::string& path, size_t bytes = 16) {
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// In the child: a dump-like temporary folder (nested, more entries than one getdents64 read
// returns), a file inside it being written, an .npz-like temporary file, and one committed file.
[[noreturn]] void ChildWritesThenIsSignalled(const std::string& dir, int sig, bool ignore) {
  signal(sig, ignore ? SIG_IGN : SIG_DFL);
  if (!InstallTemporaryCleanup().ok()) _exit(10);
  std::string folder = TempSiblingPath(dir + "/out.dump");
  fs::create_directories(folder + "/inputs");
  for (int i = 0; i < 300; ++i) {
    Touch(folder + "/" + std::string(60, 'a') + std::to_string(i) + ".npy");
  }
  Touch(folder + "/inputs/X.npy");
  Touch(TempSiblingPath(folder + "/00300_t.npy"));
  Touch(TempSiblingPath(dir + "/out.npz"), 1 << 20);
  std::string done = TempSiblingPath(dir + "/report.json");
  Touch(done);
  if (RenameTemporary(done, dir + "/report.json")) _exit(11);
  raise(sig);
  _exit(0);  // reached only when the signal is ignored
}

int RunChild(const std::string& dir, int sig, bool ignore) {
  pid_t pid = fork();
  if (pid == 0) ChildWritesThenIsSignalled(dir, sig, ignore);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(TemporaryCleanup, SignalRemovesTemporariesAndEndsTheProcessBySignal) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    std::string dir = MakeTempDir();
    int status = RunChild(dir, sig, false);
    ASSERT_TRUE(WIFSIGNALED(status)) << strsignal(sig) << ": status " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(Entries(dir), std::set<std::string>{"report.json"}) << strsignal(sig);
    fs::remove_all(dir);
  }
}

TEST(TemporaryCleanup, AnIgnoredSignalStaysIgnored) {
  std::string dir = MakeTempDir();
  int status = RunChild(dir, SIGHUP, true);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Entries(dir).size(), 3u);  // out.dump.tmp-*, out.npz.tmp-*, report.json
  fs::remove_all(dir);
}

TEST(TemporaryCleanup, RenamedAndRemovedTemporariesAreForgotten) {
  std::string dir = MakeTempDir();
  std::string a = TempSiblingPath(dir + "/a"), b = TempSiblingPath(dir + "/b");
  Touch(a);
  fs::create_directories(b + "/sub");
  ASSERT_FALSE(RenameTemporary(a, dir + "/a"));
  RemoveTemporary(b);
  Touch(a);  // a new file at the old temporary name is not a temporary any more
  RemoveLiveTemporaries();
  EXPECT_EQ(Entries(dir), (std::set<std::string>{"a", fs::path(a).filename().string()}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onnxprobe
