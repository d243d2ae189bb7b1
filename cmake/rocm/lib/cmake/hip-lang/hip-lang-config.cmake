# emud's stand-in for ROCm's hip-lang package, which CMake's HIP language
# loads from the HIP compiler's ROCm root (cmake/emud.cmake points that
# root here). ROCm's package links the HIP runtime and device libraries;
# with emud, emud c++ adds emud's headers and links the emulator itself,
# so the targets carry nothing.
if(NOT TARGET hip-lang::device)
  add_library(hip-lang::device INTERFACE IMPORTED)
endif()
if(NOT TARGET hip-lang::amdhip64)
  add_library(hip-lang::amdhip64 INTERFACE IMPORTED)
endif()
set(hip-lang_FOUND TRUE)
