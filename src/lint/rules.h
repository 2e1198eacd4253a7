// Internal: the lint rules, one per file (rule_<name>.cc), registered in one table (lint.cc).
// A rule appends findings; it fills severity, node, tensor, message, why and fix (the driver
// fills code and rule name). A rule that cannot decide adds a note instead of failing.
#pragma once

#include <vector>

#include "lint/lint_context.h"

namespace onnxprobe::lint {

using RuleFn = void (*)(const LintContext& ctx, std::vector<LintFinding>* out);

void CheckDropoutTraining(const LintContext& ctx, std::vector<LintFinding>* out);        // OP001
void CheckBatchNormTraining(const LintContext& ctx, std::vector<LintFinding>* out);      // OP002
void CheckBakedShape(const LintContext& ctx, std::vector<LintFinding>* out);             // OP003
void CheckResizeCoordinates(const LintContext& ctx, std::vector<LintFinding>* out);      // OP004
void CheckFp16HostileConstants(const LintContext& ctx, std::vector<LintFinding>* out);   // OP005
void CheckDuplicateInitializers(const LintContext& ctx, std::vector<LintFinding>* out);  // OP006
void CheckUnusedInitializers(const LintContext& ctx, std::vector<LintFinding>* out);     // OP007
void CheckUnusedInputs(const LintContext& ctx, std::vector<LintFinding>* out);           // OP008
void CheckDeadNodes(const LintContext& ctx, std::vector<LintFinding>* out);              // OP009
void CheckRuntimeSupport(const LintContext& ctx, std::vector<LintFinding>* out);         // OP010
void CheckCustomDomains(const LintContext& ctx, std::vector<LintFinding>* out);          // OP011
void CheckNodeNames(const LintContext& ctx, std::vector<LintFinding>* out);              // OP012
void CheckScatterIndices(const LintContext& ctx, std::vector<LintFinding>* out);         // OP013
void CheckLayerNormFp16(const LintContext& ctx, std::vector<LintFinding>* out);          // OP014

}  // namespace onnxprobe::lint
