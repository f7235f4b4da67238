// docs/cudart-coverage.md must be what the build generates from the stub's objects, so that the
// published list never claims more (or less) than the stub does.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

std::string read(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(StubCoverage, committed_coverage_doc_is_current) {
  const std::string generated = read(GVIRTUS_COVERAGE_GENERATED);
  ASSERT_FALSE(generated.empty()) << "not generated: " << GVIRTUS_COVERAGE_GENERATED;
  EXPECT_TRUE(read(GVIRTUS_COVERAGE_COMMITTED) == generated)
      << GVIRTUS_COVERAGE_COMMITTED << " is out of date; refresh it with\n"
      << "  cmake --build <build dir> --target gvirtus-cudart-coverage-update\n"
      << "and commit it.";
}

}  // namespace
