// OP004: Resize settings that give different pixels than the framework the model came from
// (opset 11+ Resize; the coordinate mapping is x_in = f(x_out, scale) per
// coordinate_transformation_mode, then nearest_mode rounds it in "nearest" mode).
//
// Flagged:
// - nearest + asymmetric + nearest_mode other than floor (warning): PyTorch's mode='nearest' is
//   asymmetric + floor. round_prefer_floor picks the next source pixel whenever x_out/scale has
//   a fraction above one half (upsampling by 3, by 1.5, ...; scale 2 happens to agree), so only
//   scales (when constant) that produce such a fraction are flagged.
// - linear/cubic + asymmetric (warning): no PyTorch setting maps to it (align_corners=False is
//   half_pixel/pytorch_half_pixel, True is align_corners); it is TF1's half_pixel_centers=False
//   and shifts the image by half an input pixel against both.
// - linear/cubic + half_pixel with an output size of 1 on a resized axis (info): half_pixel
//   samples the centre of the input there, PyTorch (pytorch_half_pixel) samples its first pixel.
// - linear/cubic downsampling without antialias (info): matches F.interpolate(antialias=False)
//   but not PIL, torchvision's Resize(antialias=True) or tf.image.resize(antialias=True), whose
//   outputs average over the footprint; a model trained on antialiased inputs sees aliasing.
#include <cmath>

#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

struct ResizeInfo {
  std::string mode, ctm, nearest_mode;
  int64_t antialias = 0;
  std::vector<double> scales;    // per resized axis, when constant
  std::vector<int64_t> sizes;    // per resized axis, when constant
  std::vector<int64_t> in_dims;  // per resized axis (-1 unknown)
};

// Input dimensions of the axes the scales/sizes refer to.
std::vector<int64_t> ResizedInputDims(const LintContext& ctx, const NodeInfo& n, size_t count) {
  const ValueInfo* x = ctx.Type(n.inputs[0]);
  std::vector<int64_t> axes;
  if (const auto* a = FindAttr(ctx.Proto(n), "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  std::vector<int64_t> out(count, -1);
  if (x == nullptr || !x->has_shape) return out;
  const int64_t rank = int64_t(x->dims.size());
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes.empty() ? int64_t(i) : axes[i];
    if (axis < 0) axis += rank;
    if (axis >= 0 && axis < rank) out[i] = x->dims[axis].value;
  }
  return out;
}

ResizeInfo Read(const LintContext& ctx, const NodeInfo& n) {
  const onnx::NodeProto& p = ctx.Proto(n);
  ResizeInfo r;
  r.mode = AttrString(p, "mode", "nearest");
  r.ctm = AttrString(p, "coordinate_transformation_mode", "half_pixel");
  r.nearest_mode = AttrString(p, "nearest_mode", "round_prefer_floor");
  r.antialias = AttrInt(p, "antialias", 0);
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto v = ctx.ConstantValue(n.inputs[2]);
    if (v.ok()) {
      for (uint64_t i = 0; i < v->num_elements(); ++i) r.scales.push_back(ElementAsDouble(*v, i));
    }
  }
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
    auto v = ctx.ConstantValue(n.inputs[3]);
    if (v.ok()) {
      for (uint64_t i = 0; i < v->num_elements(); ++i)
        r.sizes.push_back(int64_t(ElementAsDouble(*v, i)));
    }
  }
  r.in_dims = ResizedInputDims(ctx, n, std::max(r.scales.size(), r.sizes.size()));
  // sizes with known inputs give the scales the runtime computes (out / in)
  if (r.scales.empty() && !r.sizes.empty()) {
    bool known = true;
    for (int64_t d : r.in_dims) known &= d > 0;
    if (known) {
      for (size_t i = 0; i < r.sizes.size(); ++i)
        r.scales.push_back(double(r.sizes[i]) / r.in_dims[i]);
    }
  }
  return r;
}

// The first output index whose source position rounds differently under `mode` than under
// floor (PyTorch's nearest), or -1 when none does for this scale.
int64_t FirstNearestDifference(double scale, const std::string& mode) {
  if (scale == 1.0) return -1;
  for (int64_t x = 0; x < 4096; ++x) {
    double pos = double(float(x) / float(scale));
    double frac = pos - std::floor(pos);
    bool differs = mode == "round_prefer_floor"  ? frac > 0.5
                   : mode == "round_prefer_ceil" ? frac >= 0.5
                   : mode == "ceil"              ? frac > 0
                                                 : false;
    if (differs) return x;
  }
  return -1;
}

std::string ScalesText(const std::vector<double>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + Num(s[i]);
  return out + "]";
}

void Add(const NodeInfo& n, LintSeverity s, std::string message, const char* why, const char* fix,
         std::vector<LintFinding>* out) {
  LintFinding f = MakeFinding(s, &n);
  f.message = std::move(message);
  f.why = why;
  f.fix = fix;
  out->push_back(std::move(f));
}

}  // namespace

void CheckResizeCoordinates(const LintContext& ctx, std::vector<LintFinding>* out) {
  if (ctx.Opset() < 11) return;
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.op_type != "Resize" || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    ResizeInfo r = Read(ctx, n);
    const bool smooth = r.mode == "linear" || r.mode == "cubic";
    const std::string label =
        "Resize " + NodeLabel(n) + " (mode=" + r.mode + ", coordinate_transformation_mode=" + r.ctm;
    if (r.mode == "nearest" && r.ctm == "asymmetric" && r.nearest_mode != "floor") {
      std::string evidence;
      bool differs = r.scales.empty();
      for (double s : r.scales) {
        int64_t x = FirstNearestDifference(s, r.nearest_mode);
        if (x < 0) continue;
        differs = true;
        evidence = "; with scale " + Num(s) + " output index " + std::to_string(x) +
                   " reads input " +
                   std::to_string(int64_t(std::floor(double(float(x) / float(s))) + 1)) +
                   " where floor reads " +
                   std::to_string(int64_t(std::floor(double(float(x) / float(s)))));
        break;
      }
      if (differs) {
        Add(n, LintSeverity::kWarning,
            label + ", nearest_mode=" + r.nearest_mode + ") rounds source positions" +
                (r.scales.empty() ? " (scales not constant: may differ)" : evidence),
            "PyTorch's mode='nearest' reads input floor(x_out / scale) (asymmetric + floor); this "
            "node rounds instead and copies a different source pixel, an error the size of a "
            "pixel step that no tolerance hides",
            "export nearest upsampling with nearest_mode=floor (torch.onnx does), or use "
            "coordinate_transformation_mode=half_pixel with round_prefer_ceil for "
            "mode='nearest-exact'",
            out);
      }
    }
    if (smooth && r.ctm == "asymmetric") {
      Add(n, LintSeverity::kWarning, label + ") has no PyTorch equivalent",
          "asymmetric maps x_in = x_out / scale, TF1's half_pixel_centers=False: against "
          "PyTorch's align_corners=False (half_pixel / pytorch_half_pixel) the image shifts by "
          "half an input pixel and edges differ",
          "use pytorch_half_pixel (align_corners=False) or align_corners (align_corners=True) to "
          "match PyTorch; keep asymmetric only for a TF1 model that was trained with it",
          out);
    }
    if (smooth && r.ctm == "half_pixel") {
      for (size_t i = 0; i < r.sizes.size(); ++i) {
        if (r.sizes[i] == 1 && r.in_dims[i] != 1) {
          Add(n, LintSeverity::kInfo, label + ") resizes axis " + std::to_string(i) + " to size 1",
              "with an output size of 1, half_pixel samples the centre of the input and PyTorch "
              "(pytorch_half_pixel) its first pixel, so the value differs from the framework's",
              "export with coordinate_transformation_mode=pytorch_half_pixel", out);
          break;
        }
      }
    }
    if (smooth && r.antialias == 0) {
      for (size_t i = 0; i < r.scales.size(); ++i) {
        if (r.scales[i] > 0 && r.scales[i] < 1) {
          Add(n, LintSeverity::kInfo,
              label + ") downsamples by scale " + ScalesText(r.scales) + " without antialias",
              "linear/cubic downsampling without antialias reads only the nearest input pixels: "
              "it matches F.interpolate(antialias=False) but not PIL, torchvision "
              "Resize(antialias=True) or tf.image.resize(antialias=True), so a model whose "
              "training inputs were antialiased sees aliasing here",
              "set antialias=1 (opset 18) to match antialiased preprocessing, or resize outside "
              "the model with the training pipeline's resize",
              out);
          break;
        }
      }
    }
  }
}

}  // namespace onnxprobe::lint
