// The library's commands (one file each in src/command/); MakeCommands() lists them.
#pragma once

#include <memory>

#include "onnxprobe/command/command.h"
#include "onnxprobe/command/options.h"

namespace onnxprobe::cmd {

std::unique_ptr<Command> MakeInspectCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeCompareCommand();
std::unique_ptr<Command> MakeMergeCommand();
std::unique_ptr<Command> MakeImportPolygraphyCommand();
std::unique_ptr<Command> MakeGenerateCommand();
std::unique_ptr<Command> MakeReplayCommand();
std::unique_ptr<Command> MakeDeterminismCommand();
std::unique_ptr<Command> MakeLintCommand();
std::unique_ptr<Command> MakeDiffCommand();
std::unique_ptr<Command> MakeFp16Command();
std::unique_ptr<Command> MakeBaselineSaveCommand();   // "baseline save"
std::unique_ptr<Command> MakeBaselineCheckCommand();  // "baseline check"
std::unique_ptr<Command> MakeProfileCommand();
std::unique_ptr<Command> MakePlatformBundleCommand();

}  // namespace onnxprobe::cmd
