// Internal: the experiments, one family per file. Each appends findings for one culprit and
// says what it tried.
#pragma once

#include <string>
#include <vector>

#include "diagnose/case_runner.h"

namespace onnxprobe::diagnose {

struct Ctx {
  const DiagnoseInput& in;
  const DiagnoseOptions& options;
  size_t runs = 0;
  std::vector<Unexplained> unexplained;  // quantized layers no experiment explains
};

struct Culprit1 {
  const IsolatedCase& data;
  const Culprit* culprit;  // localization's record (nodes run alone), or null
  double error = 0;        // max |observed - expected|
};

// Run-to-run and thread-count repeats, side A's optimization level and the transformer search,
// side A's runtime (runtime_causes.cc).
void RuntimeCauses(Ctx& cx, const Culprit1& c, std::vector<Finding>* found, std::string* tried);
// The two models' attributes and weights at the culprit's nodes, side A's values against
// float16's range (model_causes.cc).
void ModelCauses(Ctx& cx, const Culprit1& c, std::vector<Finding>* found, std::string* tried);
// Quantized layers below the limit alone: saturation and calibration range (quant_causes.cc).
void QuantCauses(Ctx& cx, std::vector<Finding>* found);
// A PyTorch side A's module calls that computed as in training mode at the culprits
// (torch_causes.cc).
void TorchCauses(Ctx& cx, std::vector<Finding>* found);
// Adds `tried` a clause.
void Tried(std::string* tried, const std::string& clause);

}  // namespace onnxprobe::diagnose
