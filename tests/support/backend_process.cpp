#include "support/backend_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gvirtus::testing {
namespace {

// The endpoint with its "port":"0" replaced by `port`.
std::string with_port(const std::string& endpoint, const std::string& port) {
  std::string out = endpoint;
  const auto at = out.find(R"("port":"0")");
  if (at != std::string::npos) out.replace(at, 10, R"("port":")" + port + "\"");
  return out;
}

}  // namespace

const char* to_string(TestTransport transport) {
  return transport == TestTransport::shm ? "shm" : "tcp";
}

BackendProcess::BackendProcess(const std::string& extra_json, const std::string& plugins,
                               TestTransport transport)
    : BackendProcess(
          BackendOptions{.extra_json = extra_json, .plugins = plugins, .transport = transport}) {}

BackendProcess::BackendProcess(const std::string& extra_json, const std::string& plugins,
                               const std::string& endpoint_json)
    : BackendProcess(BackendOptions{
          .extra_json = extra_json, .plugins = plugins, .endpoint_json = endpoint_json}) {}

BackendProcess::BackendProcess(const BackendOptions& options)
    : transport_(options.transport),
      address_(options.address),
      custom_endpoint_(options.endpoint_json),
      port_(options.port) {
  char tmpl[] = "/tmp/gvirtus-test-XXXXXX";
  dir_ = ::mkdtemp(tmpl);
  const std::string config = dir_ + "/properties.json";
  std::ofstream(config) << R"({"communicator":[{"endpoint":)" << endpoint_json() << R"(,"plugins":)"
                        << options.plugins << "}]"
                        << (options.extra_json.empty() ? "" : "," + options.extra_json)
                        // Each test backend its own module cache, gone with it, unless the test
                        // names one: tests stay apart, and nothing is left in $HOME.
                        << (options.extra_json.find("\"module_cache\"") != std::string::npos
                                ? ""
                                : R"(,"module_cache":{"path":")" + module_cache_dir() + R"("})")
                        << "}";
  const std::string log_path = dir_ + "/backend.log";
  log_fd_ = ::open(log_path.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(log_fd_, STDOUT_FILENO);  // what the daemon and its workers print, too
    ::dup2(log_fd_, STDERR_FILENO);
    ::setenv("GVIRTUS_LOGLEVEL", "info", 1);
    for (const std::string& entry : options.env) {
      const size_t equals = entry.find('=');
      if (equals == std::string::npos) ::_exit(126);
      ::setenv(entry.substr(0, equals).c_str(), entry.c_str() + equals + 1, 1);
    }
    const std::string binary = std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-backend";
    std::vector<std::string> args = options.exec_prefix;
    args.insert(args.end(), {binary, "--config", config});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  const std::string tcp_prefix = "listening on tcp://" + address_ + ":";
  const bool listening = eventually(30000, [&] {
    const std::string text = log();
    if (!custom_endpoint_.empty()) {
      // "listening on rdma://10.0.0.1:40112 (plugins: ...)": the port, if any, ends the URL.
      const auto at = text.find("listening on ");
      const auto end = at == std::string::npos ? at : text.find(' ', at + 13);
      if (end == std::string::npos) return false;
      const std::string url = text.substr(at + 13, end - at - 13);
      port_text_ = url.substr(url.rfind(':') + 1);
      return true;
    }
    if (transport_ == TestTransport::shm) return text.find("listening on shm") != std::string::npos;
    const auto at = text.find(tcp_prefix);
    if (at == std::string::npos) return false;
    port_ = static_cast<uint16_t>(std::atoi(text.c_str() + at + tcp_prefix.size()));
    return true;
  });
  if (!listening) throw std::runtime_error("gvirtus-backend did not start: " + log());
}

BackendProcess::~BackendProcess() {
  if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0) stop(SIGKILL);
  ::close(log_fd_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string BackendProcess::endpoint_json() const {
  if (!custom_endpoint_.empty()) {
    return port_text_.empty() ? custom_endpoint_ : with_port(custom_endpoint_, port_text_);
  }
  if (transport_ == TestTransport::shm)
    return R"({"suite":"shm","protocol":"shm","path":")" + dir_ + R"(/shm.sock"})";
  // Before the daemon has started, port_ is 0: it picks an ephemeral port and logs it.
  return R"({"suite":"tcp/ip","protocol":"tcp","server_address":")" + address_ + R"(","port":")" +
         std::to_string(port_) + R"("})";
}

Config BackendProcess::client_config(uint32_t connect_timeout_ms) const {
  return parse_config(R"({"communicator":[{"endpoint":)" + endpoint_json() +
                          R"(,"plugins":[]}],"connect_timeout_ms":)" +
                          std::to_string(connect_timeout_ms) + "}",
                      "<test client>");
}

std::string BackendProcess::client_config_file() const {
  const std::string path = dir_ + "/client.json";
  std::ofstream(path) << R"({"communicator":[{"endpoint":)" << endpoint_json()
                      << R"(,"plugins":[]}],"connect_timeout_ms":2000})";
  return path;
}

std::string pool_config_json(const std::vector<const BackendProcess*>& backends,
                             const std::string& extra_json) {
  std::string text = R"({"communicator":[)";
  for (size_t i = 0; i < backends.size(); ++i) {
    if (i > 0) text += ',';
    text += R"({"endpoint":)" + backends[i]->endpoint_json() + R"(,"backend":"backend)" +
            std::to_string(i) + "\"}";
  }
  text += R"(],"connect_timeout_ms":2000)";
  if (!extra_json.empty()) text += "," + extra_json;
  return text + "}";
}

int BackendProcess::stop(int signal) {
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::vector<pid_t> BackendProcess::workers() const {
  return children_of(pid_);
}

std::string BackendProcess::log() const {
  std::ifstream in(dir_ + "/backend.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<pid_t> children_of(pid_t pid) {
  // /proc/<pid>/task/*/children needs CONFIG_PROC_CHILDREN, which not every kernel has; the
  // parent pid in every /proc/<n>/stat works everywhere.
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');  // the command name may contain spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

bool process_exists(pid_t pid) {
  // A zombie still "exists" to kill(); a reaped process does not.
  return ::kill(pid, 0) == 0;
}

bool BackendProcess::logged(const std::string& text, int ms) const {
  return eventually(ms, [&] { return log().find(text) != std::string::npos; });
}

bool eventually(int ms, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string loader_path_first(const std::string& dir) {
  const char* inherited = std::getenv("LD_LIBRARY_PATH");
  std::string value = "LD_LIBRARY_PATH=" + dir;
  if (inherited != nullptr && *inherited != '\0') value += std::string(":") + inherited;
  return value;
}

}  // namespace gvirtus::testing
