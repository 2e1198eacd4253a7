#include "report/report_json.h"

#include <algorithm>
#include <unordered_set>

#include "common/file_util.h"
#include "onnxprobe/common/version.h"
#include "onnxprobe/report/report.h"
#include "report/quant_report.h"

namespace onnxprobe {
namespace {

void StringsJson(JsonWriter& j, const char* key, const std::vector<std::string>& v) {
  j.Key(key).BeginArray();
  for (const auto& x : v) j.String(x);
  j.EndArray();
}

void SideJson(JsonWriter& j, const SideInfo& s, const std::string& description) {
  j.BeginObject();
  j.Key("kind")
      .String(SideKindName(s.kind))
      .Key("path")
      .String(s.path)
      .Key("description")
      .String(description);
  j.Key("model_sha256").String(s.model_sha256).Key("runtime").String(s.runtime);
  j.Key("runtime_version").String(s.runtime_version);
  j.Key("runtime_library").String(s.runtime_library).Key("provider").String(s.provider);
  j.Key("platform").String(s.platform);
  j.Key("provider_options").BeginObject();
  for (const auto& [k, v] : s.provider_options) j.Key(k).String(v);
  j.EndObject();
  j.Key("optimization_level").Int(OptLevelNumber(s.optimization_level));
  j.Key("optimization").String(OptLevelName(s.optimization_level));
  j.Key("sequential").Bool(s.sequential);
  j.Key("intra_op_threads").Int(s.intra_op_threads).Key("inter_op_threads").Int(s.inter_op_threads);
  StringsJson(j, "inlined_ifs", s.inlined_ifs);
  StringsJson(j, "unrolled_loops", s.unrolled_loops);
  j.EndObject();
}

void StatsJson(JsonWriter& j, const TensorStats& s) {
  j.BeginObject().Key("min").Number(s.min).Key("max").Number(s.max).Key("mean").Number(s.mean);
  j.Key("std").Number(s.std).Key("nan").UInt(s.nan_count).Key("inf").UInt(s.inf_count).EndObject();
}

// "diagnosis": present when it ran (docs/report-json.md, docs/diagnose.md).
void WriteDiagnosisJson(const DiagnosisResult& d, JsonWriter* jp) {
  if (!d.ran) return;
  JsonWriter& j = *jp;
  j.Key("diagnosis").BeginObject().Key("runs").UInt(d.runs).Key("seconds").Number(d.seconds);
  j.Key("note").String(d.note).Key("knowledge_file");
  if (d.knowledge_file.empty())
    j.Null();
  else
    j.String(d.knowledge_file);
  j.Key("findings").BeginArray();
  for (const Finding& f : d.findings) {
    j.BeginObject().Key("node").String(f.node).Key("op_type").String(f.op_type);
    j.Key("tensor").String(f.tensor).Key("cause").String(CauseName(f.cause));
    j.Key("certainty").String(CertaintyName(f.certainty)).Key("summary").String(f.summary);
    j.Key("evidence").String(f.evidence).Key("copies").UInt(f.copies);
    j.Key("fix").BeginObject().Key("summary").String(f.fix.summary);
    StringsJson(j, "compare_flags", f.fix.compare_flags);
    j.Key("command").String(f.fix.command).Key("side_b").String(f.fix.side_b);
    StringsJson(j, "keep_float_nodes", f.fix.keep_float_nodes);
    j.EndObject().Key("seen_before").String(f.seen_before).EndObject();
  }
  j.EndArray().Key("unexplained").BeginArray();
  for (const Unexplained& u : d.unexplained) {
    j.BeginObject().Key("node").String(u.node).Key("op_type").String(u.op_type);
    j.Key("tensor").String(u.tensor).Key("tried").String(u.tried).EndObject();
  }
  j.EndArray().EndObject();
}

}  // namespace

// The channels a row's document holds: all up to kCompactChannels (or in a full document),
// else the kCompactChannelsKept with the most mismatches, then the largest error, in channel order.
std::vector<ChannelError> KeptChannels(const std::vector<ChannelError>& all, ReportDetail detail) {
  if (detail == ReportDetail::kFull || all.size() <= kCompactChannels) return all;
  std::vector<ChannelError> kept = all;
  std::stable_sort(kept.begin(), kept.end(), [](const ChannelError& x, const ChannelError& y) {
    if (x.mismatches != y.mismatches) return x.mismatches > y.mismatches;
    return x.max_abs > y.max_abs;
  });
  kept.resize(kCompactChannelsKept);
  std::sort(kept.begin(), kept.end(),
            [](const ChannelError& x, const ChannelError& y) { return x.channel < y.channel; });
  return kept;
}

void RowJson(JsonWriter& j, const TensorResult& t, size_t index, bool full, ReportDetail detail,
             const RowProviders& providers) {
  const TensorMetrics& m = t.metrics;
  j.BeginObject();
  j.Key("index").UInt(index).Key("name").String(t.name);
  if (t.name_b != t.name) j.Key("name_b").String(t.name_b);
  j.Key("detail").String(full ? "full" : "summary");
  j.Key("node").String(t.node).Key("op_type").String(t.op_type).Key("topo_index").Int(t.topo_index);
  if (!providers.a.empty()) j.Key("provider_a").String(providers.a);
  if (!providers.b.empty()) j.Key("provider_b").String(providers.b);
  j.Key("verdict").String(t.pass ? "PASS" : "FAIL").Key("role").String(RoleName(t.role));
  j.Key("state").String(RowStateName(t.state));
  j.Key("within_tolerance").Bool(t.within_tolerance);
  j.Key("tolerance_ratio").Number(t.tolerance_ratio);
  j.Key("grade").String(GradeName(t.grade)).Key("reason").String(t.reason);
  j.Key("atol").Number(t.tolerance.atol).Key("rtol").Number(t.tolerance.rtol);
  j.Key("atol_used").Number(m.atol_used);
  if (t.tolerance.float64_error > 0) j.Key("float64_error").Number(t.tolerance.float64_error);
  if (t.exact_error_a >= 0 && t.exact_error_b >= 0) {
    j.Key("exact_error_a").Number(t.exact_error_a).Key("exact_error_b").Number(t.exact_error_b);
    j.Key("closer").String(CloserToExact(t));
  }
  j.Key("dtype_a").String(DTypeName(m.dtype_a)).Key("dtype_b").String(DTypeName(m.dtype_b));
  j.Key("shape_a").IntArray(m.shape_a).Key("shape_b").IntArray(m.shape_b);
  j.Key("count").UInt(m.count).Key("max_abs").Number(m.max_abs).Key("mean_abs").Number(m.mean_abs);
  j.Key("max_rel").Number(m.max_rel);
  j.Key("mismatches").UInt(m.mismatches).Key("mismatch_fraction").Number(m.mismatch_fraction);
  j.Key("cosine").Number(m.cosine).Key("snr_db").Number(m.snr_db);
  if (!full) {
    j.EndObject();
    return;
  }
  j.Key("stats_a");
  StatsJson(j, m.stats_a);
  j.Key("stats_b");
  StatsJson(j, m.stats_b);
  j.Key("nonfinite_new").UInt(m.nonfinite_new).Key("nonfinite_differ").UInt(m.nonfinite_differ);
  j.Key("p99_abs").Number(m.p99_abs).Key("rel_eps").Number(m.rel_eps);
  j.Key("mean_rel").Number(m.mean_rel).Key("p99_rel").Number(m.p99_rel);
  j.Key("max_abs_index").IntArray(m.max_abs_index);
  j.Key("a_at_max").Number(m.a_at_max).Key("b_at_max").Number(m.b_at_max);
  if (m.has_topk) {
    j.Key("topk").Int(m.topk).Key("argmax_agreement").Number(m.argmax_agreement);
    j.Key("topk_overlap").Number(m.topk_overlap);
  }
  j.Key("exact_matches").UInt(m.exact_matches);
  j.Key("histogram_stride").UInt(m.histogram_stride).Key("histogram_exact").UInt(m.histogram_exact);
  // trimmed to the bins in use: abs_histogram_first is the index of the first one
  size_t first = m.abs_histogram.size(), last = 0;
  for (size_t i = 0; i < m.abs_histogram.size(); ++i) {
    if (!m.abs_histogram[i]) continue;
    first = std::min(first, i);
    last = i + 1;
  }
  if (first > last) first = last;
  j.Key("abs_histogram_first").UInt(first).Key("abs_histogram").BeginFlatArray();
  for (size_t i = first; i < last; ++i) j.UInt(m.abs_histogram[i]);
  j.EndArray();
  std::vector<ChannelError> channels = KeptChannels(m.channels, detail);
  if (channels.size() < m.channels.size()) j.Key("channels_total").UInt(m.channels.size());
  j.Key("channels").BeginFlatArray();
  for (const auto& c : channels) {
    j.BeginArray()
        .Int(c.channel)
        .Number(c.max_abs)
        .Number(c.mean_abs)
        .UInt(c.mismatches)
        .EndArray();
  }
  j.EndArray();
  j.EndObject();
}

const char* ReportDetailName(ReportDetail d) {
  return d == ReportDetail::kFull ? "full" : "compact";
}

bool ParseReportDetail(const std::string& text, ReportDetail* out) {
  if (text != "compact" && text != "full") return false;
  *out = text == "full" ? ReportDetail::kFull : ReportDetail::kCompact;
  return true;
}

std::vector<bool> FullRows(const CompareReport& report, ReportDetail detail) {
  const ComparisonResult& r = report.comparison;
  std::vector<bool> full(r.rows.size(), detail == ReportDetail::kFull);
  if (detail == ReportDetail::kFull) return full;
  std::unordered_set<std::string> outputs(report.graph_outputs.begin(), report.graph_outputs.end());
  auto mark = [&](int row) {
    if (row >= 0 && static_cast<size_t>(row) < full.size()) full[row] = true;
  };
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TensorResult& t = r.rows[i];
    full[i] = !t.pass || !t.within_tolerance || t.role != Role::kPass || outputs.count(t.name) ||
              outputs.count(t.name_b);
  }
  for (const auto* list : {&report.localization.culprits, &report.localization.drift_origins})
    for (const auto& c : *list) mark(c.row);
  for (int row : r.frontier) mark(row);
  mark(r.first_failure);
  mark(r.first_difference);
  return full;
}

void WriteComparisonJson(const CompareReport& report, JsonWriter& j, ReportDetail detail) {
  const ComparisonResult& r = report.comparison;
  const LocalizeResult& l = report.localization;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-compare").Key("schema_version").Int(kReportSchemaVersion);
  j.Key("report_detail").String(ReportDetailName(detail));
  j.Key("onnxprobe_version").String(Version());
  j.Key("verdict").String(r.aborted ? "ERROR" : (report.passed() ? "PASS" : "FAIL"));
  j.Key("aborted").Bool(r.aborted);
  StringsJson(j, "unpaired_outputs", r.unpaired_outputs);
  StringsJson(j, "nan_outputs", r.nan_outputs);
  if (r.aborted) j.Key("abort_reason").String(r.abort_status.message());
  j.Key("side_a");
  SideJson(j, r.side_a, r.describe_a);
  j.Key("side_b");
  SideJson(j, r.side_b, r.describe_b);
  j.Key("inputs").BeginArray();
  for (const auto& in : report.inputs) {
    j.BeginObject().Key("name").String(in.name);
    j.Key("type").String(std::string(DTypeName(in.dtype)) + ShapeToString(in.shape));
    j.Key("dtype").String(DTypeName(in.dtype)).Key("shape").IntArray(in.shape).EndObject();
  }
  j.EndArray();
  j.Key("input_origin").String(InputOriginName(report.input_origin));
  j.Key("input_seed").UInt(report.input_seed);
  j.Key("placement").BeginObject();
  for (auto [key, p] : {std::pair<const char*, const Placement*>{"a", &report.placement_a},
                        {"b", &report.placement_b}}) {
    j.Key(key);
    if (p->provider.empty()) {
      j.Null();
      continue;
    }
    j.BeginObject().Key("provider").String(p->provider).Key("model_nodes").UInt(p->model_nodes);
    for (auto [name, list] :
         {std::pair<const char*, const std::vector<std::string>*>{"partitions", &p->partitions},
          {"on_cpu", &p->on_cpu}}) {
      j.Key(name).BeginArray();
      for (const auto& x : *list) j.String(x);
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndObject();
  j.Key("resources").BeginObject();
  for (auto [key, res] : {std::pair<const char*, const SideResources*>{"a", &report.resources_a},
                          {"b", &report.resources_b}}) {
    j.Key(key);
    if (!res->measured) {
      j.Null();
      continue;
    }
    const LatencyStats& l = res->latency;
    j.BeginObject().Key("latency_ms").BeginObject().Key("runs").Int(l.runs);
    j.Key("median").Number(l.median_ms).Key("min").Number(l.min_ms).Key("max").Number(l.max_ms);
    j.Key("session_creation").Number(l.session_ms).EndObject();
    j.Key("memory").BeginObject().Key("measured").Bool(res->memory.measured);
    j.Key("peak_reset").Bool(res->memory.reset).Key("rss_before").UInt(res->memory.rss_before);
    j.Key("rss_peak").UInt(res->memory.rss_peak).Key("peak_delta").UInt(res->memory.delta());
    j.EndObject().EndObject();
  }
  j.EndObject();
  j.Key("model_diff").String(report.model_diff);
  StringsJson(j, "rewrites", report.rewrites);
  j.Key("exact_reference");
  if (!report.exact) {
    j.Null();
  } else {
    const ExactModel& x = *report.exact;
    ExactCloseness c = SummarizeCloseness(report.comparison);
    j.BeginObject().Key("summary").String(x.Summary());
    j.Key("float64_kernel_nodes").UInt(x.Count(ExactMethod::kFloat64Kernel));
    j.Key("conv_as_matmul_nodes").UInt(x.Count(ExactMethod::kConvAsMatMul));
    j.Key("own_kernel_nodes").UInt(x.Count(ExactMethod::kOwnKernel));
    j.Key("qdq_as_float64_nodes").UInt(x.Count(ExactMethod::kQdqAsFloat64));
    j.Key("float32_nodes").UInt(x.Count(ExactMethod::kFloat32));
    j.Key("rows").UInt(c.rows).Key("closer_a").UInt(c.closer_a).Key("closer_b").UInt(c.closer_b);
    j.Key("ties").UInt(c.ties).Key("worst_relative_a").Number(c.worst_a);
    j.Key("worst_row_a").String(c.worst_a_row).Key("worst_relative_b").Number(c.worst_b);
    j.Key("worst_row_b").String(c.worst_b_row);
    // every node the runtime's own float64 kernels do not compute, with how it is computed
    j.Key("nodes").BeginArray();
    for (const auto& n : x.nodes) {
      if (n.method == ExactMethod::kFloat64Kernel) continue;
      j.BeginObject().Key("node").String(n.node).Key("op_type").String(n.op_type);
      j.Key("method").String(ExactMethodName(n.method));
      if (!n.why.empty()) j.Key("why").String(n.why);
      j.EndObject();
    }
    j.EndArray().EndObject();
  }
  j.Key("parity").BeginObject().Key("ran").Bool(report.parity.ran);
  j.Key("parameters").UInt(report.parity.parameters).Key("by_name").UInt(report.parity.by_name);
  j.Key("folded").UInt(report.parity.folded).Key("renamed").UInt(report.parity.renamed);
  j.Key("findings").BeginArray();
  for (const auto& f : report.parity.findings) {
    j.BeginObject().Key("node").String(f.node).Key("parameter").String(f.parameter);
    j.Key("module").String(f.module).Key("max_abs").Number(f.max_abs);
    j.Key("differing").UInt(f.differing).Key("count").UInt(f.count);
    j.Key("readers").BeginArray();
    for (const auto& n : f.readers) j.String(n);
    j.EndArray();
    j.Key("message").String(f.message).EndObject();
  }
  j.EndArray().EndObject();
  j.Key("notes").BeginArray();
  for (const auto& n : report.notes) j.String(n);
  j.EndArray();
  j.Key("nonfinite_inputs").BeginArray();
  for (const auto& n : report.nonfinite_inputs) j.String(n);
  j.EndArray();
  j.Key("tolerance").BeginObject();
  j.Key("atol").Number(r.policy.global.atol).Key("rtol").Number(r.policy.global.rtol);
  j.Key("scale_atol").Bool(r.policy.global.scale_atol);
  j.Key("judge").String(JudgeByName(r.policy.judge)).Key("rel_eps").Number(r.policy.rel_eps);
  j.Key("rules").BeginArray();
  for (const auto& rule : r.policy.rules) {
    j.BeginObject().Key(rule.by_op_type ? "op_type" : "pattern").String(rule.pattern);
    j.Key("atol").Number(rule.tolerance.atol).Key("rtol").Number(rule.tolerance.rtol).EndObject();
  }
  j.EndArray().EndObject();
  j.Key("summary").BeginObject();
  j.Key("compared").UInt(r.rows.size()).Key("failed").UInt(r.failures);
  j.Key("inherited_passed").UInt(r.inherited_passed);
  j.Key("passed").UInt(r.rows.size() - r.failures);
  j.Key("only_in_a").UInt(r.only_a.size()).Key("only_in_b").UInt(r.only_b.size());
  j.Key("first_divergence");
  if (r.first_failure >= 0)
    j.String(r.rows[r.first_failure].name);
  else
    j.Null();
  j.Key("first_difference");
  if (r.first_difference >= 0)
    j.String(r.rows[r.first_difference].name);
  else
    j.Null();
  j.Key("frontier").BeginArray();
  for (int i : r.frontier) j.String(r.rows[i].name);
  j.EndArray();
  j.Key("bit_exact_by_op").BeginFlatArray();
  for (const auto& e : BitExactByOp(r)) {
    j.BeginObject().Key("op_type").String(e.op_type).Key("compared").UInt(e.compared);
    j.Key("bit_exact").UInt(e.bit_exact).EndObject();
  }
  j.EndArray();
  j.Key("origin_note").String(report.origin_note);
  j.Key("closest_to_tolerance").BeginArray();
  for (int i : ClosestToTolerance(r, 5)) {
    j.BeginObject().Key("name").String(r.rows[i].name).Key("index").Int(i);
    j.Key("tolerance_ratio").Number(r.rows[i].tolerance_ratio).EndObject();
  }
  j.EndArray();
  j.Key("frontier_from_graph").Bool(r.frontier_from_graph);
  j.Key("runs_a").UInt(r.runs_a).Key("runs_b").UInt(r.runs_b).Key("batches").UInt(r.batches);
  j.Key("bisected").Bool(r.bisected).Key("bisect_rounds").UInt(r.bisect_rounds);
  j.Key("seconds").Number(r.seconds);
  j.EndObject();
  j.Key("alignment").BeginArray();
  for (const auto& a : report.alignment) {
    j.BeginObject().Key("torch").String(a.torch_name).Key("module").String(a.module);
    j.Key("module_type").String(a.module_type).Key("call_index").Int(a.call_index);
    j.Key("output_index").Int(a.output_index).Key("onnx");
    if (a.onnx_tensor.empty())
      j.Null();
    else
      j.String(a.onnx_tensor);
    j.Key("method")
        .String(AlignMethodName(a.method))
        .Key("confidence")
        .Number(a.confidence)
        .Key("note")
        .String(a.note)
        .Key("inside")
        .Bool(a.inside);
    j.EndObject();
  }
  j.EndArray();
  j.Key("localization").BeginObject();
  j.Key("ran").Bool(l.ran).Key("note").String(l.note);
  j.Key("isolation_runs").UInt(l.isolation_runs).Key("side_a_runs").UInt(l.side_a_runs);
  j.Key("seconds").Number(l.seconds);
  j.Key("repro_dir");
  if (l.repro_dir.empty())
    j.Null();
  else
    j.String(l.repro_dir);
  j.Key("culprits").BeginArray();
  for (const auto& c : l.culprits) {
    j.BeginObject().Key("evidence").String(EvidenceName(c.evidence));
    j.Key("tensor").String(c.tensor).Key("node").String(c.node).Key("op_type").String(c.op_type);
    j.Key("row").Int(c.row).Key("isolated").Bool(c.isolated).Key("introduced").Bool(c.introduced);
    j.Key("error").String(c.error).Key("reason").String(c.reason);
    j.Key("nodes").BeginArray();
    for (const auto& n : c.nodes) j.String(n);
    j.EndArray().Key("nodes_only_in_b").BeginArray();
    for (const auto& n : c.nodes_only_in_b) j.String(n);
    j.EndArray().Key("constant_fit");
    if (c.fit.node.empty()) {
      j.Null();
    } else {
      j.BeginObject().Key("node").String(c.fit.node).Key("op_type").String(c.fit.op_type);
      j.Key("constant").String(c.fit.constant).Key("value").Number(c.fit.value);
      j.Key("fitted").Number(c.fit.fitted).EndObject();
    }
    j.Key("isolated_max_abs")
        .Number(c.metrics.max_abs)
        .Key("isolated_max_rel")
        .Number(c.metrics.max_rel);
    j.Key("isolated_mismatches").UInt(c.metrics.mismatches);
    j.Key("accumulated_max_rel").Number(c.accumulated_max_rel);
    j.Key("origin");
    c.origin.empty() ? j.Null() : j.String(c.origin);
    j.EndObject();
  }
  j.EndArray().EndObject();
  WriteDiagnosisJson(report.diagnosis, &j);
  if (report.optimizations_explained) {
    const ExplainResult& e = report.optimizations;
    j.Key("optimizations").BeginObject().Key("ladder").BeginArray();
    for (const auto& st : e.ladder) {
      j.BeginObject().Key("level").String(OptLevelName(st.level)).Key("max_abs").Number(st.max_abs);
      j.Key("differing_outputs").UInt(st.differing_outputs);
      j.Key("within_tolerance").Bool(st.within_tolerance).EndObject();
    }
    j.EndArray().Key("first_level_with_difference");
    if (!e.first_level_with_difference)
      j.Null();
    else
      j.String(OptLevelName(*e.first_level_with_difference));
    j.Key("responsible").BeginArray();
    for (const auto& n : e.responsible) j.String(n);
    j.EndArray().Key("explained_by_transformers").Bool(e.explained_by_transformers);
    j.Key("runs").UInt(e.runs).EndObject();
  }
  j.Key("drift_origins").BeginArray();
  for (const auto& c : l.drift_origins) {
    j.BeginObject().Key("node").String(c.node).Key("op_type").String(c.op_type);
    j.Key("tensor").String(c.tensor).Key("isolated").Bool(c.isolated);
    j.Key("isolated_max_abs").Number(c.metrics.max_abs);
    j.Key("isolated_max_rel").Number(c.metrics.max_rel);
    j.Key("nodes").BeginArray();
    for (const auto& n : c.nodes) j.String(n);
    j.EndArray().Key("nodes_only_in_b").BeginArray();
    for (const auto& n : c.nodes_only_in_b) j.String(n);
    j.EndArray().Key("reason").String(c.reason).EndObject();
  }
  j.EndArray();
  j.Key("drift_unexamined").UInt(l.drift_unexamined);
  if (report.quant.active()) {
    j.Key("quantization");
    QuantJson(j, report.quant);
  }
  j.Key("only_in_a").BeginArray();
  for (const auto& n : r.only_a) j.String(n);
  j.EndArray().Key("only_in_b").BeginArray();
  for (const auto& n : r.only_b) j.String(n);
  j.EndArray();
  j.Key("fused_in_b").BeginArray();
  for (const auto& n : r.hidden_b) j.String(n);
  j.EndArray();
  j.Key("histogram")
      .BeginObject()
      .Key("min_exp2")
      .Int(kHistMinExp)
      .Key("bins_per_octave")
      .Int(kHistPerOctave)
      .EndObject();
  StringsJson(j, "graph_outputs", report.graph_outputs);
  std::vector<bool> full = FullRows(report, detail);
  j.Key("tensors").BeginArray();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    RowProviders on{ProviderOfNode(report.placement_a, r.rows[i].node),
                    ProviderOfNode(report.placement_b, r.rows[i].node)};
    RowJson(j, r.rows[i], i, full[i], detail, on);
  }
  j.EndArray();
  j.EndObject();
}

std::vector<int> ClosestToTolerance(const ComparisonResult& r, size_t n) {
  std::vector<int> idx;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].state == RowState::kCompared) idx.push_back(static_cast<int>(i));
  }
  std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) {
    return r.rows[x].tolerance_ratio > r.rows[y].tolerance_ratio;
  });
  if (idx.size() > n) idx.resize(n);
  return idx;
}

Status WriteReport(const Reporter& reporter, const CompareReport& r, const std::string& path) {
  return WriteFileAtomic(path, reporter.Render(r));
}

}  // namespace onnxprobe
