# gvirtus_generate_calls(NAME [WHOLE] [REAL_LIBRARY] DESCRIPTOR d OUT_DIR o INCLUDE_DIRS i...
#                        [DEPENDS files...])
#   Runs tools/gen/gen_calls.py for one library: its descriptor, call table and real headers
#   (found in INCLUDE_DIRS) generate both sides into OUT_DIR. Defines the target gvirtus-NAME-generated
#   and sets NAME_GENERATED_FILES in the caller's scope: the generated files, as the generator
#   writes them for a library with hand-written code (cudart) or generated whole (a library
#   without stub_include gets L_plugin.cpp too: WHOLE; one whose descriptor names real_library
#   gets L_real.h and L_real.cpp: REAL_LIBRARY).
#   Needs GVIRTUS_PYTHONPATH (the generators' Python packages; src/plugins/cudart checks it).
function(gvirtus_generate_calls name)
  cmake_parse_arguments(G "WHOLE;REAL_LIBRARY" "DESCRIPTOR;OUT_DIR" "INCLUDE_DIRS;DEPENDS" ${ARGN})
  get_filename_component(descriptor_dir ${G_DESCRIPTOR} DIRECTORY)
  file(READ ${G_DESCRIPTOR} descriptor_text)
  string(JSON table GET ${descriptor_text} table)
  set(files)
  foreach(suffix calls.h enums.h vetting.h stub_calls.cpp remote_calls.h handlers.cpp remote.txt)
    list(APPEND files ${G_OUT_DIR}/${name}_${suffix})
  endforeach()
  if(G_WHOLE)
    list(APPEND files ${G_OUT_DIR}/${name}_plugin.cpp)
  endif()
  if(G_REAL_LIBRARY)
    list(APPEND files ${G_OUT_DIR}/${name}_real.h ${G_OUT_DIR}/${name}_real.cpp)
  endif()
  set(include_args)
  foreach(dir ${G_INCLUDE_DIRS})
    list(APPEND include_args --include ${dir})
  endforeach()
  set(gen ${PROJECT_SOURCE_DIR}/tools/gen)
  add_custom_command(
    OUTPUT ${files}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${GVIRTUS_PYTHONPATH}
            ${Python3_EXECUTABLE} ${gen}/gen_calls.py ${G_DESCRIPTOR} ${G_OUT_DIR}
            --cxx ${CMAKE_CXX_COMPILER} ${include_args}
    DEPENDS ${G_DESCRIPTOR} ${descriptor_dir}/${table} ${gen}/gen_calls.py ${gen}/gen_common.py
            ${gen}/header_signatures.py ${G_DEPENDS}
    COMMENT "Generating the ${name} call table's stub and backend")
  add_custom_target(gvirtus-${name}-generated DEPENDS ${files})
  set(${name}_GENERATED_FILES ${files} PARENT_SCOPE)
endfunction()

# gvirtus_plugin_with_simulated(NAME SOURCES src... LIBS lib...): the backend plugin NAME
# (lib/gvirtus/libgvirtus-plugin-NAME.so, on the machine's real library) and its variant
# NAME-simulated, the same handlers on the test double libgvirtus-simulated-NAME.so, which it
# opens from its own directory (a configuration names one or the other:
# backend/plugin_registry.h). Both are installed with the backend.
function(gvirtus_plugin_with_simulated name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  # Only the generated *_real.cpp (the library it opens: GVIRTUS_REAL_LIBRARY) differs between
  # the two; every other source is compiled once, for both (the call handlers take half a minute
  # each on CI's cores, and the sanitized tree builds them again).
  set(shared_sources ${P_SOURCES})
  list(FILTER shared_sources EXCLUDE REGEX "_real\\.cpp$")
  set(own_sources ${P_SOURCES})
  list(FILTER own_sources INCLUDE REGEX "_real\\.cpp$")
  add_library(gvirtus-plugin-${name}-objects OBJECT ${shared_sources})
  target_link_libraries(gvirtus-plugin-${name}-objects PRIVATE gvirtus-plugin-services
                        gvirtus-common ${P_LIBS})
  set_target_properties(gvirtus-plugin-${name}-objects PROPERTIES
    POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
  foreach(variant ${name} ${name}-simulated)
    add_library(gvirtus-plugin-${variant} MODULE ${own_sources}
                $<TARGET_OBJECTS:gvirtus-plugin-${name}-objects>)
    target_link_libraries(gvirtus-plugin-${variant} PRIVATE gvirtus-plugin-services gvirtus-common
                          ${P_LIBS} ${CMAKE_DL_LIBS})
    set_target_properties(gvirtus-plugin-${variant} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/gvirtus CXX_VISIBILITY_PRESET hidden)
  endforeach()
  target_compile_definitions(gvirtus-plugin-${name}-simulated PRIVATE
                             GVIRTUS_REAL_LIBRARY="libgvirtus-simulated-${name}.so"
                             GVIRTUS_REAL_LIBRARY_BESIDE_PLUGIN)
  set_target_properties(gvirtus-plugin-${name}-simulated PROPERTIES BUILD_RPATH "$ORIGIN"
                        INSTALL_RPATH "$ORIGIN")
  install(TARGETS gvirtus-plugin-${name} gvirtus-plugin-${name}-simulated
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/gvirtus COMPONENT backend)
endfunction()
