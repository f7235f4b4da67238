# Detects optional dependencies. Without CUDA or rdma-core the transport layer and its tests
# still build; what is left out is reported once at configure time.
find_package(Threads REQUIRED)
# The backend's /metrics endpoint (backend/metrics_server.h): Debian's prometheus-cpp-dev.
find_package(prometheus-cpp CONFIG REQUIRED)

set(GVIRTUS_HAVE_CUDA OFF)
if(NOT GVIRTUS_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(GVIRTUS_HAVE_CUDA ON)
  elseif(GVIRTUS_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GVIRTUS_WITH_CUDA=ON but no CUDA toolkit was found")
  endif()
endif()

set(GVIRTUS_HAVE_RDMA OFF)
if(NOT GVIRTUS_WITH_RDMA STREQUAL "OFF")
  find_library(GVIRTUS_IBVERBS_LIB ibverbs)
  find_library(GVIRTUS_RDMACM_LIB rdmacm)
  find_path(GVIRTUS_VERBS_INCLUDE infiniband/verbs.h)
  if(GVIRTUS_IBVERBS_LIB AND GVIRTUS_RDMACM_LIB AND GVIRTUS_VERBS_INCLUDE)
    set(GVIRTUS_HAVE_RDMA ON)
  elseif(GVIRTUS_WITH_RDMA STREQUAL "ON")
    message(FATAL_ERROR "GVIRTUS_WITH_RDMA=ON but libibverbs/librdmacm headers were not found")
  endif()
endif()

if(GVIRTUS_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()

message(STATUS "gvirtus: CUDA ${GVIRTUS_HAVE_CUDA}, rdma ${GVIRTUS_HAVE_RDMA}, tests ${GVIRTUS_BUILD_TESTS}")
