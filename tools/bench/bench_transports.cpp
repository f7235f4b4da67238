#include "bench_transports.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/config.h"
#include "common/error.h"
#include "communicators/factory.h"

namespace gvirtus::bench {
namespace {

// "tcp://127.0.0.1:40112" -> "40112". The listener names the port it really bound, which is how
// a server asked for port 0 tells its clients where it is.
std::string port_of(const std::string& local_name) {
  const auto colon = local_name.rfind(':');
  const std::string port = colon == std::string::npos ? "" : local_name.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    raise(ErrorKind::kFailed, "cannot find the port in the listener name \"" + local_name + "\"");
  }
  return port;
}

std::string tcp_endpoint(const std::string& port) {
  return R"({"suite": "tcp/ip", "protocol": "tcp", "server_address": "127.0.0.1", "port": ")" +
         port + "\"}";
}

// shm in socket mode on a fresh abstract-namespace socket (nothing on disk, nothing left behind).
std::string shm_endpoint(const std::string& path) {
  return R"({"suite": "shm", "protocol": "shm", "path": ")" + path + "\"}";
}

std::string shm_path_of(const std::string& local_name) {
  const std::string scheme = "shm://";
  if (local_name.rfind(scheme, 0) != 0) {
    raise(ErrorKind::kFailed, "cannot find the path in the listener name \"" + local_name + "\"");
  }
  return local_name.substr(scheme.size());
}

// vsock over loopback (CID 1, the vsock_loopback module): ports are 32-bit.
std::string vsock_endpoint(const std::string& port) {
  return R"({"suite": "vsock", "protocol": "vsock", "cid": "local", "listen_cid": "local", "port": ")" +
         port + "\"}";
}

std::string vsock_port_of(const std::string& local_name) {
  const auto colon = local_name.rfind(':');
  const std::string port = colon == std::string::npos ? "" : local_name.substr(colon + 1);
  if (port.empty() || port.size() > 10 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    raise(ErrorKind::kFailed, "cannot find the port in the listener name \"" + local_name + "\"");
  }
  return port;
}

// rdma on the address of an RDMA device: $GVIRTUS_BENCH_RDMA_ADDR (Soft-RoCE in the VM harness
// puts one on 10.0.0.1), else 127.0.0.1.
std::string rdma_address() {
  const char* address = std::getenv("GVIRTUS_BENCH_RDMA_ADDR");
  return address != nullptr && *address != 0 ? address : "127.0.0.1";
}

// $GVIRTUS_BENCH_RDMA_COMPLETION picks "poll" (the default) or "block" completions.
std::string ib_endpoint(const std::string& port) {
  const char* completion = std::getenv("GVIRTUS_BENCH_RDMA_COMPLETION");
  return R"({"suite": "infiniband-rdma", "protocol": "ib", "server_address": ")" + rdma_address() +
         R"(", "completion": ")" + (completion != nullptr ? completion : "poll") +
         R"(", "port": ")" + port + "\"}";
}

// Each transport the bench knows: how to listen on a fresh endpoint and how to reach it.
const std::vector<BenchTransport>& table() {
  static const std::vector<BenchTransport> transports = {
      {"tcp", tcp_endpoint("0"),
       [](const std::string& local_name) { return tcp_endpoint(port_of(local_name)); }},
      {"shm", shm_endpoint("@gvirtus-bench-" + std::to_string(::getpid())),
       [](const std::string& local_name) { return shm_endpoint(shm_path_of(local_name)); }},
      {"vsock", vsock_endpoint("0"),
       [](const std::string& local_name) { return vsock_endpoint(vsock_port_of(local_name)); }},
      {"ib", ib_endpoint("0"),
       [](const std::string& local_name) { return ib_endpoint(port_of(local_name)); }},
  };
  return transports;
}

}  // namespace

const BenchTransport* find_bench_transport(std::string_view name) {
  for (const BenchTransport& transport : table()) {
    if (transport.name == name) return &transport;
  }
  return nullptr;
}

std::vector<std::string> bench_transport_names() {
  std::vector<std::string> names;
  for (const BenchTransport& transport : table()) names.push_back(transport.name);
  return names;
}

std::unique_ptr<Communicator> make_bench_communicator(const BenchTransport& transport,
                                                      const std::string& endpoint,
                                                      size_t max_message_bytes) {
  const std::string text = R"({"communicator": [{"endpoint": )" + endpoint + "}]}";
  const Config config = parse_config(text, "<gvirtus-bench " + transport.name + " endpoint>");
  return make_communicator(config.endpoints.at(0), max_message_bytes);
}

}  // namespace gvirtus::bench
