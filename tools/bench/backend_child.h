// A gvirtus-backend daemon run by gvirtus-bench as a child process, for the modes that measure
// the whole stack (calls, gpu).
//
// The backend listens on the bench transport's server endpoint (a free local address, see
// bench_transports.h) from a configuration in a private temporary directory; the bench learns
// the address it really bound from the daemon's "listening on NAME" log line and gives clients a
// configuration for the transport's client endpoint. Nothing here knows which transport it is.
// The daemon is stopped (SIGTERM, then SIGKILL) and the directory removed on destruction.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "bench_transports.h"
#include "common/config.h"

namespace gvirtus::bench {

class BackendChild {
 public:
  // Starts bin/gvirtus-backend (beside gvirtus-bench) serving `plugins_json` (e.g. R"(["cudart"])")
  // with `environment` ("NAME=value" each) added to its own and `extra_json` (e.g.
  // R"("device_output": "backend")") spliced into its configuration's top level, and waits until it
  // listens. Blocks up to 10 s; throws gvirtus::Error{kFailed} with the daemon's log when it does
  // not come up.
  BackendChild(const BenchTransport& transport, const std::string& plugins_json,
               const std::vector<std::string>& environment = {},
               const std::string& extra_json = "");
  ~BackendChild();
  BackendChild(const BackendChild&) = delete;
  BackendChild& operator=(const BackendChild&) = delete;

  // What the listener said it bound (e.g. "tcp://127.0.0.1:40112").
  const std::string& local_name() const { return local_name_; }
  // A client configuration for this backend, and the same as a file (for gvirtus-run), which
  // lives as long as this object.
  Config client_config() const;
  const std::string& client_config_file() const { return client_config_file_; }
  // The endpoint object of that configuration, for configurations of one's own (a pool's).
  const std::string& client_endpoint_json() const { return client_endpoint_json_; }
  // The daemon's log so far, for error messages.
  std::string log() const;

 private:
  void wait_listening(const BenchTransport& transport);  // sets local_name_ and the client files
  void stop();  // stops the daemon (if running) and removes the directory

  std::string dir_;
  pid_t pid_ = -1;
  std::string local_name_;
  std::string client_endpoint_json_;
  std::string client_config_text_;
  std::string client_config_file_;
};

}  // namespace gvirtus::bench
