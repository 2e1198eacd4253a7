// MeasureLatency: a plain session run N times, timed by the wall clock, with the process's peak
// resident memory over session creation and the runs.
#include "onnxprobe/profile/latency.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// VmRSS and VmHWM of this process in bytes; false where /proc cannot be read.
bool ReadRss(uint64_t* rss, uint64_t* hwm) {
  std::ifstream f("/proc/self/status");
  if (!f) return false;
  std::string line;
  bool got_rss = false, got_hwm = false;
  while (std::getline(f, line)) {
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kb) == 1) {
      *rss = kb * 1024;
      got_rss = true;
    } else if (std::sscanf(line.c_str(), "VmHWM: %llu kB", &kb) == 1) {
      *hwm = kb * 1024;
      got_hwm = true;
    }
  }
  return got_rss && got_hwm;
}

// Resets VmHWM to the current resident set (Linux 4.0+).
bool ResetPeakRss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  bool ok = std::fputs("5", f) >= 0;
  ok = std::fclose(f) == 0 && ok;
  return ok;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + m, v.end());
  double hi = v[m];
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + m);
  return (lo + hi) / 2;
}

Expected<LatencyMeasurement> MeasureLatency(const Model& model, Backend& backend,
                                            const SessionOptions& options,
                                            const std::vector<NamedTensor>& inputs,
                                            const LatencyOptions& latency, bool keep_session) {
  if (latency.runs < 1 || latency.warmup < 0) {
    return InvalidArgument("latency needs at least one measured run (got " +
                           std::to_string(latency.runs) + ") and no negative warm-up");
  }
  OP_ASSIGN_OR_RETURN(std::string bytes, MarkOutputs(model, {}));
  LatencyMeasurement m;
#if defined(__GLIBC__)
  // memory freed earlier in this process (e.g. a comparison's sessions) would otherwise be
  // reused without growing the resident set, hiding what this session needs
  malloc_trim(0);
#endif
  uint64_t unused = 0;
  m.memory.measured = ReadRss(&m.memory.rss_before, &unused);
  m.memory.reset = m.memory.measured && ResetPeakRss();
  auto t0 = std::chrono::steady_clock::now();
  auto session = backend.CreateSession(bytes, model.dir(), options);
  if (!session.ok()) return session.status().WithContext(model.path());
  bytes.clear();
  bytes.shrink_to_fit();
  m.latency.session_ms = MsSince(t0);
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const auto& in : inputs) feed.emplace_back(in.name, &in.tensor);
  const std::vector<std::string> outputs = (*session)->output_names();
  m.latency.warmup = latency.warmup;
  double measured_ms = 0;
  for (int i = 0; i < latency.warmup + latency.runs; ++i) {
    auto t = std::chrono::steady_clock::now();
    auto out = (*session)->Run(feed, outputs);
    double ms = MsSince(t);
    if (!out.ok()) return out.status().WithContext(model.path());
    if (i < latency.warmup) continue;
    m.latency.run_ms.push_back(ms);
    measured_ms += ms;
    if (latency.max_measured_ms > 0 && measured_ms >= latency.max_measured_ms) break;
  }
  const auto& r = m.latency.run_ms;
  m.latency.runs = static_cast<int>(r.size());
  m.latency.median_ms = Median(r);
  m.latency.min_ms = *std::min_element(r.begin(), r.end());
  m.latency.max_ms = *std::max_element(r.begin(), r.end());
  if (m.memory.measured) {
    uint64_t rss = 0;
    m.memory.measured = ReadRss(&rss, &m.memory.rss_peak);
  }
  if (keep_session) m.session = std::move(*session);
  return m;
}

}  // namespace onnxprobe
