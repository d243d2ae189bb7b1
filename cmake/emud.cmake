# CMake toolchain file for building HIP C++ projects against emud's
# emulator instead of a GPU:
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<emud>/cmake/emud.cmake
#   cmake --build build && ctest --test-dir build
#
# C++ sources (LANGUAGE CXX, the usual way with CMAKE_CXX_COMPILER=hipcc)
# are compiled and linked by emud c++ (tools/emud-c++, which finds its
# emud and emud's tree from its own location). Sources of CMake's HIP
# language (MORI's tests/cpp/cco marks HIP files LANGUAGE HIP) build too:
# the HIP compiler is the same driver, its "ROCm root" is cmake/rocm
# (hip-lang and hip packages of emud's own whose targets add nothing:
# emud's headers and emulator are the driver's), and the architecture is
# gfx950 unless CMAKE_HIP_ARCHITECTURES says gfx1250.
get_filename_component(EMUD_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(CMAKE_CXX_COMPILER "${EMUD_ROOT}/tools/emud-c++")
set(CMAKE_HIP_COMPILER "${EMUD_ROOT}/tools/emud-c++")
set(CMAKE_HIP_COMPILER_ROCM_ROOT "${EMUD_ROOT}/cmake/rocm")
if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
  set(CMAKE_HIP_ARCHITECTURES gfx950)
endif()
# find_package(hip) and find_package(hip-lang) get emud's packages.
list(PREPEND CMAKE_PREFIX_PATH "${EMUD_ROOT}/cmake/rocm")
