// The median of a sample, as the benches report it: the middle value, or the mean of the two
// middle values of an even-sized sample.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gvirtus::bench {

// The median of a non-empty sample (0 for an empty one); reorders it.
inline double median(std::vector<double>& samples) {
  if (samples.empty()) return 0;
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  if (samples.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(samples.begin(), middle)) / 2;  // the lower middle
}

}  // namespace gvirtus::bench
