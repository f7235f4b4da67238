// The rdma communicator: librdmacm connection setup and listeners (the control path); the data
// path is RdmaConnection. Lives in the plugin libgvirtus-comm-rdma.so, which the factory loads
// only when an endpoint names "infiniband-rdma"/"ib", so the core never needs rdma-core.
#pragma once

#include <memory>

#include "communicators/communicator.h"
#include "communicators/rdma/rdma_options.h"

namespace gvirtus::rdma {

std::unique_ptr<Communicator> make_rdma_communicator(const RdmaOptions& options,
                                                     size_t max_message_bytes);

}  // namespace gvirtus::rdma
