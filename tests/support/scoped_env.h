// An environment variable set (or unset) for a scope and restored after it: for tests whose code,
// or the processes they start, read the environment.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace gvirtus::testing {

class ScopedEnv {
 public:
  // Sets `name` to `value`, or unsets it with nullopt.
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace gvirtus::testing
