# The MLIR compiler: dialect, passes, moss-opt, moss-aot and the lit tests.
find_package(MLIR REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
message(STATUS "moss: using MLIRConfig.cmake in ${MLIR_DIR}")

set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}")
list(APPEND CMAKE_MODULE_PATH "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

include_directories(${LLVM_INCLUDE_DIRS})
include_directories(${MLIR_INCLUDE_DIRS})
include_directories(${MOSS_SOURCE_DIR}/include)
include_directories(${MOSS_BINARY_DIR}/include)
link_directories(${LLVM_BUILD_LIBRARY_DIR})
separate_arguments(LLVM_DEFINITIONS_LIST NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${LLVM_DEFINITIONS_LIST})

# Where the AOT tool finds ptxas and libdevice.
set(MOSS_CUDA_PATH "/usr/local/cuda" CACHE PATH "CUDA toolkit used for ptxas and libdevice")

add_subdirectory(include)
add_subdirectory(lib)
# Test-only passes that moss-opt links (MLIR's test/lib pattern).
add_subdirectory(test/lib)
add_subdirectory(tools)
add_subdirectory(test)
if(MOSS_BUILD_TESTS)
  add_subdirectory(unittests/Compiler)
endif()
