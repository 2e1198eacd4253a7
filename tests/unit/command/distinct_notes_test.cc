// What every sample of a command notes is said once (DistinctNotes), in the order first said.
#include <gtest/gtest.h>

#include "onnxprobe/command/command.h"

namespace onnxprobe::cmd {
namespace {

TEST(DistinctNotes, RepeatsLeftOutOrderKept) {
  std::vector<std::string> notes = {"note: a", "warning: b", "note: a", "note: c", "warning: b"};
  EXPECT_EQ(DistinctNotes(notes), (std::vector<std::string>{"note: a", "warning: b", "note: c"}));
  EXPECT_TRUE(DistinctNotes({}).empty());
}

}  // namespace
}  // namespace onnxprobe::cmd
