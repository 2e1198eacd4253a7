// Quantized vs float: recognizing that side B is a quantized version of side A (QDQ or
// QOperator), pairing each float tensor with its dequantized counterpart by graph structure,
// judging rows by signal-to-quantization-noise ratio, and isolating each quantized layer to
// rank the error it introduces (docs/quantization.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

enum class QuantFormat { kNone, kQdq, kQOperator, kMixed };
const char* QuantFormatName(QuantFormat f);  // "none", "qdq", "qoperator", "mixed"

// How a quantized tensor maps to real values: real = (q - zero_point) * scale, per tensor
// (one scale) or per channel along `axis`.
struct QuantParams {
  std::vector<double> scale;
  std::vector<int64_t> zero_point;  // one per scale
  int axis = -1;                    // -1: per tensor
  DType qtype = DType::kUInt8;
  int64_t qmin = 0, qmax = 255;
  bool per_channel() const { return scale.size() > 1; }
};

// Real values of a quantized tensor (int8/uint8/int16/uint16/int32).
Expected<Tensor> Dequantize(const Tensor& q, const QuantParams& p);
// QuantizeLinear as ONNX defines it: round half to even, saturate to [qmin, qmax].
Expected<Tensor> Quantize(const Tensor& x, const QuantParams& p);

// Quantization figures of one paired row (B's tensor dequantized against A's float tensor).
struct QuantRowMetrics {
  int row = -1;             // into ComparisonResult::rows
  bool has_params = false;  // B's tensor carries quantization parameters (scale, zero point)
  bool per_channel = false;
  double scale = 0;                      // the (first) scale
  double sqnr_db = 0;                    // 10 log10(sum a^2 / sum (b-a)^2); +inf when identical
  double max_steps = 0, mean_steps = 0;  // |b - a| / scale
  double saturated = 0;  // share of A's values beyond the representable range (clipped by B)
  std::vector<double> channel_sqnr_db;  // along axis 1 (activations) when rank >= 3
};

// One quantized weight: B's dequantized initializer against A's float initializer.
struct QuantWeight {
  std::string name_a, name_b, node;  // node: A's node reading it
  bool per_channel = false;
  int axis = -1;
  double sqnr_db = 0, max_steps = 0;
  std::vector<double> channel_sqnr_db;  // per channel along `axis` (per-channel quantization)
};

// A float tensor of side A as side B quantizes it, and as each calibration method would from A's
// values (B's quantized type and symmetry): what tells a range that clips from steps too coarse.
struct TensorQuantization {
  bool measured = false;
  double saturated = 0;       // share of A's values beyond the range B's quantization represents
  double lo_a = 0, hi_a = 0;  // A's finite range
  double lo_b = 0, hi_b = 0;  // the range B represents (per channel: the narrowest)
  double sqnr_db = 0;         // A's values through B's quantization
  // A's values through the range MinMax (A's min and max), Percentile (99.999th percentile of
  // |x|) and Entropy (the KL-divergence threshold over a 2048-bin histogram of |x|, 128 levels)
  // calibration would choose from them.
  double minmax_db = 0, percentile_db = 0, entropy_db = 0;
};
TensorQuantization MeasureTensorQuantization(const Tensor& a, const QuantParams& b);

// One quantized layer run alone on side B's runtime with side A's float inputs quantized exactly
// as B quantizes them; its output compared with A's float output.
struct QuantLayer {
  std::string node_a, op_type;  // A's node (the name nodes_to_exclude takes)
  std::string node_b;           // B's computing node (Conv, QLinearConv, ...)
  std::string tensor_a, tensor_b;
  std::vector<std::string> nodes_b;  // nodes run in isolation
  bool isolated = false;
  std::string error;         // why isolation could not run
  double sqnr_db = 0;        // isolated output vs A's output
  double max_steps = 0;      // isolated, in output quantization steps (when B's output has them)
  double saturated = 0;      // isolated output: share of A's values beyond B's range
  double input_sqnr_db = 0;  // worst input as B quantizes it, vs A's float input (+inf: none)
  std::string input_tensor;  // A's tensor of that worst input
  std::string input_owner;   // the layer (A node) producing it; "" for a graph input
  // QDQ: the same nodes fed A's float inputs unquantized (NaN when not run): the error of the
  // weights and the output quantization alone.
  double float_input_sqnr_db = 0;
  double accumulated_sqnr_db = 0;  // the comparison's figure for the output tensor
  bool below_limit = false;        // isolated SQNR below the limit: this layer belongs in the list
  // ... because of how its input is quantized (within the limit with float inputs): the
  // input's producing layer is excluded too, since it quantizes that tensor as well.
  bool input_caused = false;
  TensorQuantization input_quantization;   // of input_tensor
  TensorQuantization output_quantization;  // of the layer's output, when B quantizes it
};

struct QuantReport {
  QuantFormat format = QuantFormat::kNone;
  double min_sqnr_db = 0;   // the quantization-aware rule: a row passes at SQNR >= this
  size_t paired = 0;        // A's tensors paired by structure
  size_t by_name_hint = 0;  // of those, pairs whose B name is A's name plus a quantizer suffix
  std::vector<std::string> folded;  // A's tensors folded into B's quantization (e.g. pre-Relu)
  std::vector<QuantRowMetrics> rows;
  std::vector<QuantWeight> weights;
  std::vector<QuantLayer> layers;    // ranked: introduced error first, largest first
  std::vector<std::string> exclude;  // nodes_to_exclude for onnxruntime.quantization
  bool isolated = false;
  size_t isolation_runs = 0;
  std::vector<std::string> notes;
  bool active() const { return format != QuantFormat::kNone; }
};

// Default limit of the quantization-aware rule (docs/quantization.md).
constexpr double kDefaultQuantMinSqnrDb = 20.0;

enum class QuantMode { kAuto, kOff };  // kAuto: when A is float and B quantized

struct QuantOptions {
  QuantMode mode = QuantMode::kAuto;
  double min_sqnr_db = kDefaultQuantMinSqnrDb;
  bool isolate = true;      // run each quantized layer alone (needs a live side B)
  size_t max_layers = 512;  // isolate at most this many layers
  // Side A's tensors held at once while isolating (bytes; 0: no limit): layers are isolated in
  // batches, one run of side A each. The engine sets it from the comparison's memory budget.
  uint64_t max_memory = 0;
};

// The structural pairing of a float model A with its quantized version B, as the engine uses
// it: `rename` (A name -> B name), B tensors to dequantize before comparing, and the rest.
struct QuantPairing {
  QuantFormat format = QuantFormat::kNone;
  std::map<std::string, std::string> rename;
  std::map<std::string, QuantParams> params_b;  // B tensor -> its quantization (int or DQ output)
  std::set<std::string> dequantize_b;           // B tensors held quantized: compare dequantized
  std::vector<std::string> folded;
  size_t by_name_hint = 0;
  std::vector<std::string> notes;
  struct Layer {
    int node_a = -1, node_b = -1;  // topo indices
    std::string tensor_a, tensor_b;
  };
  std::vector<Layer> layers;
  std::vector<QuantWeight> weights;  // filled with names; figures by MeasureWeights
  // B's quantized activation tensor -> A's float tensor it stands for ("" key absent)
  std::map<std::string, std::string> a_of_quantized;
  std::map<std::string, std::string> a_of_float;  // B float tensor -> A tensor (same value)
};

// The quantization-aware rule for one pair outside a comparison: side A's float tensor `a`
// against the real-valued (dequantized) `b` of its quantized version. JudgeRow's checks of
// shape, dtype and NaN/Inf stand; the row passes at SQNR >= min_sqnr_db (docs/quantization.md).
void JudgeQuantizedPair(const Tensor& a, const Tensor& b, const TolerancePolicy& policy,
                        const CompareOptions& kernel, double min_sqnr_db, TensorResult* row);

// The format of `b` when it holds quantization nodes (QuantizeLinear/DequantizeLinear around
// float ops, QLinear*/QGemm/*Integer ops), kNone otherwise.
QuantFormat DetectQuantFormat(const Model& b);

// Pairs A's tensors with B's by structure (through Q/DQ pairs and QLinear ops, activations
// folded into quantization). `hidden_b`: B tensors that cannot be captured (fused away), so an
// alternative representative of the same value is chosen. Fails with kInvalidArgument when
// `b` is not a quantized model, kCorrupt when a scale or zero point cannot be read.
Expected<QuantPairing> PairQuantized(const Model& a, const Model& b,
                                     const std::set<std::string>& hidden_b);

// Fills each weight's figures (dequantized B initializer vs A's float initializer).
Status MeasureWeights(const Model& a, const Model& b, std::vector<QuantWeight>* weights);

}  // namespace onnxprobe
