#include "plugins/cudart/frontend/address_ranges.h"

namespace gvirtus::cudart {

AddressRanges& device_allocations() {
  static auto* ranges = new AddressRanges;  // never destroyed: used until the process ends
  return *ranges;
}
AddressRanges& host_allocations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}
AddressRanges& host_registrations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}

}  // namespace gvirtus::cudart
