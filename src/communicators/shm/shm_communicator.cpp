#include "communicators/shm/shm_communicator.h"

#include "communicators/shm/shm_file.h"
#include "communicators/shm/shm_options.h"
#include "communicators/shm/shm_socket.h"

namespace gvirtus {
namespace {

class ShmCommunicator final : public Communicator {
 public:
  ShmCommunicator(shm::ShmOptions options, size_t max_message_bytes)
      : options_(std::move(options)), max_message_bytes_(max_message_bytes) {}

  std::unique_ptr<Listener> serve() override {
    return options_.file_mode() ? shm::serve_file(options_, max_message_bytes_)
                                : shm::serve_socket(options_, max_message_bytes_);
  }

  std::unique_ptr<Connection> connect(std::chrono::milliseconds timeout) override {
    return options_.file_mode() ? shm::connect_file(options_, max_message_bytes_, timeout)
                                : shm::connect_socket(options_, max_message_bytes_, timeout);
  }

  std::string name() const override {
    return options_.file_mode() ? "shm+file://" + options_.file : "shm://" + options_.path;
  }

 private:
  shm::ShmOptions options_;
  size_t max_message_bytes_;
};

}  // namespace

TransportInfo shm_transport_info() {
  return {"shm", {"shm"}, {"shm"}, [](const EndpointConfig& endpoint, size_t max_message_bytes) {
            return std::make_unique<ShmCommunicator>(shm::read_shm_options(endpoint),
                                                     max_message_bytes);
          }};
}

}  // namespace gvirtus
