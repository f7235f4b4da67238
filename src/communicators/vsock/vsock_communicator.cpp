#include "communicators/vsock/vsock_communicator.h"

// sys/socket.h first: newer kernels' linux/vm_sockets.h uses struct sockaddr without including it.
#include <sys/socket.h>
// (keep the order)
#include <linux/vm_sockets.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/unique_fd.h"
#include "communicators/stream/stream_connection.h"
#include "communicators/stream/stream_socket.h"

namespace gvirtus {
namespace {

std::string url(uint32_t cid, uint32_t port) {
  const std::string host = cid == VMADDR_CID_ANY ? std::string("any") : std::to_string(cid);
  return "vsock://" + host + ":" + std::to_string(port);
}

sockaddr_vm vm_address(uint32_t cid, uint32_t port) {
  sockaddr_vm addr{};
  addr.svm_family = AF_VSOCK;
  addr.svm_cid = cid;
  addr.svm_port = port;
  return addr;
}

// vsock's default 256 KiB socket buffer limits bandwidth; a larger one lets a 64 MiB copy stream.
// Failing to tune is not fatal (older kernels cap it): the connection still works, only slower.
constexpr uint64_t kBufferBytes = uint64_t{4} << 20;

void tune_connected(int fd) {
  (void)::setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_MAX_SIZE, &kBufferBytes,
                     sizeof kBufferBytes);
  (void)::setsockopt(fd, AF_VSOCK, SO_VM_SOCKETS_BUFFER_SIZE, &kBufferBytes, sizeof kBufferBytes);
}

std::string describe_vsock_peer(int fd) {
  sockaddr_vm addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "vsock://?";
  return url(addr.svm_cid, addr.svm_port);
}

class VsockCommunicator final : public Communicator {
 public:
  VsockCommunicator(VsockAddress address, size_t max_message_bytes)
      : address_(address), max_message_bytes_(max_message_bytes) {}

  std::unique_ptr<Listener> serve() override {
    const std::string where = url(address_.listen_cid, address_.port);
    UniqueFd fd(::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      raise(ErrorKind::kFailed, "cannot listen on " + where + ": " + std::strerror(errno) +
                                    " (is the vsock module loaded? see docs/vsock.md)");
    }
    tune_connected(fd.get());  // accepted sockets inherit the buffer sizes
    const uint32_t port = address_.port == 0 ? VMADDR_PORT_ANY : address_.port;
    const sockaddr_vm addr = vm_address(address_.listen_cid, port);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd.get(), 128) != 0) {
      raise(ErrorKind::kFailed, "cannot listen on " + where + ": " + std::strerror(errno));
    }
    sockaddr_vm bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    StreamSocketTraits traits{"vsock", tune_connected, describe_vsock_peer};
    return std::make_unique<StreamListener>(std::move(fd), url(address_.listen_cid, bound.svm_port),
                                            std::move(traits), max_message_bytes_);
  }

  // vsock answers a connect to a port nobody listens on with a reset (ECONNRESET), which, like
  // ECONNREFUSED, is reported at once as kDisconnected.
  std::unique_ptr<Connection> connect(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const sockaddr_vm addr = vm_address(address_.cid, address_.port);
    int err = 0;
    UniqueFd fd = connect_stream_socket(AF_VSOCK, reinterpret_cast<const sockaddr*>(&addr),
                                        sizeof addr, deadline, err);
    if (!fd.valid()) {
      if (err == ETIMEDOUT) {
        raise(ErrorKind::kTimedOut, "cannot connect to " + name() + ": no answer within " +
                                        std::to_string(timeout.count()) + " ms");
      }
      if (err == EAFNOSUPPORT || err == ENODEV) {
        raise(ErrorKind::kFailed, "cannot connect to " + name() + ": " + std::strerror(err) +
                                      " (is the vsock module loaded? see docs/vsock.md)");
      }
      raise(ErrorKind::kDisconnected, "cannot connect to " + name() + ": " + std::strerror(err));
    }
    tune_connected(fd.get());
    return std::make_unique<StreamConnection>(std::move(fd), "vsock", name(), max_message_bytes_);
  }

  std::string name() const override { return url(address_.cid, address_.port); }

 private:
  VsockAddress address_;
  size_t max_message_bytes_;
};

// A context id: a number or one of the well-known names.
uint32_t parse_cid(const EndpointConfig& endpoint, std::string_view key, uint32_t fallback) {
  const JsonValue* value = endpoint.fields().find(key);
  if (value == nullptr) return fallback;
  if (value->is_string()) {
    const std::string& text = value->as_string();
    if (text == "any") return VMADDR_CID_ANY;
    if (text == "local") return VMADDR_CID_LOCAL;
    if (text == "host") return VMADDR_CID_HOST;
    if (text == "hypervisor") return VMADDR_CID_HYPERVISOR;
  }
  const uint64_t cid = endpoint.uint_or(key, fallback);
  if (cid > 0xFFFFFFFFu) endpoint.fail(key, "expected a context id below 2^32");
  return static_cast<uint32_t>(cid);
}

}  // namespace

std::unique_ptr<Communicator> make_vsock_communicator(VsockAddress address,
                                                      size_t max_message_bytes) {
  return std::make_unique<VsockCommunicator>(address, max_message_bytes);
}

bool vsock_available() {
  UniqueFd fd(::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return fd.valid();
}

TransportInfo vsock_transport_info() {
  return {
      "vsock", {"vsock"}, {"vsock"}, [](const EndpointConfig& endpoint, size_t max_message_bytes) {
        VsockAddress address;
        address.cid = parse_cid(endpoint, "cid", VMADDR_CID_HOST);
        address.listen_cid = parse_cid(endpoint, "listen_cid", VMADDR_CID_ANY);
        if (endpoint.fields().find("port") == nullptr) {
          endpoint.fail("port", "expected a vsock port number, got nothing");
        }
        const uint64_t port = endpoint.uint_or("port", 0);
        if (port >= VMADDR_PORT_ANY) {
          endpoint.fail("port",
                        "expected a vsock port below 4294967295, got " + std::to_string(port));
        }
        address.port = static_cast<uint32_t>(port);
        return make_vsock_communicator(address, max_message_bytes);
      }};
}

}  // namespace gvirtus
