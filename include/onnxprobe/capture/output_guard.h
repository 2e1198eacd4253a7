// Before anything is written: an output never replaces an input of the run, and replaces an
// existing file or folder only when it is an onnxprobe output of the same kind.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

enum class OutputKind {
  kCompareJson,        // JSON report: recognized by its "schema": "onnxprobe-compare" field
  kCompareHtml,        // HTML report: recognized by the report JSON it embeds
  kDump,               // dump folder (manifest.json of format onnxprobe-dump) or .npz holding one
  kReproBundle,        // repro bundle folder (onnxprobe.json)
  kDeterminismJson,    // determinism report: "schema": "onnxprobe-determinism"
  kNoiseFloor,         // noise floor file: "format": "onnxprobe-noise-floor"
  kFp16Json,           // float16 report: "schema": "onnxprobe-fp16"
  kFp16Model,          // converted model: an ONNX file whose producer_name is "onnxprobe fp16"
  kBaseline,           // baseline folder (baseline.json of format onnxprobe-baseline)
  kBaselineCheckJson,  // baseline check report: "schema": "onnxprobe-baseline-check"
  kDumpSet,            // folder of dumps, one per input sample (samples.json: onnxprobe-dump-set)
  kJUnit,              // JUnit XML written by onnxprobe (<testsuites name="onnxprobe ...)
  kSweepJson,          // sweep report: "schema": "onnxprobe-sweep"
  kModelExplorer,      // Model Explorer node data: {"<graph id>": {"results": ...}}
  kProfileTrace,       // ONNX Runtime profiler trace: [{"cat": ...
  kCommandJson,        // JSON of inspect, lint, diff, profile or run: "schema": "onnxprobe-..."
  kGenerateHtml,       // generate's HTML page: recognized by the onnxprobe-generate JSON it embeds
  kGeneration,         // a saved generation folder (generation.json: onnxprobe-generation)
};
const char* OutputKindName(OutputKind kind);  // "JSON report", "dump", ...

// Ok when `path` may be written as `kind`: it does not exist, is empty, or is an onnxprobe
// output of that kind. With `force`, any existing file may be replaced, but never a folder that
// is not an onnxprobe output of `kind` (its contents would be lost). Never Ok when `path` is one
// of `inputs` or a folder holding one of them, `force` or not. Fails with kInvalidArgument
// naming the path and what it is.
Status CheckOutputTarget(const std::string& path, OutputKind kind,
                         const std::vector<std::string>& inputs, bool force);

// Writes `text`, a JSON document a command rendered, to `path` atomically (whole or absent);
// fails with the OS reason, naming the path.
Status WriteJsonOutput(const std::string& path, const std::string& text);

}  // namespace onnxprobe
