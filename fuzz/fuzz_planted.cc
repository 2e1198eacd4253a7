// A fuzz target with bugs planted on purpose, for `make fuzz` to prove its own build stops on
// them (scripts/fuzz.sh): the input "leak" leaks a block, "ub" overflows a signed integer. A
// build without -fno-sanitize-recover or a run with detect_leaks=0 would let both pass.
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
void* volatile g_sink = nullptr;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 4 && std::memcmp(data, "leak", 4) == 0) {
    g_sink = std::malloc(4096);
    g_sink = nullptr;
  }
  if (size == 2 && std::memcmp(data, "ub", 2) == 0) {
    volatile int big = INT_MAX;
    volatile int sum = big + static_cast<int>(size);
    (void)sum;
  }
  return 0;
}
