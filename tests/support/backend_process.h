// A gvirtus-backend daemon started for a test: runs the real binary with a generated
// properties.json, learns the port it listens on from its log, and stops it (SIGKILL if it must)
// when the test ends.
#pragma once

#include <sys/types.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/config.h"

namespace gvirtus::testing {

// The communicator a test backend listens on: tcp on an ephemeral loopback port, or shm with the
// socket rendezvous in the backend's own temporary directory.
enum class TestTransport { tcp, shm };
const char* to_string(TestTransport transport);
// So GoogleTest names the transport in parameterised test output.
inline void PrintTo(TestTransport transport, std::ostream* out) {
  *out << to_string(transport);
}

// How to start a backend beyond the defaults (tcp on 127.0.0.1, a port of its choice).
struct BackendOptions {
  std::string extra_json;      // spliced into the top-level object
  std::string plugins = "[]";  // the endpoint's plugin list as JSON
  TestTransport transport = TestTransport::tcp;
  std::string address = "127.0.0.1";  // tcp
  uint16_t port = 0;                  // tcp; 0: the backend picks one
  // Replaces the endpoint when not empty (a custom shm one, rdma, vsock): the object the daemon
  // and its clients use, with "port":"0" where a port goes (replaced by the port the daemon logs).
  std::string endpoint_json{};
  std::vector<std::string> exec_prefix{};  // runs the backend under this (e.g. ip netns exec NS)
  // "NAME=VALUE" entries set in the backend's environment (over what it inherits; VALUE may be
  // empty, which sets the variable to the empty string).
  std::vector<std::string> env{};
};

// "LD_LIBRARY_PATH=DIR:<inherited>": a backend run with DIR searched first keeps the directories
// its own libraries were found through (a machine whose prometheus-cpp and civetweb live outside
// the loader's default paths could not start it otherwise).
std::string loader_path_first(const std::string& dir);

class BackendProcess {
 public:
  explicit BackendProcess(const BackendOptions& options);
  // A backend on any endpoint (BackendOptions::endpoint_json); the VM harness runs rdma and vsock
  // this way.
  BackendProcess(const std::string& extra_json, const std::string& plugins,
                 const std::string& endpoint_json);
  // `extra_json` is spliced into the top-level object (e.g. R"("limits":{"max_sessions":1})");
  // `plugins` is the endpoint's plugin list as JSON (e.g. R"(["cudart"])").
  explicit BackendProcess(const std::string& extra_json = "", const std::string& plugins = "[]",
                          TestTransport transport = TestTransport::tcp);
  ~BackendProcess();
  BackendProcess(const BackendProcess&) = delete;
  BackendProcess& operator=(const BackendProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The tcp port (0 over shm).
  uint16_t port() const { return port_; }
  TestTransport transport() const { return transport_; }
  // A client configuration pointing at this backend.
  Config client_config(uint32_t connect_timeout_ms = 2000) const;
  // The same as a file (kept until the backend goes), for programs run through gvirtus-run.
  std::string client_config_file() const;
  // Sends `signal` and waits for the daemon to exit; returns its wait status.
  int stop(int signal);
  // Worker processes of the daemon (its children), from /proc.
  std::vector<pid_t> workers() const;
  // The module cache of a backend whose options named none (its own, in its directory).
  std::string module_cache_dir() const { return dir_ + "/modules"; }
  // The endpoint object its clients use (tcp: with the port it listens on).
  std::string endpoint_json() const;
  // Everything the daemon logged (and it and its workers printed) so far.
  std::string log() const;
  // Whether the daemon logs `text` within `ms` (workers log as their sessions end).
  bool logged(const std::string& text, int ms = 5000) const;

 private:
  TestTransport transport_ = TestTransport::tcp;
  std::string address_ = "127.0.0.1";
  std::string custom_endpoint_;  // with "port":"0"; empty: the transport_'s endpoint
  std::string port_text_;        // the port a custom endpoint's daemon logged (32-bit for vsock)
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string dir_;
  int log_fd_ = -1;
};

// A client configuration naming `backends` as one pool (frontend/pool.h): "backend0", "backend1",
// ... in order, one endpoint each; `extra_json` is spliced into the top-level object.
std::string pool_config_json(const std::vector<const BackendProcess*>& backends,
                             const std::string& extra_json = "");

// The living (non-zombie) children of a process, from /proc.
std::vector<pid_t> children_of(pid_t pid);
bool process_exists(pid_t pid);
// Polls `done` every 10 ms until it holds or `ms` pass; returns whether it held.
bool eventually(int ms, const std::function<bool()>& done);

}  // namespace gvirtus::testing
