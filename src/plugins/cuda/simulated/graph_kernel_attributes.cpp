// Kernel nodes' launch attributes on the simulated device: kept per attribute as set
// (CUlaunchAttributeValue), read back (zeroed until set) and copied between kernel nodes. They
// change nothing a launch records; only the attributes the driver takes for graph nodes are.
#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

// The launch attributes CUlaunchAttributeID says are valid for graph nodes.
bool node_attribute(CUkernelNodeAttrID attribute) {
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      return true;
    default:
      return false;
  }
}

sim::KernelNode* kernel(sim::State& s, CUgraphNode handle) {
  sim::Node* node = sim::node_of_type(s, handle, CU_GRAPH_NODE_TYPE_KERNEL);
  return node != nullptr ? &std::get<sim::KernelNode>(node->params) : nullptr;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode,
                                                                CUkernelNodeAttrID attr,
                                                                CUkernelNodeAttrValue* value_out) {
  return sim::guarded([&](sim::State& s) {
    const sim::KernelNode* node = kernel(s, hNode);
    if (node == nullptr || value_out == nullptr || !node_attribute(attr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto found = node->attributes.find(attr);
    *value_out = found != node->attributes.end() ? found->second : CUkernelNodeAttrValue{};
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphKernelNodeSetAttribute(
    CUgraphNode hNode, CUkernelNodeAttrID attr, const CUkernelNodeAttrValue* value) {
  return sim::guarded([&](sim::State& s) {
    sim::KernelNode* node = kernel(s, hNode);
    if (node == nullptr || value == nullptr || !node_attribute(attr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    node->attributes[attr] = *value;
    return CUDA_SUCCESS;
  });
}

// Every attribute of `src` onto `dst`, replacing what `dst` had.
GVIRTUS_SIMULATED_EXPORT CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst,
                                                                  CUgraphNode src) {
  return sim::guarded([&](sim::State& s) {
    sim::KernelNode* to = kernel(s, dst);
    const sim::KernelNode* from = kernel(s, src);
    if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    to->attributes = from->attributes;
    return CUDA_SUCCESS;
  });
}
