# Provisional build of the stub libcudart.so.13 from the hand-written and table-generated calls,
# used until frontend/CMakeLists.txt (which also generates every other NVIDIA export as "not
# supported" and the exact version script) exists. Exports go under the version node
# libcudart.so.13, as NVIDIA's do.
set(GVIRTUS_STUB_MAP ${GVIRTUS_CUDART_GEN_DIR}/libcudart-provisional.map)
file(WRITE ${GVIRTUS_STUB_MAP} "libcudart.so.13 { global: cuda*; __cuda*; local: *; };\n")
add_library(gvirtus-cudart-stub SHARED
  frontend/stub_call.cpp frontend/memcpy.cpp frontend/errors.cpp frontend/registration.cpp
  frontend/pci_bus_id.cpp frontend/not_supported.cpp
  ${GVIRTUS_CUDART_GEN_DIR}/cudart_stub_calls.cpp)
target_link_libraries(gvirtus-cudart-stub PRIVATE gvirtus-frontend gvirtus-cudart-headers)
target_link_options(gvirtus-cudart-stub PRIVATE -Wl,--version-script=${GVIRTUS_STUB_MAP}
                    -Wl,--no-undefined -Wl,-soname,libcudart.so.13)
set_target_properties(gvirtus-cudart-stub PROPERTIES
  OUTPUT_NAME cudart PREFIX lib SUFFIX .so.13 NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/stub
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
install(TARGETS gvirtus-cudart-stub LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gvirtus/stub)
