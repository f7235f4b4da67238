# Build options. Every one has a default that works on a machine with or without CUDA/rdma-core.
option(GVIRTUS_BUILD_TESTS "Build the GoogleTest suites" ON)
set(GVIRTUS_WITH_CUDA "AUTO" CACHE STRING "Build CUDA parts: AUTO (if the toolkit is found), ON, OFF")
set(GVIRTUS_WITH_RDMA "AUTO" CACHE STRING "Build the rdma communicator plugin: AUTO, ON, OFF")
option(GVIRTUS_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(GVIRTUS_SANITIZE)
  # Undefined behaviour fails the test that hit it (by default UBSan reports and goes on, and a
  # passing test's output is never shown).
  # -O1 -g1 (line tables): what ASan's documentation recommends, and half the compile time of the
  # build type's -O2 -g on CI's two cores; reports still name file and line.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -O1 -g1)
  add_link_options(-fsanitize=address,undefined)
endif()
