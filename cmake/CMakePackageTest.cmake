# ctest CMakePackage.FindPackageConsumer (cmake -P): installs this build
# into a fresh prefix, checks what the prefix holds (the runtime under its
# versioned SONAME, the package files, no MLIR archive), then configures and
# builds examples/find-package against it with find_package(moss) and runs
# its whitelist lister.
foreach(var MOSS_BUILD_DIR MOSS_SOURCE_DIR WORK_DIR EXPECT_RUNTIME API_VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CMakePackageTest.cmake needs -D${var}=...")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${MOSS_BUILD_DIR} --prefix ${prefix})

file(GLOB package_files ${prefix}/lib*/cmake/moss/mossConfig.cmake)
if(NOT package_files)
  message(FATAL_ERROR "no lib/cmake/moss/mossConfig.cmake in ${prefix}")
endif()
file(GLOB_RECURSE mlir_archives ${prefix}/*MLIR*.a ${prefix}/*MossTest*.a)
if(mlir_archives)
  message(FATAL_ERROR "MLIR libraries were installed: ${mlir_archives}")
endif()
if(EXPECT_RUNTIME)
  file(GLOB sonamed ${prefix}/lib*/libmoss_runtime.so.${API_VERSION})
  if(NOT sonamed)
    message(FATAL_ERROR "no libmoss_runtime.so.${API_VERSION} (the C API "
                        "version as SONAME) in ${prefix}")
  endif()
  if(NOT EXISTS ${prefix}/include/moss/Runtime/moss_runtime.h)
    message(FATAL_ERROR "moss_runtime.h not installed")
  endif()
endif()

run("configuring examples/find-package" ${CMAKE_COMMAND}
    -S ${MOSS_SOURCE_DIR}/examples/find-package -B ${WORK_DIR}/build
    "-DCMAKE_PREFIX_PATH=${prefix};${EXTRA_PREFIX_PATH}")
run("building examples/find-package" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(EXPECT_RUNTIME AND NOT EXISTS ${WORK_DIR}/build/c_api_example)
  message(FATAL_ERROR "find_package(moss) found no moss::runtime")
endif()
run("list_whitelist" ${WORK_DIR}/build/list_whitelist
    ${MOSS_SOURCE_DIR}/configs/h200-example.json)
if(NOT last_output MATCHES "[0-9]+,[0-9]+,[0-9]+,[0-9]+ -> \\[[0-9]+, [0-9]+, [0-9]+, [0-9]+\\]")
  message(FATAL_ERROR "list_whitelist printed no key:\n${last_output}")
endif()
message(STATUS "find_package(moss) consumer built and ran:\n${last_output}")
