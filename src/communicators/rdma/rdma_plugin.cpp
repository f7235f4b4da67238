// The entry point of libgvirtus-comm-rdma.so: the factory dlopens this plugin when an endpoint
// names "infiniband-rdma"/"ib" and calls gvirtus_register_communicator with its registrar.
#include "communicators/factory.h"
#include "communicators/rdma/rdma_communicator.h"
#include "communicators/rdma/rdma_resources.h"

extern "C" __attribute__((visibility("default"))) void gvirtus_register_communicator(
    gvirtus::TransportRegistrar* registrar) {
  gvirtus::rdma::install_fork_counter();
  registrar({"rdma",
             {"infiniband-rdma", "rdma"},
             {"ib", "rdma"},
             [](const gvirtus::EndpointConfig& endpoint, size_t max_message_bytes) {
               return gvirtus::rdma::make_rdma_communicator(
                   gvirtus::rdma::parse_rdma_options(endpoint), max_message_bytes);
             }});
}
