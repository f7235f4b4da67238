#include "transport/transport_cases.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "common/config.h"
#include "common/unique_fd.h"
#include "communicators/factory.h"

namespace gvirtus::testing {
namespace {

// Endpoints are built from properties.json text, as users write them, through the factory.
std::unique_ptr<Communicator> from_config(const std::string& endpoint, size_t max_message_bytes) {
  const Config config =
      parse_config(R"({"communicator":[{"endpoint":)" + endpoint + R"(,"plugins":[]}]})", "<test>");
  return make_communicator(config.endpoints.at(0), max_message_bytes);
}

std::string port_of(const std::string& url) {
  return url.substr(url.rfind(':') + 1);
}

std::string tcp_endpoint(const std::string& host, const std::string& port) {
  return R"({"suite":"tcp/ip","protocol":"tcp","server_address":")" + host + R"(","port":")" +
         port + R"("})";
}

// A loopback port with nothing behind it: bound, then closed.
std::string free_tcp_port() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  return std::to_string(ntohs(addr.sin_port));
}

// shm: a fresh name per endpoint. Socket mode uses the abstract namespace (nothing on disk); file
// mode files live in /dev/shm and are removed when the test program ends.
std::string unique_name(const char* kind) {
  static std::atomic<int> counter{0};
  return std::string("gvirtus-test-") + kind + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

struct TestFiles {
  std::mutex mutex;
  std::vector<std::string> paths;
  ~TestFiles() {
    for (const std::string& path : paths) ::unlink(path.c_str());
  }
};

std::string shm_test_file() {
  static TestFiles files;
  const std::string path = "/dev/shm/" + unique_name("file");
  std::lock_guard lock(files.mutex);
  files.paths.push_back(path);
  return path;
}

std::string shm_socket_endpoint(const std::string& path) {
  return R"({"suite":"shm","protocol":"shm","path":")" + path + R"(","ring_bytes":262144})";
}

// A dead_after short enough for quick killed-peer tests, long enough that a heartbeat thread
// starved on a loaded 2-CPU machine is not taken for a dead peer; rings smaller than messages
// exercise streaming in pieces.
std::string shm_file_endpoint(const std::string& file) {
  return R"({"suite":"shm","protocol":"shm","file":")" + file +
         R"(","ring_bytes":262144,"dead_after_ms":1500})";
}

std::string vsock_endpoint(const std::string& port) {
  return R"({"suite":"vsock","protocol":"vsock","cid":"local","listen_cid":"local","port":")" +
         port + R"("})";
}

// A vsock port nobody listens on: the listener's port plus a large odd offset, probed free.
std::string unused_vsock_port() {
  static std::atomic<uint32_t> next{0x40000000u + static_cast<uint32_t>(::getpid()) * 16};
  return std::to_string(next++);
}

// `extra` adds fields: the rdma_block case sleeps on completions instead of busy-polling them.
// (Windows much smaller than the default 4 MiB cannot pass gather_send: it sends 100 kB before
// anyone receives, which a stream socket's kernel buffer absorbs.)
std::string rdma_endpoint(const std::string& address, const std::string& port,
                          const std::string& extra = "") {
  return R"({"suite":"infiniband-rdma","protocol":"ib","server_address":")" + address +
         R"(","port":")" + port + "\"" + extra + "}";
}

// vsock over loopback (CID 1) works where the vsock_loopback module is loaded.
bool vsock_loopback_works() {
  try {
    auto listener = from_config(vsock_endpoint("0"), 1 << 20)->serve();
    auto client = from_config(vsock_endpoint(port_of(listener->local_name())), 1 << 20);
    auto connection = client->connect(std::chrono::milliseconds(1000));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// GVIRTUS_TEST_TRANSPORTS="rdma,vsock" names the only cases to run, and makes a missing one an
// error instead of leaving it out (the VM harness sets it, so that nothing passes by skipping).
std::vector<std::string> required_transports() {
  std::vector<std::string> out;
  const char* list = std::getenv("GVIRTUS_TEST_TRANSPORTS");
  if (list == nullptr) return out;
  std::string text(list);
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at) out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<TransportCase> transport_cases() {
  std::vector<TransportCase> all = builtin_cases();
  // vsock joins where loopback vsock exists; rdma where GVIRTUS_TEST_RDMA_ADDR names the address
  // of an RDMA device (Soft-RoCE in the VM harness) and the plugin loads.
  if (vsock_loopback_works()) {
    all.push_back({"vsock",
                   [](size_t max) {
                     ServedEndpoint served;
                     served.listener = from_config(vsock_endpoint("0"), max)->serve();
                     served.client =
                         from_config(vsock_endpoint(port_of(served.listener->local_name())), max);
                     return served;
                   },
                   [] { return from_config(vsock_endpoint(unused_vsock_port()), 1 << 20); }});
  }
  if (const char* address = std::getenv("GVIRTUS_TEST_RDMA_ADDR"); address && *address) {
    const std::string host = address;
    for (const auto& [name, extra] : {std::pair<std::string, std::string>{"rdma", ""},
                                      {"rdma_block", R"(,"completion":"block")"}}) {
      all.push_back({name,
                     [host, extra](size_t max) {
                       ServedEndpoint served;
                       served.listener = from_config(rdma_endpoint(host, "0", extra), max)->serve();
                       served.client = from_config(
                           rdma_endpoint(host, port_of(served.listener->local_name()), extra), max);
                       return served;
                     },
                     [host, extra] {
                       return from_config(rdma_endpoint(host, free_tcp_port(), extra), 1 << 20);
                     }});
    }
  }
  const std::vector<std::string> required = required_transports();
  if (required.empty()) return all;
  std::vector<TransportCase> chosen;
  for (const std::string& name : required) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
    if (it == all.end()) {
      throw std::runtime_error("GVIRTUS_TEST_TRANSPORTS names \"" + name +
                               "\", which is not available here (vsock_loopback loaded? "
                               "GVIRTUS_TEST_RDMA_ADDR set?)");
    }
    chosen.push_back(*it);
  }
  return chosen;
}

std::vector<TransportCase> builtin_cases() {
  return {
      {"tcp",
       [](size_t max) {
         ServedEndpoint served;
         served.listener = from_config(tcp_endpoint("127.0.0.1", "0"), max)->serve();
         served.client =
             from_config(tcp_endpoint("127.0.0.1", port_of(served.listener->local_name())), max);
         return served;
       },
       [] { return from_config(tcp_endpoint("127.0.0.1", free_tcp_port()), 1 << 20); }},
      {"shm_socket",
       [](size_t max) {
         const std::string endpoint = shm_socket_endpoint("@" + unique_name("sock"));
         return ServedEndpoint{from_config(endpoint, max)->serve(), from_config(endpoint, max)};
       },
       [] { return from_config(shm_socket_endpoint("@" + unique_name("none")), 1 << 20); }},
      {"shm_file",
       [](size_t max) {
         const std::string endpoint = shm_file_endpoint(shm_test_file());
         return ServedEndpoint{from_config(endpoint, max)->serve(), from_config(endpoint, max)};
       },
       [] { return from_config(shm_file_endpoint("/dev/shm/" + unique_name("none")), 1 << 20); }},
  };
}

std::vector<std::byte> pattern(size_t bytes, uint32_t seed) {
  std::vector<std::byte> data(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : data) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return data;
}

void send_one(Connection& c, ByteView data) {
  const ByteView pieces[] = {data};
  c.send(pieces);
}

}  // namespace gvirtus::testing
