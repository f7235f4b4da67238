// Where an installed gvirtus finds its prefix, configuration and plugins without GVIRTUS_HOME.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/paths.h"

namespace gvirtus {
namespace {

TEST(InstallPaths, the_prefix_is_found_from_every_directory_gvirtus_installs_code_into) {
  EXPECT_EQ(home_of_module_dir("/opt/gv/bin"), "/opt/gv");
  EXPECT_EQ(home_of_module_dir("/opt/gv/lib/gvirtus/stub"), "/opt/gv");
  EXPECT_EQ(home_of_module_dir("/opt/gv/lib/gvirtus"), "/opt/gv");
  EXPECT_EQ(home_of_module_dir("/usr/lib/x86_64-linux-gnu/gvirtus/stub"), "/usr");
  EXPECT_EQ(home_of_module_dir("/work/build/lib/stub"), "/work/build");  // the build tree
  EXPECT_EQ(home_of_module_dir("/usr/bin/"), "/usr");
  EXPECT_EQ(home_of_module_dir("/bin"), "/");
}

TEST(InstallPaths, the_usr_prefix_keeps_its_configuration_in_etc) {
  const auto usr = config_candidates("/usr");
  ASSERT_FALSE(usr.empty());
  EXPECT_EQ(usr.front(), "/etc/gvirtus/properties.json");
  const auto opt = config_candidates("/opt/gv");
  EXPECT_EQ(opt.front(), "/opt/gv/etc/gvirtus/properties.json");
  EXPECT_EQ(opt.back(), "/opt/gv/etc/properties.json");  // GVirtuS's GVIRTUS_HOME layout
}

TEST(InstallPaths, gvirtus_home_names_the_prefix_of_the_stub_and_plugins_first) {
  const char* old = std::getenv("GVIRTUS_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("GVIRTUS_HOME", "/opt/gv", 1);
  EXPECT_EQ(gvirtus_home(), "/opt/gv");
  EXPECT_EQ(stub_dirs().front(), "/opt/gv/lib/gvirtus/stub");
  EXPECT_EQ(plugin_dirs().front(), "/opt/gv/lib/gvirtus");
  // Then beside the program, so a GVIRTUS_HOME holding only a configuration still works.
  EXPECT_EQ(stub_dirs().back(), (executable_dir() / ".." / "lib" / "stub").lexically_normal());
  if (old != nullptr) {
    ::setenv("GVIRTUS_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("GVIRTUS_HOME");
  }
}

TEST(InstallPaths, a_program_finds_its_prefix_from_its_own_location) {
  // Code linked into a program resolves to the program's directory (not to argv[0]).
  EXPECT_EQ(module_dir(reinterpret_cast<const void*>(&home_of_module_dir)), executable_dir());
  if (std::getenv("GVIRTUS_HOME") == nullptr) {
    EXPECT_EQ(gvirtus_home(), home_of_module_dir(executable_dir()));
  }
}

}  // namespace
}  // namespace gvirtus
