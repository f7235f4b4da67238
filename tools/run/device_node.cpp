// libgvirtus-device-node.so: preloaded by gvirtus-run, so that a program which looks for NVIDIA's
// device nodes before it tries CUDA at all finds the control node every machine with NVIDIA's
// driver has. JAX does (jax/_src/hardware_utils.py: /dev/nvidia0, /dev/nvidiactl or /dev/dxg),
// and skips its CUDA backend without one; a client of gvirtus has no GPU of its own, but its
// libcuda.so.1 is gvirtus's, which reaches the backend's.
//
// Only /dev/nvidiactl (named so, or relative to /dev), and only where the machine lacks it: a call
// the real library answers with ENOENT for that path answers as if the node were there - the stat
// family sees a character device 195:255 (NVIDIA's major, the control minor), access() grants what
// it is asked. Opening it fails with ENXIO, as a node whose driver is not loaded does: nothing of
// gvirtus talks through it. Every other path, and a machine that has the node, get the real answers
// untouched.
//
// It goes into every process gvirtus-run starts: the C library's calls only, no exceptions.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace {

constexpr char kControlNode[] = "/dev/nvidiactl";
constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kControlMinor = 255;

// Whether `path`, relative to the directory `dir` (AT_FDCWD: the working directory) unless it is
// absolute, names the node: "/dev/nvidiactl", or "nvidiactl" in /dev.
bool names_node(int dir, const char* path) {
  if (path == nullptr) return false;
  if (path[0] == '/') return strcmp(path, kControlNode) == 0;
  if (strcmp(path, kControlNode + 5) != 0) return false;  // its name in /dev
  char where[16] = {};
  if (dir == AT_FDCWD) return getcwd(where, sizeof where) != nullptr && strcmp(where, "/dev") == 0;
  char link[32];
  snprintf(link, sizeof link, "/proc/self/fd/%d", dir);
  const ssize_t n = readlink(link, where, sizeof where - 1);
  return n == 4 && memcmp(where, "/dev", 4) == 0;
}

// Whether the real call's failure is for the node we stand in for: the machine has no such file.
bool stands_in(int dir, const char* path, int result) {
  if (result == 0 || errno != ENOENT) return false;
  const bool node = names_node(dir, path);
  errno = ENOENT;  // as the real call left it, whatever finding the directory did
  return node;
}

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// A character device, read-write for everyone (as NVIDIA's nodes are), owned by root.
template <typename Stat>
int fill(Stat* out) {
  if (out == nullptr) {
    errno = EFAULT;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->st_mode = S_IFCHR | 0666;
  out->st_rdev = makedev(kNvidiaMajor, kControlMinor);
  out->st_nlink = 1;
  out->st_blksize = 4096;
  return 0;
}

int fill_statx(struct statx* out) {
  if (out == nullptr) {
    errno = EFAULT;
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID;
  out->stx_mode = S_IFCHR | 0666;
  out->stx_nlink = 1;
  out->stx_blksize = 4096;
  out->stx_rdev_major = kNvidiaMajor;
  out->stx_rdev_minor = kControlMinor;
  return 0;
}

// Calls the next definition of `name` (the C library's), or fails with ENOSYS when there is none.
// A success leaves errno as it was.
#define GVIRTUS_NEXT(type, name, ...)        \
  static const auto real = next<type>(name); \
  if (real == nullptr) return no_next();     \
  const int saved = errno;                   \
  const int result = real(__VA_ARGS__);      \
  if (result == 0) errno = saved;

using StatFn = int (*)(const char*, struct stat*);
using Stat64Fn = int (*)(const char*, struct stat64*);
using StatAtFn = int (*)(int, const char*, struct stat*, int);
using StatAt64Fn = int (*)(int, const char*, struct stat64*, int);
using XStatFn = int (*)(int, const char*, struct stat*);
using XStat64Fn = int (*)(int, const char*, struct stat64*);
using XStatAtFn = int (*)(int, int, const char*, struct stat*, int);
using XStatAt64Fn = int (*)(int, int, const char*, struct stat64*, int);
using StatxFn = int (*)(int, const char*, int, unsigned, struct statx*);
using AccessFn = int (*)(const char*, int);
using AccessAtFn = int (*)(int, const char*, int, int);
using OpenFn = int (*)(const char*, int, ...);
using OpenAtFn = int (*)(int, const char*, int, ...);

// open's mode argument exists only when the flags create a file.
bool takes_mode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

int no_next() {
  errno = ENOSYS;
  return -1;
}

int open_result(int dir, const char* path, int result) {
  if (result < 0 && stands_in(dir, path, -1)) errno = ENXIO;
  return result;
}

}  // namespace

#define GVIRTUS_DEVICE_NODE_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_DEVICE_NODE_EXPORT int stat(const char* path, struct stat* out) {
  GVIRTUS_NEXT(StatFn, "stat", path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int stat64(const char* path, struct stat64* out) {
  GVIRTUS_NEXT(Stat64Fn, "stat64", path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int lstat(const char* path, struct stat* out) {
  GVIRTUS_NEXT(StatFn, "lstat", path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int lstat64(const char* path, struct stat64* out) {
  GVIRTUS_NEXT(Stat64Fn, "lstat64", path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int fstatat(int dir, const char* path, struct stat* out, int flags) {
  GVIRTUS_NEXT(StatAtFn, "fstatat", dir, path, out, flags);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int fstatat64(int dir, const char* path, struct stat64* out, int flags) {
  GVIRTUS_NEXT(StatAt64Fn, "fstatat64", dir, path, out, flags);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return fill(out);
}

// The versioned entry points of programs built against a C library before 2.33.
GVIRTUS_DEVICE_NODE_EXPORT int __xstat(int version, const char* path, struct stat* out) {
  GVIRTUS_NEXT(XStatFn, "__xstat", version, path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int __xstat64(int version, const char* path, struct stat64* out) {
  GVIRTUS_NEXT(XStat64Fn, "__xstat64", version, path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int __lxstat(int version, const char* path, struct stat* out) {
  GVIRTUS_NEXT(XStatFn, "__lxstat", version, path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int __lxstat64(int version, const char* path, struct stat64* out) {
  GVIRTUS_NEXT(XStat64Fn, "__lxstat64", version, path, out);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int __fxstatat(int version, int dir, const char* path, struct stat* out,
                                          int flags) {
  GVIRTUS_NEXT(XStatAtFn, "__fxstatat", version, dir, path, out, flags);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int __fxstatat64(int version, int dir, const char* path,
                                            struct stat64* out, int flags) {
  GVIRTUS_NEXT(XStatAt64Fn, "__fxstatat64", version, dir, path, out, flags);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return fill(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int statx(int dir, const char* path, int flags, unsigned mask,
                                     struct statx* out) {
  GVIRTUS_NEXT(StatxFn, "statx", dir, path, flags, mask, out);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return fill_statx(out);
}

GVIRTUS_DEVICE_NODE_EXPORT int access(const char* path, int mode) {
  GVIRTUS_NEXT(AccessFn, "access", path, mode);
  if (!stands_in(AT_FDCWD, path, result)) return result;
  errno = saved;
  return 0;
}

GVIRTUS_DEVICE_NODE_EXPORT int faccessat(int dir, const char* path, int mode, int flags) {
  GVIRTUS_NEXT(AccessAtFn, "faccessat", dir, path, mode, flags);
  if (!stands_in(dir, path, result)) return result;
  errno = saved;
  return 0;
}

// The open family: the mode is read only when the flags say there is one.
#define GVIRTUS_MODE_OF(flags)     \
  unsigned mode = 0;               \
  if (takes_mode(flags)) {         \
    va_list args;                  \
    va_start(args, flags);         \
    mode = va_arg(args, unsigned); \
    va_end(args);                  \
  }

GVIRTUS_DEVICE_NODE_EXPORT int open(const char* path, int flags, ...) {
  static const auto real = next<OpenFn>("open");
  GVIRTUS_MODE_OF(flags);
  return real == nullptr ? no_next() : open_result(AT_FDCWD, path, real(path, flags, mode));
}

GVIRTUS_DEVICE_NODE_EXPORT int open64(const char* path, int flags, ...) {
  static const auto real = next<OpenFn>("open64");
  GVIRTUS_MODE_OF(flags);
  return real == nullptr ? no_next() : open_result(AT_FDCWD, path, real(path, flags, mode));
}

GVIRTUS_DEVICE_NODE_EXPORT int openat(int dir, const char* path, int flags, ...) {
  static const auto real = next<OpenAtFn>("openat");
  GVIRTUS_MODE_OF(flags);
  return real == nullptr ? no_next() : open_result(dir, path, real(dir, path, flags, mode));
}

GVIRTUS_DEVICE_NODE_EXPORT int openat64(int dir, const char* path, int flags, ...) {
  static const auto real = next<OpenAtFn>("openat64");
  GVIRTUS_MODE_OF(flags);
  return real == nullptr ? no_next() : open_result(dir, path, real(dir, path, flags, mode));
}
