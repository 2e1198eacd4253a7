// Framework noise as measured on the rows compared so far (see NoiseFloor in align.h).
#include <algorithm>
#include <cmath>

#include "onnxprobe/align.h"

namespace onnxprobe {

Tolerance NoiseFloor::Raise(Tolerance t) const {
  // atol is per unit of scale when scale_atol is set, like the normalized errors observed
  t.atol = std::max(t.atol, headroom_ * floor_);
  return t;
}

Tolerance NoiseFloor::RaiseForPeriodic(Tolerance t, double argument_scale) const {
  t = Raise(t);
  t.noise_floor = std::max(t.noise_floor, headroom_ * floor_ * std::max(1.0, argument_scale));
  return t;
}

void NoiseFloor::Observe(const TensorMetrics& m, bool passed, double tolerance_ratio) {
  if (!passed || m.count == 0 || !std::isfinite(m.max_abs)) return;
  if (tolerance_ratio > kNearTolerance) return;
  double scale = std::max(
      1.0, m.scale > 0 ? m.scale : std::max(std::fabs(m.stats_a.max), std::fabs(m.stats_a.min)));
  if (!base_.scale_atol) scale = 1.0;
  floor_ = std::max(floor_, m.max_abs / scale);
}

}  // namespace onnxprobe
