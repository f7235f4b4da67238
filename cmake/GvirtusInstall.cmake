# What `cmake --install` lays out, and the two Debian packages (docs/install.md):
#   client   bin/gvirtus-{run,smi,ping,bench}, lib/gvirtus/stub/libcudart.so.13, the samples
#            (libexec/gvirtus/samples), Slurm's task prolog, etc/gvirtus/properties.json - every machine that runs
#            CUDA applications, and GPU nodes too (gvirtus-smi, the configuration)
#   backend  bin/gvirtus-backend, lib/gvirtus/ plugins, the systemd unit - GPU nodes; depends on
#            the client package, which owns the shared configuration file
# Install rules that name no component belong to the client (CMAKE_INSTALL_DEFAULT_COMPONENT_NAME
# in the top-level CMakeLists.txt), so a new tool is packaged without touching this file.

# Paths that depend on the prefix are computed when installing, not when configuring: one build
# tree installs into any prefix (--prefix P) and into the packages (/usr, configuration in /etc).
set(GVIRTUS_PREFIX_PATHS_CODE [[
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(gvirtus_etc "/etc/gvirtus")
  else()
    set(gvirtus_etc "${CMAKE_INSTALL_PREFIX}/etc/gvirtus")
  endif()
]])

# Without the CUDA toolkit there is no cudart plugin: the default then serves the core calls only.
if(TARGET gvirtus-plugin-cudart)
  set(GVIRTUS_DEFAULT_CONFIG ${PROJECT_SOURCE_DIR}/etc/properties.json)
else()
  set(GVIRTUS_DEFAULT_CONFIG ${PROJECT_SOURCE_DIR}/etc/examples/core-only.json)
endif()
install(CODE "${GVIRTUS_PREFIX_PATHS_CODE}
  file(INSTALL DESTINATION \"\${gvirtus_etc}\" TYPE FILE
       FILES \"${GVIRTUS_DEFAULT_CONFIG}\" RENAME properties.json)" COMPONENT client)

install(CODE "${GVIRTUS_PREFIX_PATHS_CODE}
  set(BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(CONFIG \"\${gvirtus_etc}/properties.json\")
  set(DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
  # One scratch directory per destination: installs into several prefixes may run at once.
  string(MD5 unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(unit \"${PROJECT_BINARY_DIR}/install/unit-\${unit_dir}/gvirtus-backend.service\")
  configure_file(\"${PROJECT_SOURCE_DIR}/etc/systemd/gvirtus-backend.service.in\" \"\${unit}\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\" TYPE FILE
       FILES \"\${unit}\")
  file(REMOVE_RECURSE \"${PROJECT_BINARY_DIR}/install/unit-\${unit_dir}\")" COMPONENT backend)

install(FILES README.md docs/install.md docs/configuration.md docs/transports.md
              docs/troubleshooting.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT client)

# The samples, so an installed client can be checked end to end:
#   gvirtus-run -- <prefix>/libexec/gvirtus/samples/saxpy
if(TARGET samples)
  foreach(sample saxpy matrixMul streams_events)
    install(PROGRAMS ${PROJECT_BINARY_DIR}/samples/${sample}
            DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/gvirtus/samples COMPONENT client)
  endforeach()
endif()

# Slurm's TaskProlog for a pool of gvirtus GPUs (docs/cluster.md, "Slurm"): on every node that
# runs jobs, which is where the client package goes.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/slurm/gvirtus-slurm-task-prolog
        DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/gvirtus COMPONENT client)

# The timed workloads of `gvirtus-bench gpu`, which finds them here once installed.
if(TARGET gvirtus-gpu-workloads)
  install(PROGRAMS ${PROJECT_BINARY_DIR}/bin/gpu_workloads DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/gvirtus
          COMPONENT client)
endif()

# CPack: `cpack -G DEB` in the build tree writes gvirtus-client_<v>_<arch>.deb and
# gvirtus-backend_<v>_<arch>.deb (tests/ops checks their file lists).
set(CPACK_PACKAGE_NAME gvirtus)
set(CPACK_PACKAGE_VENDOR "gvirtus")
set(CPACK_PACKAGE_CONTACT "gvirtus maintainers <gvirtus@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU remoting for unmodified CUDA applications")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install with DESTDIR and the real prefix, so the prefix-dependent paths above see /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL client backend)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)  # dpkg-shlibdeps would need NVIDIA's packages registered
set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME gvirtus-client)
set(CPACK_DEBIAN_CLIENT_PACKAGE_DEPENDS
    "libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1, liblz4-1, libzstd1")
set(CPACK_COMPONENT_CLIENT_DESCRIPTION
    "gvirtus client: the stub libcudart.so.13, gvirtus-run, gvirtus-smi and tools\nRuns unmodified CUDA applications (built with nvcc -cudart shared) on the GPUs of a\ngvirtus backend: gvirtus-run -- ./app. Also holds the configuration, /etc/gvirtus/properties.json.")
set(CPACK_DEBIAN_CLIENT_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/install/client/conffiles)
file(WRITE ${PROJECT_BINARY_DIR}/install/client/conffiles "/etc/gvirtus/properties.json\n")
set(CPACK_DEBIAN_BACKEND_PACKAGE_NAME gvirtus-backend)
set(CPACK_DEBIAN_BACKEND_PACKAGE_DEPENDS
    "gvirtus-client (= ${PROJECT_VERSION}), libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1, libprometheus-cpp-pull1.0, libprometheus-cpp-core1.0")
set(CPACK_DEBIAN_BACKEND_PACKAGE_RECOMMENDS "nvidia-driver | nvidia-tesla-driver, libcudart13 | cuda-cudart-13-0")
set(CPACK_COMPONENT_BACKEND_DESCRIPTION
    "gvirtus backend: serves remote CUDA calls on this machine's GPUs\ngvirtus-backend, its CUDA runtime plugin and a systemd unit (gvirtus-backend.service,\nnot enabled by default). Needs NVIDIA's driver and CUDA 13 runtime to do useful work.")
include(CPack)
