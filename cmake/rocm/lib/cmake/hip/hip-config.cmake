# emud's stand-in for ROCm's hip package (find_package(hip)): the
# hip::host and hip::device targets MORI's CMake links carry nothing,
# since emud c++ adds emud's headers and the emulator (cmake/emud.cmake).
if(NOT TARGET hip::host)
  add_library(hip::host INTERFACE IMPORTED)
endif()
if(NOT TARGET hip::device)
  add_library(hip::device INTERFACE IMPORTED)
endif()
if(NOT TARGET hip::amdhip64)
  add_library(hip::amdhip64 INTERFACE IMPORTED)
endif()
set(hip_FOUND TRUE)
set(HIP_PLATFORM amd)
