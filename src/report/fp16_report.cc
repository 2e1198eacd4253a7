// Text and JSON renderings of a float16 report (the CLI only prints them).
#include "onnxprobe/report/fp16_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/fp16/fp16.h"

namespace onnxprobe {
namespace {

// Whether a node kept for its error lost more than float16 must (its kernel) or not (the
// tolerance asks for more than float16 holds there).
std::string BlockWhy(const Fp16BlockEntry& b) {
  if (b.reason != Fp16BlockReason::kError || b.storage_error <= 0) return "";
  std::string ratio = FormatNumber(b.isolated_error / b.storage_error) + "x";
  if (b.beyond_storage) {
    return ": its float16 kernel loses " + ratio +
           " what float16 storage must (it computes in float16)";
  }
  return ": " + ratio + " what float16 storage must (float16 itself is too coarse here)";
}

std::string NodeLabel(const std::string& node, const std::string& op_type, int topo) {
  return (node.empty() ? "#" + std::to_string(topo) : node) + " (" + op_type + ")";
}

}  // namespace

std::string RenderFp16Text(const Fp16Report& r, size_t top) {
  std::string out = r.model + " on " + r.runtime + ": " + std::to_string(r.node_count) +
                    " nodes, " + std::to_string(r.convertible) + " can run in float16\n";
  size_t overflowing = 0, subnormal = 0;
  double worst_rt = 0;
  for (const auto& t : r.tensors) {
    overflowing += t.overflow > 0;
    subnormal += t.subnormal_share > 0.01;
    worst_rt = std::max(worst_rt, t.roundtrip_error);
  }
  out += "float32 run, " + std::to_string(r.tensors.size()) +
         " float tensors: " + std::to_string(overflowing) + " overflow float16, " +
         std::to_string(subnormal) +
         " have > 1% of nonzero values below 2^-14, largest round-trip error " +
         FormatNumber(worst_rt) + "\n";
  for (const auto& t : r.tensors) {
    if (t.overflow == 0) continue;
    out += "  overflow  " + t.name + ": " + std::to_string(t.overflow) + " of " +
           std::to_string(t.elements) + " values become Inf in float16 (max |x| " +
           FormatNumber(t.max_abs) + ")\n";
  }
  std::vector<const Fp16TensorRow*> small;
  for (const auto& t : r.tensors) {
    if (t.subnormal_share > 0.01) small.push_back(&t);
  }
  std::stable_sort(small.begin(), small.end(), [](const auto* a, const auto* b) {
    return a->subnormal_share * a->elements > b->subnormal_share * b->elements;  // most values
  });
  for (size_t i = 0; i < small.size() && i < 5; ++i) {
    char share[32];
    std::snprintf(share, sizeof share, "%.3g%%", small[i]->subnormal_share * 100);
    out += "  small     " + small[i]->name + ": " + share +
           " of nonzero values below 2^-14 (subnormal or 0 in float16)\n";
  }
  if (small.size() > 5) out += "  small     ... " + std::to_string(small.size() - 5) + " more\n";
  out += "\nnodes run alone in float16 (" + std::to_string(r.isolation_runs) +
         (r.isolation_runs == 1 ? " run" : " runs") + "), worst first:\n";
  out += "  rank  isolated err  storage err  overflow out / in  node\n";
  size_t shown = 0;
  for (const auto& n : r.nodes) {
    if (shown == top) break;
    if (n.eligibility != Fp16Eligibility::kConvertible) continue;
    ++shown;
    std::string err = !n.runtime_error.empty() ? "rejected"
                      : n.overflow > 0         ? "inf"
                                               : FormatNumber(n.isolated_error);
    std::string storage = n.storage_measured ? FormatNumber(n.storage_error) : "-";
    if (LosesMoreThanFp16Storage(n)) storage += "!";
    char line[128];
    std::snprintf(line, sizeof line, "  %4zu  %12s  %11s  %8llu / %-6llu  ", shown, err.c_str(),
                  storage.c_str(), static_cast<unsigned long long>(n.overflow),
                  static_cast<unsigned long long>(n.input_overflow));
    out += line + NodeLabel(n.node, n.op_type, n.topo_index) + "\n";
  }
  out += "\nblock list (" + std::to_string(r.block_list.size()) + " kept in float32" +
         (r.passed ? "" : ", not enough") + "):";
  if (r.block_list.empty()) out += " empty";
  out += "\n";
  for (const auto& b : r.block_list) {
    out += "  " + NodeLabel(b.node, b.op_type, b.topo_index) + "  " +
           Fp16BlockReasonName(b.reason) + BlockWhy(b) + "\n";
  }
  if (std::any_of(r.nodes.begin(), r.nodes.end(), LosesMoreThanFp16Storage)) {
    out +=
        "  (storage err: the node in float32 from float16 inputs, its result rounded to "
        "float16 once; ! loses over twice that in float16)\n";
  }
  out += "\nattempts (|fp16 - fp32| <= atol + " + FormatNumber(r.rtol) + " |fp32|; atol";
  for (const auto& [name, atol] : r.output_atol) out += " " + name + " " + FormatNumber(atol);
  out += "):\n";
  if (r.attempts.empty()) {
    out += "  none: the " + std::to_string(r.block_list.size()) +
           " nodes that must stay in float32 are more than the limit of " +
           std::to_string(r.max_blocked) + "\n";
  }
  for (const auto& a : r.attempts) {
    out += "  " + std::to_string(a.blocked) + " in float32: ";
    if (!a.error.empty()) {
      out += "runtime error: " + a.error + "\n";
      continue;
    }
    out += std::string(a.passed ? "pass" : "FAIL") + ", worst " + FormatNumber(a.worst_ratio) +
           "x tolerance at " + a.worst_output + " (max abs error " + FormatNumber(a.max_abs) +
           ", relative " + FormatNumber(a.rel_error) + ")";
    if (a.nonfinite) out += ", " + std::to_string(a.nonfinite) + " non-finite";
    out += "\n";
  }
  out += "\n" + std::to_string(r.model_runs) + " model runs, " + std::to_string(r.sessions) +
         " sessions, " + FormatNumber(r.seconds) + " s\n";
  if (r.passed) {
    out += "result: PASS, the converted model matches float32 within tolerance";
    out += r.output_model.empty() ? "\n" : "; written to " + r.output_model + "\n";
    if (!r.size_note.empty()) out += "warning: " + r.size_note + "\n";
  } else {
    out += "result: FAIL, no block list reached tolerance\n";
  }
  return out;
}

std::string RenderFp16Json(const Fp16Report& r) {
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-fp16").Key("schema_version").Int(1);
  j.Key("model").String(r.model).Key("runtime").String(r.runtime);
  j.Key("atol").Number(r.atol).Key("atol_scale").Number(r.atol_scale);
  j.Key("rtol").Number(r.rtol);
  j.Key("output_atol").BeginObject();
  for (const auto& [name, atol] : r.output_atol) j.Key(name).Number(atol);
  j.EndObject();
  j.Key("passed").Bool(r.passed).Key("output_model").String(r.output_model);
  j.Key("output_bytes")
      .UInt(r.output_bytes)
      .Key("float32_weight_bytes")
      .UInt(r.float32_weight_bytes);
  j.Key("size_note").String(r.size_note);
  j.Key("max_blocked").Int(r.max_blocked);
  j.Key("node_count").UInt(r.node_count).Key("convertible").UInt(r.convertible);
  j.Key("model_runs").UInt(r.model_runs).Key("isolation_runs").UInt(r.isolation_runs);
  j.Key("sessions").UInt(r.sessions).Key("seconds").Number(r.seconds);
  j.Key("block_list").BeginArray();
  for (const auto& b : r.block_list) {
    j.BeginObject().Key("node").String(b.node).Key("op_type").String(b.op_type);
    j.Key("topo_index").Int(b.topo_index).Key("reason").String(Fp16BlockReasonName(b.reason));
    j.Key("isolated_error").Number(std::isinf(b.isolated_error) ? 1e300 : b.isolated_error);
    j.Key("storage_error").Number(b.storage_error).Key("beyond_storage").Bool(b.beyond_storage);
    j.EndObject();
  }
  j.EndArray();
  j.Key("attempts").BeginArray();
  for (const auto& a : r.attempts) {
    j.BeginObject().Key("blocked").UInt(a.blocked).Key("passed").Bool(a.passed);
    j.Key("worst_ratio").Number(std::isinf(a.worst_ratio) ? 1e300 : a.worst_ratio);
    j.Key("worst_output").String(a.worst_output).Key("nonfinite").UInt(a.nonfinite);
    j.Key("max_abs").Number(a.max_abs).Key("rel_error").Number(a.rel_error);
    j.Key("error").String(a.error).EndObject();
  }
  j.EndArray();
  j.Key("nodes").BeginArray();
  for (const auto& n : r.nodes) {
    j.BeginObject().Key("node").String(n.node).Key("op_type").String(n.op_type);
    j.Key("topo_index").Int(n.topo_index);
    j.Key("eligibility").String(Fp16EligibilityName(n.eligibility));
    j.Key("isolated").Bool(n.isolated);
    j.Key("isolated_error").Number(std::isinf(n.isolated_error) ? 1e300 : n.isolated_error);
    j.Key("isolated_max_abs").Number(n.isolated_max_abs);
    j.Key("storage_error").Number(n.storage_error).Key("storage_measured").Bool(n.storage_measured);
    j.Key("beyond_storage").Bool(LosesMoreThanFp16Storage(n));
    j.Key("overflow").UInt(n.overflow).Key("input_overflow").UInt(n.input_overflow);
    j.Key("runtime_error").String(n.runtime_error).EndObject();
  }
  j.EndArray();
  j.Key("tensors").BeginArray();
  for (const auto& t : r.tensors) {
    j.BeginObject().Key("name").String(t.name).Key("node").String(t.node);
    j.Key("op_type").String(t.op_type).Key("elements").UInt(t.elements);
    j.Key("overflow").UInt(t.overflow).Key("subnormal_share").Number(t.subnormal_share);
    j.Key("roundtrip_error").Number(t.roundtrip_error).Key("max_abs").Number(t.max_abs);
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

Status WriteFp16Json(const Fp16Report& report, const std::string& path) {
  return WriteFileAtomic(path, RenderFp16Json(report));
}

}  // namespace onnxprobe
