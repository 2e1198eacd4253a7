// Internal invariant checks: abort with file:line. Never reachable from user input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define OP_CHECK(cond)                                                                         \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "onnxprobe internal error %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)
