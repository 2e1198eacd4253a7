// OP006: initializers with the same dtype, shape and bytes under different names (e.g. a tied
// weight exported twice, or constants duplicated by a graph rewrite). Tensors under 256 bytes
// are ignored: exporters repeat small shape constants routinely and they cost nothing.
#include <map>
#include <tuple>

#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr uint64_t kMinBytes = 256;

}  // namespace

void CheckDuplicateInitializers(const LintContext& ctx, std::vector<LintFinding>* out) {
  auto hashes = ctx.model().InitializerHashes();
  if (!hashes.ok()) {
    ctx.Note("OP006: " + hashes.status().message());
    return;
  }
  const auto& infos = ctx.model().summary().initializers;
  if (infos.size() != hashes->size()) return;
  using Key = std::tuple<std::string, int, std::vector<int64_t>>;
  std::map<Key, std::vector<size_t>> groups;
  std::vector<Key> order;
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].num_bytes < kMinBytes) continue;
    Key k{(*hashes)[i].second, infos[i].elem_type, infos[i].dims};
    auto& g = groups[k];
    if (g.empty()) order.push_back(k);
    g.push_back(i);
  }
  for (const Key& k : order) {
    const auto& g = groups[k];
    if (g.size() < 2) continue;
    std::string names;
    for (size_t i : g) names += (names.empty() ? "'" : ", '") + infos[i].name + "'";
    const NodeInfo* at = nullptr;
    std::vector<int> users = ctx.Consumers(infos[g[1]].name);
    if (!users.empty()) at = &ctx.nodes()[users.front()];
    LintFinding f = MakeFinding(LintSeverity::kInfo, at);
    f.tensor = infos[g[0]].name;
    f.message = std::to_string(g.size()) + " initializers hold the same " +
                std::to_string(infos[g[0]].num_bytes) + " bytes (" +
                ShapeToString(infos[g[0]].dims) + ", sha256 " + std::get<0>(k).substr(0, 12) +
                "): " + names;
    f.why =
        "each copy is stored and loaded separately (model size, memory), and a tied weight "
        "exported as copies can drift apart when one copy is edited, quantized or fine-tuned";
    f.fix =
        "keep one initializer and point every consumer at it (onnx-simplifier or a short "
        "onnx.helper pass); for tied weights, export the shared parameter once";
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
