# gvirtus_stub_library: a stub shared library that exports exactly what the library it stands in
# for exports, every export under the same version node, built in two steps so that what is
# implemented is read from the compiled code, never listed:
#   1. TARGET-objects   the stub's SOURCES, compiled (position-independent, hidden visibility)
#   2. gen_exports.py   runs nm on those objects (and on REFERENCE), reads the descriptor and the
#                       library's headers, and writes the "not supported" definitions of the
#                       missing exports, the per-thread default stream variants of what the
#                       objects implement, the version script and the coverage list
# then TARGET, the shared library SONAME (its file name too) in OUTPUT_DIRECTORY.
#
#   gvirtus_stub_library(TARGET
#     SONAME libcudart.so.13                 the library's SONAME and file name
#     DESCRIPTOR .../cudart_descriptor.json  its "exports" object: tools/gen/gen_exports.py
#     SOURCES a.cpp ...                      what the stub implements
#     LIBS lib ...                           what the objects and the library link
#     OUTPUT_DIRECTORY dir
#     [REFERENCE lib]                        the library whose exports the stub copies, for
#                                            "reference": "library" (a file or a target)
#     [GENERATED_DIR dir]                    where the generator writes (default: ./exports)
#     [COVERAGE_DOC docs/x-coverage.md])     the committed coverage list; adds the target
#                                            gvirtus-LIBRARY-coverage-update that refreshes it
#
# The generator reads the headers with the objects' own include directories. TARGET gets the
# properties GVIRTUS_COVERAGE_FILE and GVIRTUS_NOT_SUPPORTED_SOURCE (the generated files, for
# tests). Needs GVIRTUS_PYTHONPATH, where cxxheaderparser is (src/plugins/cudart/CMakeLists.txt).
function(gvirtus_stub_library target)
  cmake_parse_arguments(PARSE_ARGV 1 arg ""
    "SONAME;DESCRIPTOR;OUTPUT_DIRECTORY;REFERENCE;GENERATED_DIR;COVERAGE_DOC" "SOURCES;LIBS")
  foreach(required SONAME DESCRIPTOR OUTPUT_DIRECTORY SOURCES)
    if(NOT arg_${required})
      message(FATAL_ERROR "gvirtus_stub_library(${target}): ${required} is required")
    endif()
  endforeach()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gvirtus_stub_library(${target}): unknown ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_GENERATED_DIR)
    set(arg_GENERATED_DIR ${CMAKE_CURRENT_BINARY_DIR}/exports)
  endif()
  find_package(Python3 REQUIRED COMPONENTS Interpreter)

  # The generated files are named after the descriptor's library (as gen_exports.py names them).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${arg_DESCRIPTOR})
  file(READ ${arg_DESCRIPTOR} descriptor)
  string(JSON library ERROR_VARIABLE json_error GET ${descriptor} library)
  if(json_error)
    message(FATAL_ERROR "${arg_DESCRIPTOR}: no library name: ${json_error}")
  endif()
  set(gen ${arg_GENERATED_DIR})
  set(not_supported ${gen}/${library}_not_supported.cpp)
  set(map ${gen}/lib${library}.map)
  set(coverage ${gen}/${library}-coverage.md)
  set(per_thread ${gen}/${library}_per_thread.cpp)

  set(objects ${target}-objects)
  add_library(${objects} OBJECT ${arg_SOURCES})
  target_link_libraries(${objects} PRIVATE ${arg_LIBS})
  set_target_properties(${objects} PROPERTIES
    POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

  set(options)
  set(depends)
  if(arg_REFERENCE)
    if(TARGET ${arg_REFERENCE})
      set(arg_REFERENCE $<TARGET_FILE:${arg_REFERENCE}>)
    endif()
    list(APPEND options --reference ${arg_REFERENCE})
    list(APPEND depends ${arg_REFERENCE})
  endif()
  if(arg_COVERAGE_DOC)
    set(update gvirtus-${library}-coverage-update)
    list(APPEND options --refresh-target ${update})
  endif()
  set(tools ${PROJECT_SOURCE_DIR}/tools/gen)
  set(includes $<TARGET_PROPERTY:${objects},INCLUDE_DIRECTORIES>)
  add_custom_command(
    OUTPUT ${not_supported} ${map} ${coverage} ${per_thread}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${GVIRTUS_PYTHONPATH}
            ${Python3_EXECUTABLE} ${tools}/gen_exports.py ${arg_DESCRIPTOR} ${gen}
            --cxx ${CMAKE_CXX_COMPILER} "--include;$<JOIN:${includes},;--include;>"
            --nm ${CMAKE_NM} ${options} --depfile ${gen}/${library}_exports.d
            $<TARGET_OBJECTS:${objects}>
    DEPFILE ${gen}/${library}_exports.d
    DEPENDS ${objects} $<TARGET_OBJECTS:${objects}> ${depends} ${arg_DESCRIPTOR}
            ${tools}/gen_exports.py ${tools}/gen_common.py ${tools}/header_signatures.py
    COMMAND_EXPAND_LISTS VERBATIM
    COMMENT "Generating ${library}'s not-supported exports, version script and coverage list")

  add_library(${target} SHARED ${not_supported} ${per_thread})
  target_link_libraries(${target} PRIVATE ${objects} ${arg_LIBS})
  target_link_options(${target} PRIVATE -Wl,--version-script=${map} -Wl,--no-undefined
                      -Wl,-soname,${arg_SONAME})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${arg_SONAME} PREFIX "" SUFFIX "" NO_SONAME ON
    LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${map}
    GVIRTUS_COVERAGE_FILE ${coverage}
    GVIRTUS_NOT_SUPPORTED_SOURCE ${not_supported})

  if(arg_COVERAGE_DOC)
    # tests check the committed copy against the generated one; this refreshes it.
    add_custom_target(${update}
      COMMAND ${CMAKE_COMMAND} -E copy ${coverage} ${arg_COVERAGE_DOC}
      DEPENDS ${coverage}
      COMMENT "Copying the generated coverage list to ${arg_COVERAGE_DOC}")
  endif()
endfunction()
