# `cmake --install`: the C API (libmoss_runtime.so with its header), the
# config library, the compiler's tools when they are built, and a CMake
# package, so another project builds against moss with find_package(moss)
# and the targets moss::runtime and moss::config. The MLIR libraries are
# linked into the tools and not installed.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MOSS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/moss)
set(moss_exported MossConfig)
if(TARGET moss_runtime)
  list(APPEND moss_exported moss_runtime)
  install(FILES ${MOSS_SOURCE_DIR}/include/moss/Runtime/moss_runtime.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moss/Runtime)
endif()
install(TARGETS ${moss_exported} EXPORT mossTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${MOSS_SOURCE_DIR}/include/moss/Config
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moss)
install(FILES ${MOSS_BINARY_DIR}/include/moss/Version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moss)
if(TARGET moss-opt)
  install(TARGETS moss-opt moss-aot RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT mossTargets NAMESPACE moss:: DESTINATION ${MOSS_INSTALL_CMAKEDIR})
configure_package_config_file(${MOSS_SOURCE_DIR}/cmake/mossConfig.cmake.in
  ${MOSS_BINARY_DIR}/mossConfig.cmake INSTALL_DESTINATION ${MOSS_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the C API (its version is the SONAME).
write_basic_package_version_file(${MOSS_BINARY_DIR}/mossConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${MOSS_BINARY_DIR}/mossConfig.cmake
              ${MOSS_BINARY_DIR}/mossConfigVersion.cmake
        DESTINATION ${MOSS_INSTALL_CMAKEDIR})

if(MOSS_BUILD_TESTS)
  # A project outside the tree builds against the installed package.
  set(moss_api_version "")
  if(TARGET moss_runtime)
    get_target_property(moss_api_version moss_runtime SOVERSION)
  endif()
  add_test(NAME CMakePackage.FindPackageConsumer
    COMMAND ${CMAKE_COMMAND} -DMOSS_BUILD_DIR=${MOSS_BINARY_DIR}
            -DMOSS_SOURCE_DIR=${MOSS_SOURCE_DIR}
            -DWORK_DIR=${MOSS_BINARY_DIR}/find-package-test
            -DEXPECT_RUNTIME=$<TARGET_EXISTS:moss_runtime>
            -DAPI_VERSION=${moss_api_version}
            "-DEXTRA_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
            -P ${MOSS_SOURCE_DIR}/cmake/CMakePackageTest.cmake)
  set_tests_properties(CMakePackage.FindPackageConsumer PROPERTIES TIMEOUT 600)
endif()
