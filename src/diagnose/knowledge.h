// Internal: the knowledge file (schema onnxprobe-knowledge, version 1): every diagnosis recorded
// with the model's SHA-256, node, op type, cause and fix; a later diagnosis of the same cause on
// the same op type cites the earlier ones.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/diagnose/diagnose.h"

namespace onnxprobe::diagnose {

struct KnowledgeEntry {
  std::string recorded;  // UTC, ISO 8601
  std::string model, model_sha256, node, op_type, cause, summary, fix;
};

// The entries of `path`; none when it does not exist. Fails when it exists and is not a
// knowledge file (it is then never replaced) or is malformed.
Expected<std::vector<KnowledgeEntry>> ReadKnowledge(const std::string& path);
// `found`'s seen_before from the earlier entries of the same cause and op type.
void CiteKnowledge(const std::vector<KnowledgeEntry>& earlier, std::vector<Finding>* found);
// Writes `earlier` plus this run's findings, atomically.
Status RecordKnowledge(const std::string& path, std::vector<KnowledgeEntry> earlier,
                       const std::vector<Finding>& found, const std::string& model,
                       const std::string& model_sha256);

}  // namespace onnxprobe::diagnose
