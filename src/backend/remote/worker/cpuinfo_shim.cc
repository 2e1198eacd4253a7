// The worker's /proc/cpuinfo under qemu-user. qemu-user 7.2 shows the guest the host's file
// (x86 text on an aarch64 guest), and ONNX Runtime's CPU detection (the cpuinfo library) then
// finds no processor and crashes. With ONNXPROBE_WORKER_CPUINFO=synth set (the host sets it when
// it starts the worker under qemu) the worker answers opens of /proc/cpuinfo itself, with text
// made from what the emulated CPU reports: the processor count and the feature bits the kernel
// (here qemu) passes in the auxiliary vector. The worker executable defines open/fopen and
// exports them (-rdynamic), so libonnxruntime's calls bind here before libc; everything else is
// passed to libc's own functions. No root, no mount namespace, no file written.
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

namespace {

#if defined(__aarch64__)
// Linux's arm64 hwcap bit names, in bit order (arch/arm64/kernel/cpuinfo.c).
const char* const kHwcap[] = {
    "fp",      "asimd", "evtstrm", "aes",   "pmull",    "sha1",   "sha2", "crc32",
    "atomics", "fphp",  "asimdhp", "cpuid", "asimdrdm", "jscvt",  "fcma", "lrcpc",
    "dcpop",   "sha3",  "sm3",     "sm4",   "asimddp",  "sha512", "sve",  "asimdfhm",
    "dit",     "uscat", "ilrcpc",  "flagm", "ssbs",     "sb",     "paca", "pacg"};
const char* const kHwcap2[] = {"dcpodp",  "sve2",   "sveaes", "svepmull", "svebitperm", "svesha3",
                               "svesm4",  "flagm2", "frint",  "svei8mm",  "svef32mm",   "svef64mm",
                               "svebf16", "i8mm",   "bf16",   "dgh",      "rng",        "bti"};
#endif

std::string Features() {
  std::string f;
#if defined(__aarch64__)
  unsigned long h1 = getauxval(AT_HWCAP), h2 = getauxval(AT_HWCAP2);
  for (size_t i = 0; i < sizeof kHwcap / sizeof *kHwcap; ++i)
    if (h1 & (1ul << i)) f += std::string(f.empty() ? "" : " ") + kHwcap[i];
  for (size_t i = 0; i < sizeof kHwcap2 / sizeof *kHwcap2; ++i)
    if (h2 & (1ul << i)) f += std::string(f.empty() ? "" : " ") + kHwcap2[i];
#endif
  return f;
}

// Arm's implementer code and a Neoverse N1 part number: a server core of the kind users deploy
// to; the part only names the microarchitecture, the features above decide the kernels.
std::string CpuinfoText() {
  long n = sysconf(_SC_NPROCESSORS_CONF);
  if (n < 1) n = 1;
  std::string features = Features(), text;
  for (long i = 0; i < n; ++i) {
    text += "processor\t: " + std::to_string(i) + "\nBogoMIPS\t: 50.00\nFeatures\t: " + features +
            "\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
            "CPU part\t: 0xd0c\nCPU revision\t: 1\n\n";
  }
  return text;
}

bool Synthesized(const char* path) {
  if (path == nullptr || strcmp(path, "/proc/cpuinfo") != 0) return false;
  const char* mode = getenv("ONNXPROBE_WORKER_CPUINFO");
  return mode != nullptr && strcmp(mode, "synth") == 0;
}

// A read-only descriptor over the synthesized text (a memfd, else a pipe holding it).
int SynthFd() {
  std::string text = CpuinfoText();
  int fd = memfd_create("cpuinfo", MFD_CLOEXEC);
  if (fd >= 0) {
    if (write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
        lseek(fd, 0, SEEK_SET) == 0)
      return fd;
    close(fd);
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  ssize_t k = write(p[1], text.data(), text.size());  // a few kB: fits the pipe's buffer
  close(p[1]);
  if (k != static_cast<ssize_t>(text.size())) {
    close(p[0]);
    return -1;
  }
  return p[0];
}

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

int OpenVia(const char* name, const char* path, int flags, va_list ap) {
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  if (Synthesized(path)) return SynthFd();
  using Fn = int (*)(const char*, int, ...);
  static Fn open_fn = Next<Fn>("open"), open64_fn = Next<Fn>("open64");
  Fn fn = strcmp(name, "open") == 0 ? open_fn : open64_fn;
  return fn(path, flags, mode);
}

FILE* FopenVia(const char* name, const char* path, const char* mode) {
  if (Synthesized(path)) {
    int fd = SynthFd();
    return fd < 0 ? nullptr : fdopen(fd, "r");
  }
  using Fn = FILE* (*)(const char*, const char*);
  static Fn fopen_fn = Next<Fn>("fopen"), fopen64_fn = Next<Fn>("fopen64");
  return (strcmp(name, "fopen") == 0 ? fopen_fn : fopen64_fn)(path, mode);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = OpenVia("open", path, flags, ap);
  va_end(ap);
  return fd;
}

__attribute__((visibility("default"))) int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = OpenVia("open64", path, flags, ap);
  va_end(ap);
  return fd;
}

__attribute__((visibility("default"))) int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  if (Synthesized(path)) return SynthFd();
  using Fn = int (*)(int, const char*, int, ...);
  static Fn fn = Next<Fn>("openat");
  return fn(dir, path, flags, mode);
}

__attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  return FopenVia("fopen", path, mode);
}

__attribute__((visibility("default"))) FILE* fopen64(const char* path, const char* mode) {
  return FopenVia("fopen64", path, mode);
}

}  // extern "C"
