// Float16 sensitivity: from one float32 run, what float16 does to every tensor (overflow,
// subnormals, rounding), each node run alone in float16 and ranked by the error it introduces,
// and a block list of nodes to keep in float32 such that the converted model matches float32
// within tolerance on the given inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/fp16_graph.h"

namespace onnxprobe {

struct Fp16Request {
  std::string model;
  SessionOptions session;
  std::string ort_library;  // "" = default
  InputOptions inputs;
  // The converted model passes when every graph output satisfies, element by element,
  // |fp16 - fp32| <= atol' + rtol * |fp32| (numpy.allclose), with no NaN or Inf that float32
  // does not have; atol' = atol + atol_scale * max |fp32| of that output. The default allows
  // 1% of each output's range plus 1% of each value: float16 rounds at 2^-11 relative, and a
  // deep network accumulates that into errors that scale with the output's magnitude, not the
  // element's (an element near zero gets the same absolute error as its large neighbours).
  double atol = 0;
  double atol_scale = 1e-2;
  double rtol = 1e-2;
  std::vector<std::string> keep_fp32;  // node names always kept in float32
  int max_blocked = -1;                // most nodes the block list may hold; < 0: no limit
  std::string output_model;            // "" = none; the converted model, written atomically
  uint64_t isolation_batch_bytes = uint64_t{1} << 30;  // outputs held by one isolation run
  // Check converted models with every float16 activation rounded (kFp16StorageNote in
  // fp16_graph.h); the written model has no barriers. Isolation always keeps the roundings.
  bool storage_barriers = true;
};

// What float16 does to one float32 tensor of the float32 run.
struct Fp16TensorRow {
  std::string name, node, op_type;  // node/op_type empty for graph inputs
  int topo_index = -1;
  uint64_t elements = 0;
  uint64_t overflow = 0;       // finite |x| > 65504 (float16 makes them Inf)
  double subnormal_share = 0;  // share of nonzero |x| below 2^-14 (subnormal or flushed to 0)
  double roundtrip_error = 0;  // ||fp16(x) - x|| / ||x|| over elements that stay finite
  double max_abs = 0;
};

enum class Fp16BlockReason {
  kRequested,       // the caller asked to keep it
  kRuntimeRejects,  // the runtime cannot run it in float16
  kOverflow,        // its float16 output overflows where float32 does not
  kInputOverflow,   // an input is beyond the float16 range
  kError,           // added, in rank order, until the converted model passed
  kFeedsSensitive,  // produces an input of a kError node whose error comes from its inputs
};
const char* Fp16BlockReasonName(Fp16BlockReason r);

struct Fp16NodeRow {
  std::string node, op_type;
  int topo_index = -1;
  Fp16Eligibility eligibility = Fp16Eligibility::kConvertible;
  bool isolated = false;  // run alone in float16
  double isolated_error =
      0;  // worst output: ||y16 - y32|| / ||y32|| (share differing if not float)
  double isolated_max_abs = 0;
  // What float16 storage alone costs the node: its float32 computation from the float16-rounded
  // inputs, its result rounded to float16 once (the same measure as isolated_error).
  double storage_error = 0;
  bool storage_measured = false;  // the node has a float output whose storage cost was measured
  uint64_t overflow = 0;          // output elements finite in float32, not in float16
  uint64_t input_overflow = 0;    // input elements beyond the float16 range
  std::string runtime_error;      // the runtime rejected it in float16
};

// Whether the node, run in float16, loses more than float16 storage must: its isolated error is
// over twice its storage error (docs/fp16.md: the kernel's own rounding, beyond what rounding its
// inputs and its result costs, is larger than that unavoidable part).
bool LosesMoreThanFp16Storage(const Fp16NodeRow& row);

struct Fp16BlockEntry {
  std::string node, op_type;
  int topo_index = -1;
  Fp16BlockReason reason = Fp16BlockReason::kError;
  double isolated_error = 0, storage_error = 0;  // the node's row (Fp16NodeRow)
  bool beyond_storage = false;                   // LosesMoreThanFp16Storage(row)
};

// One converted model, run and checked against float32.
struct Fp16Attempt {
  size_t blocked = 0;  // nodes kept in float32 (a prefix of the block list)
  bool passed = false;
  double worst_ratio = 0;  // max |fp16 - fp32| / (atol' + rtol |fp32|) over the outputs
  std::string worst_output;
  double max_abs = 0;      // max |fp16 - fp32| at the worst output
  double rel_error = 0;    // ||fp16 - fp32|| / ||fp32|| at the worst output
  uint64_t nonfinite = 0;  // NaN/Inf in outputs where float32 is finite
  std::string error;       // the runtime rejected the converted model
};

struct Fp16Report {
  std::string model, runtime;
  double atol = 0, atol_scale = 0, rtol = 0;
  std::vector<std::pair<std::string, double>> output_atol;  // atol' per graph output
  std::vector<Fp16TensorRow> tensors;                       // float32 tensors, topological order
  std::vector<Fp16NodeRow> nodes;  // ranked: overflow first, then isolated error
  size_t node_count = 0, convertible = 0;
  std::vector<Fp16BlockEntry> block_list;  // final list, in the order entries were added
  std::vector<Fp16Attempt> attempts;
  bool passed = false;       // the final attempt reached tolerance
  int max_blocked = -1;      // the request's limit (< 0: none)
  std::string output_model;  // written when requested and passed
  // The written model's bytes, and what float16 should have saved: half the float32 weight
  // bytes (initializers and Constant nodes). `size_note` warns when the conversion saved less
  // than half of that (most float32 weights stayed float32: blocked nodes, or weights the
  // converter does not reach); "" otherwise.
  uint64_t output_bytes = 0, float32_weight_bytes = 0;
  std::string size_note;
  size_t model_runs = 0;  // inference runs: the float32 run, isolation runs, attempts
  size_t sessions = 0;
  size_t isolation_runs = 0;
  double seconds = 0;
  std::vector<NamedTensor> inputs;
};

// Fails with kInvalidArgument/kNotFound on bad input (unknown node in keep_fp32), kBackend when
// the runtime fails on the float32 model. A block list that never reaches tolerance is not an
// error: the report says passed = false and no model is written.
Expected<Fp16Report> AnalyzeFp16(const Fp16Request& request);

}  // namespace onnxprobe
