// The device node gvirtus-run stands in for (tools/run/device_node.cpp): under gvirtus-run a
// program that probes for /dev/nvidiactl - by stat, lstat, fstatat, statx or access, by its path
// or relative to /dev - finds
// NVIDIA's control node, a character device 195:255, and opening it fails with ENXIO as a node
// without its driver does; every other path answers as it really is. Only on a machine without
// the node (one with NVIDIA's driver answers for itself).
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

bool machine_has_node() {
  return ::access("/dev/nvidiactl", F_OK) == 0;
}

// `command` through gvirtus-run (no backend is needed: nothing here calls CUDA).
RunResult run_under_gvirtus(const std::string& command) {
  return run("env " GVIRTUS_STUB_PROGRAM_ENV " " GVIRTUS_RUN " -- " + command + " 2>&1");
}

// Every probe Python makes (stat64, lstat64, fstatat64, access, faccessat, open64).
constexpr char kProbe[] = R"(python3 -c '
import errno, os, stat
for path in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/null"):
    if not os.path.exists(path):
        print(path, "absent"); continue
    st = os.stat(path)
    print(path, stat.S_ISCHR(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev),
          oct(stat.S_IMODE(st.st_mode)), stat.S_ISCHR(os.lstat(path).st_mode),
          os.access(path, os.R_OK | os.W_OK))
dev = os.open("/dev", os.O_RDONLY)
print("at", stat.S_ISCHR(os.stat("nvidiactl", dir_fd=dev).st_mode),
      os.access("nvidiactl", os.R_OK, dir_fd=dev), os.path.exists("/dev/nvidiactl/x"))
try:
    os.open("/dev/nvidiactl", os.O_RDWR)
except OSError as e:
    print("open", errno.errorcode[e.errno])
')";

TEST(DeviceNode, gvirtus_run_stands_in_for_the_control_node) {
  if (machine_has_node()) GTEST_SKIP() << "this machine has /dev/nvidiactl: it answers for itself";
  const RunResult result = run_under_gvirtus(kProbe);
  EXPECT_EQ(result.output,
            "/dev/nvidiactl True 195 255 0o666 True True\n"
            "/dev/nvidia0 absent\n"
            "/dev/null True 1 3 0o666 True True\n"
            // Relative to /dev, by a descriptor; and a path below the node is none.
            "at True True False\n"
            "open ENXIO\n")
      << result.output;
  EXPECT_EQ(result.status, 0);
}

TEST(DeviceNode, statx_sees_it_too) {
  if (machine_has_node()) GTEST_SKIP() << "this machine has /dev/nvidiactl: it answers for itself";
  const RunResult result = run_under_gvirtus("stat -c '%F %t:%T %a' /dev/nvidiactl");
  EXPECT_EQ(result.output, "character special file c3:ff 666\n");
}

TEST(DeviceNode, without_gvirtus_run_there_is_none) {
  if (machine_has_node()) GTEST_SKIP() << "this machine has /dev/nvidiactl";
  const RunResult result = run("env " GVIRTUS_STUB_PROGRAM_ENV " stat /dev/nvidiactl 2>&1");
  EXPECT_NE(result.output.find("No such file or directory"), std::string::npos) << result.output;
  EXPECT_NE(result.status, 0);
}

// What the environment preloads already comes first (a sanitizer's runtime must).
TEST(DeviceNode, gvirtus_run_preloads_after_what_is_preloaded) {
  // A library of the system's, after the sanitizer's runtime where the tests run under one.
  const std::string program_env = GVIRTUS_STUB_PROGRAM_ENV;
  const size_t at = program_env.find("LD_PRELOAD=");
  const std::string preloaded =
      (at == std::string::npos
           ? ""
           : program_env.substr(at + 11, program_env.find(' ', at) - at - 11) + ":") +
      "libm.so.6";
  const RunResult result =
      run("env LD_PRELOAD=" + preloaded + " " GVIRTUS_RUN " -- sh -c 'echo $LD_PRELOAD'");
  EXPECT_EQ(result.output, preloaded + ":" GVIRTUS_DEVICE_NODE_SHIM "\n");
}

}  // namespace
}  // namespace gvirtus::testing
