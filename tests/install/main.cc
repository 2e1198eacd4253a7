#include <cstdio>

#include "onnxprobe/common/version.h"
#include "onnxprobe/model/model.h"
int main(int argc, char** argv) {
  auto m = onnxprobe::Model::Load(argv[1]);
  if (!m.ok()) {
    std::printf("%s\n", m.status().message().c_str());
    return 2;
  }
  std::printf("onnxprobe %s: %zu nodes\n", onnxprobe::Version(), m->index().nodes().size());
  return 0;
}
