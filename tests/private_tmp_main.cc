// A test main that gives each test process a temporary directory of its own. ctest runs every
// discovered test as a separate process, in parallel; tests that write fixed names under
// ::testing::TempDir() (a model and its external-data file) would otherwise overwrite each other's
// files mid-test. googletest reads TEST_TMPDIR before TMPDIR, so setting it here moves every
// TempDir() below a fresh mkdtemp directory, removed again when the tests end; TMPDIR moves the
// library's own temporary folders there too.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string pattern = ::testing::TempDir() + "onnxprobe_test_XXXXXX";
  std::string dir;
  if (mkdtemp(pattern.data()) != nullptr) {
    dir = pattern;
    setenv("TEST_TMPDIR", dir.c_str(), 1);
    setenv("TMPDIR", dir.c_str(), 1);
  }
  int rc = RUN_ALL_TESTS();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return rc;
}
