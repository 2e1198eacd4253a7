// What every sample of a command notes is said once (DistinctNotes), in the order first said,
// each line led by its kind.
#include <gtest/gtest.h>

#include "onnxprobe/command/command.h"

namespace onnxprobe::cmd {
namespace {

TEST(DistinctNotes, RepeatsLeftOutOrderKept) {
  std::vector<CommandNote> notes = {{NoteKind::kNote, "a"},    {NoteKind::kWarning, "b"},
                                    {NoteKind::kNote, "a"},    {NoteKind::kNote, "c"},
                                    {NoteKind::kWarning, "b"}, {NoteKind::kWarning, "a"}};
  EXPECT_EQ(DistinctNotes(notes),
            (std::vector<std::string>{"note: a", "warning: b", "note: c", "warning: a"}));
  EXPECT_TRUE(DistinctNotes({}).empty());
}

TEST(DistinctNotes, EachKindHasItsWord) {
  CommandOutput out;
  out.Note("n");
  out.Warn("w");
  out.notes.push_back({NoteKind::kNonfinite, "'x' (graph input) holds 1 NaN"});
  EXPECT_EQ(DistinctNotes(out.notes),
            (std::vector<std::string>{"note: n", "warning: w",
                                      "nonfinite: 'x' (graph input) holds 1 NaN"}));
}

}  // namespace
}  // namespace onnxprobe::cmd
