// Linked into every program of the sanitizer build (CMakeLists.txt, ONNXPROBE_SANITIZE): an
// AddressSanitizer, UndefinedBehaviorSanitizer or LeakSanitizer report ends the program with exit
// code 86, which none of onnxprobe's own codes (0 pass, 1 mismatch, 2 bad input, 3 runtime) can
// be mistaken for. Options given in ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS still win.
extern "C" {
const char* __asan_default_options() { return "exitcode=86:detect_leaks=1"; }
const char* __ubsan_default_options() { return "exitcode=86:halt_on_error=1:print_stacktrace=1"; }
const char* __lsan_default_options() { return "exitcode=86"; }
}
