// gvirtus-backend: serves CUDA calls from gvirtus clients. See `gvirtus-backend --help`.
#include <cstring>
#include <iostream>
#include <string>

#include "backend/daemon.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "communicators/factory.h"

namespace {

void print_help() {
  std::string transports;
  for (const auto& name : gvirtus::transport_names()) {
    transports += (transports.empty() ? "" : ", ") + name;
  }
  std::cout
      << "usage: gvirtus-backend [--config FILE]\n"
         "\n"
         "Serves CUDA calls from gvirtus clients on every endpoint of the configuration, one\n"
         "worker process per client session. Runs in the foreground; SIGINT or SIGTERM stop it\n"
         "and its workers.\n"
         "\n"
         "  --config FILE  the properties.json to use. Without it: $GVIRTUS_CONFIG, else\n"
         "                 $GVIRTUS_HOME/etc/properties.json, else the installed default.\n"
         "  --help         this text.\n"
         "\n"
         "Environment: GVIRTUS_LOGLEVEL=error|warning|notice|info|debug|trace (default notice).\n"
         "Transports: "
      << transports << ". Configuration keys: docs/configuration.md.\n";
}

}  // namespace

int main(int argc, char** argv) {
  gvirtus::set_log_program("gvirtus-backend");
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_help();
      return 0;
    }
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else {
      std::cerr << "gvirtus-backend: unknown argument \"" << arg << "\" (see --help)\n";
      return 2;
    }
  }
  try {
    const std::filesystem::path path =
        config_path.empty() ? gvirtus::find_config() : std::filesystem::path(config_path);
    const gvirtus::Config config = gvirtus::load_config(path);
    GVIRTUS_LOG(kInfo) << "configuration from " << path.string();
    return gvirtus::run_daemon(config);
  } catch (const gvirtus::Error& e) {
    std::cerr << "gvirtus-backend: " << e.what() << "\n";
    return 1;
  }
}
