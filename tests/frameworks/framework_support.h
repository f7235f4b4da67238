// What the framework tests share (frameworks_test.cpp, jax_test.cpp): where each framework is
// installed, a backend on the simulated device whose launches are recorded, the file of those
// launches, and Python run through gvirtus-run.
#pragma once

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {

inline std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Why a framework cannot be run here ("" when it can): scripts/lib.sh installs it into the build.
inline std::string missing(const char* name, const std::string& dir, const char* package) {
  if (::access((dir + "/" + package + "/__init__.py").c_str(), R_OK) == 0) return "";
  return std::string("no ") + name + " in " + dir +
         " (scripts/test.sh installs it: scripts/lib.sh's install_frameworks)";
}

// A backend on the simulated device (the cuda plugin and, for `with_nvml`, NVML too), its
// launches recorded in `launches`.
inline std::unique_ptr<BackendProcess> simulated_backend(
    const std::string& launches, TestTransport transport = TestTransport::shm,
    bool with_nvml = false) {
  ::setenv("GVIRTUS_SIMULATED_LAUNCHES", launches.c_str(), 1);  // the backend inherits it
  BackendOptions options;
  options.plugins = with_nvml ? R"(["cuda-simulated", "nvml-simulated"])" : R"(["cuda-simulated"])";
  options.transport = transport;
  auto backend = std::make_unique<BackendProcess>(options);
  ::unsetenv("GVIRTUS_SIMULATED_LAUNCHES");
  return backend;
}

// `python3 ARGS` with `packages` on its path, through gvirtus-run (`options` before its
// --config: "--mode driver") against `backend`; `env` adds variables ("NAME=VALUE ...").
inline RunResult run_under_gvirtus(const std::string& packages, const BackendProcess& backend,
                                   const std::string& args, const std::string& env = "",
                                   const std::string& options = "") {
  return run("env " GVIRTUS_STUB_PROGRAM_ENV " PYTHONPATH=" + packages + " " + env +
             " " GVIRTUS_RUN " " + options + " --config " + backend.client_config_file() +
             " -- python3 " + args);
}

inline std::string launches_file(const char* framework) {
  return ::testing::TempDir() + "/gvirtus-" + framework + "-launches-" +
         std::to_string(::getpid()) + ".jsonl";
}

}  // namespace gvirtus::testing
