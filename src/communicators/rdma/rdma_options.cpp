#include "communicators/rdma/rdma_options.h"

#include "communicators/rdma/rdma_wire.h"

namespace gvirtus::rdma {
namespace {

bool power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

}  // namespace

RdmaOptions parse_rdma_options(const EndpointConfig& endpoint) {
  static const char* const kKnown[] = {"suite",      "protocol", "server_address",
                                       "port",       "slots",    "slot_bytes",
                                       "completion", "spin_us",  "max_registered_bytes"};
  const JsonValue& fields = endpoint.fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& key = fields.key(i);
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) endpoint.fail(key, "unknown rdma field (see docs/rdma.md)");
  }
  RdmaOptions o;
  o.host = endpoint.string_or("server_address", o.host);
  if (o.host.empty()) endpoint.fail("server_address", "expected an IP address, got \"\"");
  o.port = endpoint.require_port("port");
  const uint64_t slots = endpoint.uint_or("slots", o.slots);
  if (slots < 4 || slots > kMaxSlots) {
    endpoint.fail("slots",
                  "expected 4 to " + std::to_string(kMaxSlots) + ", got " + std::to_string(slots));
  }
  o.slots = static_cast<uint32_t>(slots);
  const uint64_t slot_bytes = endpoint.uint_or("slot_bytes", o.slot_bytes);
  if (!power_of_two(slot_bytes) || slot_bytes < 4096 || slot_bytes > (uint64_t{16} << 20)) {
    endpoint.fail("slot_bytes", "expected a power of two from 4096 to 16777216, got " +
                                    std::to_string(slot_bytes));
  }
  o.slot_bytes = static_cast<uint32_t>(slot_bytes);
  const std::string completion = endpoint.string_or("completion", "poll");
  if (completion != "poll" && completion != "block") {
    endpoint.fail("completion", "expected \"poll\" or \"block\", got \"" + completion + "\"");
  }
  const uint64_t spin = endpoint.uint_or("spin_us", completion == "block" ? 0 : o.spin_us);
  if (spin > 10'000'000) endpoint.fail("spin_us", "expected at most 10000000 (10 s)");
  o.spin_us = static_cast<uint32_t>(spin);
  o.max_registered_bytes = endpoint.uint_or("max_registered_bytes", o.max_registered_bytes);
  return o;
}

}  // namespace gvirtus::rdma
