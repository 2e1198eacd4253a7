// Plain inference runs measured: latency (median of N runs after warm-up) and the process's
// peak resident memory while the session is created and run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace onnxprobe {

// Peak memory from the kernel's count of the process's resident pages (/proc/self/status VmRSS,
// VmHWM). Before the session is created the peak is reset (/proc/self/clear_refs), so the peak
// is that of session creation and runs; `delta` is what they added to the resident set.
struct PeakMemory {
  bool measured = false;    // false where /proc/self/status cannot be read
  bool reset = false;       // false: the peak could not be reset and counts from process start
  uint64_t rss_before = 0;  // bytes resident before the session was created
  uint64_t rss_peak = 0;    // peak bytes resident during session creation and the runs
  uint64_t delta() const { return rss_peak > rss_before ? rss_peak - rss_before : 0; }
};

struct LatencyOptions {
  int runs = 5;    // measured runs (the most measured when max_measured_ms is set)
  int warmup = 1;  // runs before them, not measured
  // > 0: the measured runs stop once they have taken this many milliseconds in all (at least one
  // is measured), so a slow model's sample costs about what a fast one's does; 0: exactly `runs`.
  double max_measured_ms = 0;
};

struct LatencyStats {
  int runs = 0, warmup = 0;
  double session_ms = 0;  // session creation
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> run_ms;  // every measured run, in order
};

struct LatencyMeasurement {
  LatencyStats latency;
  PeakMemory memory;
  // The session, kept when asked (e.g. to end its profiler); null otherwise.
  std::unique_ptr<BackendSession> session;
};

// Creates a session for `model` with `options` and runs it warmup + runs times with `inputs`
// (fewer under max_measured_ms: LatencyStats::runs says how many were measured), fetching the
// graph outputs. Fails with kInvalidArgument on bad options (runs < 1), kBackend
// when the runtime rejects the model or a run fails.
Expected<LatencyMeasurement> MeasureLatency(const Model& model, Backend& backend,
                                            const SessionOptions& options,
                                            const std::vector<NamedTensor>& inputs,
                                            const LatencyOptions& latency, bool keep_session);

// The median of `v` (mean of the two middle values for an even count); 0 when empty.
double Median(std::vector<double> v);

}  // namespace onnxprobe
