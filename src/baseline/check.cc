// CheckBaseline: each sample's stored dump (side A) against a live run of the model now
// (side B) in one comparison session (side B opened once); environment changes; localization of
// failing samples; per-tensor aggregates over the samples.
#include <chrono>
#include <filesystem>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/baseline/baseline.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/common/hash.h"
#include "onnxprobe/pipeline/comparison_session.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string DumpPath(const Baseline& b, const BaselineSampleEntry& s) {
  return (fs::path(b.dir) / s.dump).string();
}

CompareRequest BaseRequest(const Baseline& b, const BaselineCheckRequest& req) {
  CompareRequest c;
  c.job.policy = b.policy;
  c.job.max_memory = req.max_memory;
  c.localize = req.localize;
  c.localize_options.drift = false;  // a check answers "which node breaks it", not "which drifts"
  return c;
}

void SetFirstDiverging(const ComparisonResult& r, SampleLocalization* l) {
  if (r.first_failure < 0) return;
  const TensorResult& row = r.rows[r.first_failure];
  l->first_diverging = row.name;
  l->first_diverging_node = row.node;
}

// Introduced culprits; with `alone`, only those whose node ran by itself (every input of it was
// stored), not inside a subgraph reaching back to the nearest stored tensors.
std::vector<Culprit> Introducing(const LocalizeResult& l, bool alone) {
  std::vector<Culprit> out;
  for (const auto& c : l.culprits) {
    if (c.isolated && c.introduced && c.row >= 0 && (!alone || c.nodes.size() <= 1))
      out.push_back(c);
  }
  return out;
}

// "the error is introduced within the 4 nodes between the stored tensors and Y (add, ...)":
// where a failing tensor's error must be born when no node ran alone.
std::string Span(const std::vector<Culprit>& spans) {
  std::string s;
  for (const auto& c : spans) {
    std::string nodes;
    for (const auto& n : c.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    s += (s.empty() ? "" : "; ") + std::string("the error is introduced within the ") +
         std::to_string(c.nodes.size()) + " nodes between the stored tensors and " + c.tensor +
         " (" + nodes + ")";
  }
  return s;
}

// The model and runtime the baseline was made with, when they can still be run here.
struct Reference {
  std::string model, library, why_not;
};

Reference FindReference(const BaselineCheckRequest& req, const Baseline& b,
                        const Environment& now) {
  Reference ref;
  const Environment& was = b.environment;
  if (b.model_kept) {
    ref.model = (fs::path(b.dir) / kBaselineModelFile).string();
  } else if (now.model_sha256 == was.model_sha256) {
    ref.model = req.model_path;
  } else if (!b.model_path.empty() && FileSha256(b.model_path) == was.model_sha256) {
    ref.model = b.model_path;  // the file it was saved from is still there, unchanged
  } else {
    ref.why_not =
        "the model changed since the baseline was saved, the file it was saved from (" +
        b.model_path +
        ") no longer holds it, and the baseline holds neither a copy of it (--keep-model) nor "
        "its intermediate tensors";
    return ref;
  }
  if (!was.runtime_library_sha256.empty() &&
      FileSha256(was.runtime_library) == was.runtime_library_sha256) {
    ref.library = was.runtime_library;
  } else if (!was.runtime_library_sha256.empty() &&
             now.runtime_library_sha256 == was.runtime_library_sha256) {
    ref.library = now.runtime_library;
  } else {
    ref.model.clear();
    ref.why_not = "the runtime the baseline was made with (onnxruntime " + was.runtime_version +
                  ", " + was.runtime_library + ") is not available here with the same bytes";
  }
  return ref;
}

// A failing sample: localized from the stored intermediates when the comparison against them
// named an introducing node; otherwise the baseline's model and runtime, captured in full, are
// compared with the current run on the sample's inputs.
SampleLocalization LocalizeSample(const BaselineCheckRequest& req, const Baseline& b,
                                  const Environment& now, const SessionOptions& session,
                                  const BaselineSampleEntry& entry, const CompareReport& stored) {
  SampleLocalization l;
  l.introducing = Introducing(stored.localization, true);
  if (!l.introducing.empty()) {
    l.method = LocalizeMethod::kStoredTensors;
    SetFirstDiverging(stored.comparison, &l);
    return l;
  }
  l.method = LocalizeMethod::kUnavailable;
  if (!req.localize) {
    l.note = "localization is off";
    return l;
  }
  Reference ref = FindReference(req, b, now);
  if (ref.model.empty()) {
    SetFirstDiverging(stored.comparison, &l);
    std::string span = Span(Introducing(stored.localization, false));
    l.note = ref.why_not + (span.empty() ? "" : "; " + span);
    return l;
  }
  auto dump = DumpReader::Open(DumpPath(b, entry));
  if (!dump.ok()) {
    l.note = dump.status().message();
    return l;
  }
  CompareRequest c = BaseRequest(b, req);
  for (const auto& e : (*dump)->entries()) {
    if (e.kind != DumpEntryKind::kInput) continue;
    auto t = (*dump)->Load(e);
    if (!t.ok()) {
      l.note = t.status().message();
      return l;
    }
    c.inputs.tensors.push_back({e.name, std::move(*t)});
  }
  c.inputs_given = true;
  c.a = SideRequest{ref.model, b.environment.session, true, ref.library};
  c.b = SideRequest{req.model_path, session, true, req.ort_library};
  c.latency_runs = 0;  // a localization run: its timing is not reported
  auto rerun = Compare(c);
  if (!rerun.ok()) {
    l.note = "re-running the baseline's model and runtime failed: " + rerun.status().message();
    return l;
  }
  l.method = LocalizeMethod::kRerun;
  l.has_rerun = true;
  l.rerun = std::move(*rerun);
  const ComparisonResult& r = l.rerun.comparison;
  if (r.aborted) {
    l.note = "the full comparison stopped early: " + r.abort_status.message();
  } else if (r.failures == 0) {
    l.note =
        "the baseline's model and runtime, re-run here with its session options, agree with "
        "the current run within tolerance: what changed is outside the model, the runtime and "
        "the session options (e.g. the CPU or OS), so no node can be named";
  } else {
    SetFirstDiverging(r, &l);
    l.introducing = Introducing(l.rerun.localization, false);
    if (l.introducing.empty()) l.note = l.rerun.origin_note;
  }
  return l;
}

}  // namespace

const char* LocalizeMethodName(LocalizeMethod m) {
  switch (m) {
    case LocalizeMethod::kNotNeeded:
      return "not-needed";
    case LocalizeMethod::kStoredTensors:
      return "stored-tensors";
    case LocalizeMethod::kRerun:
      return "rerun";
    case LocalizeMethod::kUnavailable:
      return "unavailable";
    case LocalizeMethod::kSkipped:
      return "skipped";
  }
  return "?";
}

Expected<BaselineCheckReport> CheckBaseline(const BaselineCheckRequest& req) {
  auto t0 = Clock::now();
  BaselineCheckReport rep;
  rep.model_path = req.model_path;
  OP_ASSIGN_OR_RETURN(rep.baseline, ReadBaseline(req.baseline_dir));
  const Baseline& b = rep.baseline;
  std::error_code ec;
  if (!fs::is_regular_file(req.model_path, ec))
    return NotFound(req.model_path + ": no such model file");
  std::string sha256 = FileSha256(req.model_path);
  if (sha256.empty()) return IoError(req.model_path + ": cannot read");
  SessionOptions session_options = req.session_given ? req.session : b.environment.session;
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  rep.current = SnapshotEnvironment(*backend, session_options, sha256);
  rep.changes = DiffEnvironments(b.environment, rep.current);

  rep.shard = req.shard;
  rep.localize_samples = req.max_localized_samples;
  OP_ASSIGN_OR_RETURN(std::vector<size_t> positions,
                      ShardPositions(b.samples.size(), req.shard, "the baseline's"));
  std::unique_ptr<ComparisonSession> session;
  for (size_t pos : positions) {
    const BaselineSampleEntry& entry = b.samples[pos];
    rep.positions.push_back(pos);
    SampleCheck sc;
    sc.name = entry.name;
    SessionRun run;
    run.side_a = DumpPath(b, entry);
    run.localize = req.localize && rep.failed_samples < req.max_localized_samples;
    run.measure_resources = false;  // a baseline check reports numerics, not timing
    if (session == nullptr) {
      CompareRequest c = BaseRequest(b, req);
      c.a = SideRequest{run.side_a, SessionOptions(), false, ""};
      c.b = SideRequest{req.model_path, session_options, true, req.ort_library};
      c.latency_runs = 0;
      SessionOpenOptions open;
      open.hold_sessions = b.samples.size() > 1;
      auto opened = ComparisonSession::Open(c, open);
      if (!opened.ok()) return opened.status().WithContext("sample '" + entry.name + "'");
      session = std::move(*opened);
    }
    auto ts = Clock::now();
    auto last = ts;
    run.on_row = [&](const TensorResult& row, size_t, size_t) {
      sc.row_seconds[row.name] = Since(last);
      last = Clock::now();
    };
    auto report = session->Run(run);
    if (!report.ok()) return report.status().WithContext("sample '" + entry.name + "'");
    sc.report = std::move(*report);
    sc.seconds = Since(ts);
    const ComparisonResult& r = sc.report.comparison;
    if (r.aborted) {
      rep.aborted = true;
      rep.abort_status = r.abort_status.WithContext("sample '" + entry.name + "'");
      rep.samples.push_back(std::move(sc));
      break;
    }
    if (!sc.passed()) {
      ++rep.failed_samples;
      if (rep.failed_samples <= req.max_localized_samples) {
        sc.localization = LocalizeSample(req, b, rep.current, session_options, entry, sc.report);
      } else {
        sc.localization.method = LocalizeMethod::kSkipped;
        SetFirstDiverging(sc.report.comparison, &sc.localization);
        sc.localization.note = "not localized: only the first " +
                               std::to_string(req.max_localized_samples) +
                               " failing sample(s) are localized (max_localized_samples)";
      }
    }
    rep.samples.push_back(std::move(sc));
    if (req.on_sample && !req.on_sample(rep.samples.size(), positions.size()) &&
        rep.samples.size() < positions.size()) {
      return InvalidArgument("baseline check stopped by the caller after sample '" + entry.name +
                             "'");
    }
  }
  std::vector<NamedComparison> named;
  for (const auto& s : rep.samples) named.push_back({s.name, &s.report.comparison});
  rep.tensors = AggregateSamples(named, b.tensors);
  rep.seconds = Since(t0);
  return rep;
}

}  // namespace onnxprobe
