#include "backend_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/paths.h"

namespace gvirtus::bench {
namespace {

constexpr std::chrono::seconds kStartTimeout{10};
constexpr std::chrono::seconds kStopTimeout{5};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) raise(ErrorKind::kFailed, "cannot write " + path);
}

// The daemon logs "listening on NAME (plugins: ...)" at notice level once it serves.
std::string listening_name(const std::string& log) {
  const std::string marker = "listening on ";
  const auto at = log.find(marker);
  if (at == std::string::npos) return {};
  const auto start = at + marker.size();
  const auto end = log.find_first_of(" \n", start);
  if (end == std::string::npos) return {};  // the line is not complete yet
  return log.substr(start, end - start);
}

}  // namespace

BackendChild::BackendChild(const BenchTransport& transport, const std::string& plugins_json,
                           const std::vector<std::string>& environment,
                           const std::string& extra_json) {
  char tmpl[] = "/tmp/gvirtus-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) raise_errno("mkdtemp", errno);
  dir_ = tmpl;
  const std::string config = dir_ + "/backend.json";
  write_text(config, "{" + (extra_json.empty() ? "" : extra_json + ", ") +
                         R"("communicator": [{"endpoint": )" + transport.server_endpoint +
                         R"(, "plugins": )" + plugins_json + "}]}");
  const std::string log_path = dir_ + "/backend.log";
  const std::string binary = (executable_dir() / "gvirtus-backend").string();
  if (!std::filesystem::exists(binary)) raise(ErrorKind::kFailed, "no " + binary);
  const int log_fd = ::open(log_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) raise_errno("open " + log_path, errno);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(log_fd, STDERR_FILENO);
    ::setenv("GVIRTUS_LOGLEVEL", "notice", 1);  // per-session info lines would only add noise
    ::unsetenv("GVIRTUS_STATS");
    for (const std::string& entry : environment) {
      const auto equals = entry.find('=');
      if (equals != std::string::npos) {
        ::setenv(entry.substr(0, equals).c_str(), entry.c_str() + equals + 1, 1);
      }
    }
    ::execl(binary.c_str(), binary.c_str(), "--config", config.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid_ < 0) raise_errno("fork", errno);
  try {
    wait_listening(transport);
  } catch (...) {
    stop();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void BackendChild::wait_listening(const BenchTransport& transport) {
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while ((local_name_ = listening_name(log())).empty()) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      raise(ErrorKind::kFailed, "gvirtus-backend exited at start:\n" + log());
    }
    if (std::chrono::steady_clock::now() > deadline) {
      raise(ErrorKind::kFailed, "gvirtus-backend did not start listening:\n" + log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  client_endpoint_json_ = transport.client_endpoint(local_name_);
  client_config_text_ = R"({"communicator": [{"endpoint": )" + client_endpoint_json_ +
                        R"(, "plugins": []}], "connect_timeout_ms": 5000})";
  client_config_file_ = dir_ + "/client.json";
  write_text(client_config_file_, client_config_text_);
}

BackendChild::~BackendChild() {
  stop();
}

void BackendChild::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
    while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Config BackendChild::client_config() const {
  return parse_config(client_config_text_, client_config_file_);
}

std::string BackendChild::log() const {
  return read_file(dir_ + "/backend.log");
}

}  // namespace gvirtus::bench
