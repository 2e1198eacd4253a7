// A test-only program with a bug planted on request, built only in the sanitizer build: the
// suite sanitizer_catches_planted_bugs runs it and requires the sanitizer's own exit code (86,
// tests/sanitizer/defaults.cc) for each bug and 0 without one, so a build that stopped catching
// leaks or undefined behaviour fails `make test-sanitize` instead of passing it quietly.
#include <climits>
#include <cstdlib>
#include <cstring>

namespace {
void* volatile g_sink = nullptr;

__attribute__((noinline)) void Leak() {
  g_sink = std::malloc(4096);
  g_sink = nullptr;  // the only pointer to the block is gone: a leak at exit
}

__attribute__((noinline)) int Overflow(int by) {
  volatile int big = INT_MAX;
  return big + by;  // signed overflow for by > 0
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (std::strcmp(argv[1], "leak") == 0) Leak();
  if (std::strcmp(argv[1], "ub") == 0) return Overflow(argc) == 0 ? 4 : 5;
  return 0;
}
