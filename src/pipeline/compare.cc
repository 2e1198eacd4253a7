// Compare(request): one comparison session, opened and run once.
#include "onnxprobe/pipeline/comparison_session.h"
#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

Expected<CompareReport> Compare(const CompareRequest& request) {
  OP_ASSIGN_OR_RETURN(auto session, ComparisonSession::Open(request));
  return session->Run(SingleRun(request));
}

}  // namespace onnxprobe
