// Pairing two different models by meaning, not only by name: graph tools (onnxsim, onnxslim,
// onnxoptimizer, quantizers, re-exports) fold a normalization or a constant Mul/Add into the
// Conv/Gemm/MatMul before it and keep that node's output name, remove Identity nodes, or put a
// new node where an old one was. Pairing such a model with its original by name alone compares a
// tensor before the fold with one after it.
//
// The rule: where both graphs agree is where a node of B matched to a node of A (same op, same
// model/'s node matching: by name, then by structure) reads its inputs. A's
// node reads the value B's node is meant to read at the same slot, so B's tensor there stands
// for A's. A same-named tensor whose A meaning differs (what A computes before the fold) is
// not paired, and each recognized rewrite is said in one line. Slots are compared up to the
// shorter input list (a fold gives a Conv without bias a bias input at the end).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxprobe/model/model.h"
#include "onnxprobe/model/model_diff.h"

namespace onnxprobe {

struct RewriteAlignment {
  // A name -> B name: B's tensor stands for A's (read by matched nodes where A reads A's), and
  // B has no tensor of A's name.
  std::map<std::string, std::string> rename;
  // A name -> why B's tensor of that name is not its counterpart (a rewrite gave it another
  // meaning); such A tensors are never paired by name.
  std::map<std::string, std::string> distrusted;
  // One line per recognized rewrite: "BatchNormalization 'bn' folded into Conv 'conv': B's
  // 'conv_out' stands for A's 'bn_out'"; a plain renaming of tensors is counted in `renamed`.
  std::vector<std::string> rewrites;
  // The same, counted by kind for a bounded summary: "BatchNormalization folded into Conv" -> 20.
  std::map<std::string, size_t> kinds;
  size_t renamed = 0;
};

// `diff` is DiffModels(a, b) (its node matching). Empty when the graphs agree name for name.
RewriteAlignment AlignRewrites(const Model& a, const Model& b, const ModelDiff& diff);

}  // namespace onnxprobe
