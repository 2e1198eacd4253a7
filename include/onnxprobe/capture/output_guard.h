// Before anything is written: an output never replaces an input of the run, and replaces an
// existing file or folder only when it is an onnxprobe output of the same kind.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

// The outputs of the modules below report/ (the compare report's formats bring their own
// artifact: report/formats.h).
enum class OutputKind {
  kDump,               // dump folder (manifest.json of format onnxprobe-dump) or .npz holding one
  kReproBundle,        // repro bundle folder (onnxprobe.json)
  kDeterminismJson,    // determinism report: "schema": "onnxprobe-determinism"
  kNoiseFloor,         // noise floor file: "format": "onnxprobe-noise-floor"
  kFp16Json,           // float16 report: "schema": "onnxprobe-fp16"
  kFp16Model,          // converted model: an ONNX file whose producer_name is "onnxprobe fp16"
  kBaseline,           // baseline folder (baseline.json of format onnxprobe-baseline)
  kBaselineCheckJson,  // baseline check report: "schema": "onnxprobe-baseline-check"
  kDumpSet,            // folder of dumps, one per input sample (samples.json: onnxprobe-dump-set)
  kSweepJson,          // sweep report: "schema": "onnxprobe-sweep"
  kProfileTrace,       // ONNX Runtime profiler trace: [{"cat": ...
  kCommandJson,        // JSON of inspect, lint, diff, profile or run: "schema": "onnxprobe-..."
  kGenerateHtml,       // generate's HTML page: recognized by the onnxprobe-generate JSON it embeds
  kGeneration,         // a saved generation folder (generation.json: onnxprobe-generation)
};
const char* OutputKindName(OutputKind kind);  // "JSON report", "dump", ...

// What an output is, for the guard: its name in messages, whether it is written as a folder,
// and how an earlier one of ours is recognized (by content, not by name). A report format
// brings its own (report/formats.h); the kinds above are ArtifactOf(kind).
struct OutputArtifact {
  std::string name;                                     // "JSON report", "dump", ...
  std::function<bool(const std::string& path)> folder;  // empty: a file
  std::function<bool(const std::string& path, bool is_dir)> ours;
};
OutputArtifact ArtifactOf(OutputKind kind);
// The first `n` bytes of a file ("" when unreadable): what recognizers read.
std::string FileHead(const std::string& path, size_t n);
// `text` at `pos` opens a JSON object whose first member is "<key>": "<value_prefix...".
bool JsonOpensWith(const std::string& text, size_t pos, const std::string& key,
                   const std::string& value_prefix);
// `head` is an HTML page of ours embedding a JSON document whose schema starts so.
bool HtmlEmbedsSchema(const std::string& head, const std::string& schema_prefix);

// Ok when `path` may be written as `kind`: it does not exist, is empty, or is an onnxprobe
// output of that kind. With `force`, any existing file may be replaced, but never a folder that
// is not an onnxprobe output of `kind` (its contents would be lost). Never Ok when `path` is one
// of `inputs` or a folder holding one of them, `force` or not. Fails with kInvalidArgument
// naming the path and what it is.
Status CheckOutputTarget(const std::string& path, OutputKind kind,
                         const std::vector<std::string>& inputs, bool force);
Status CheckOutputTarget(const std::string& path, const OutputArtifact& artifact,
                         const std::vector<std::string>& inputs, bool force);

// Writes `text`, a JSON document a command rendered, to `path` atomically (whole or absent);
// fails with the OS reason, naming the path.
Status WriteJsonOutput(const std::string& path, const std::string& text);
// The same for a document of any format (a report format's rendering).
Status WriteOutputFile(const std::string& path, const std::string& text);

}  // namespace onnxprobe
