# CUDA support (VIGIL_ENABLE_CUDA): the model/cuda backend (docs/gpu.md).
#
#   AUTO (default)  on when a CUDA compiler (nvcc) is found, else off
#   ON              required: configuring fails without nvcc
#   OFF             never; a configuration that asks for the CUDA backend then fails at start
#
# Sets VIGIL_CUDA (ON/OFF) for the rest of the build. Device code is built for Hopper (sm_90)
# unless CMAKE_CUDA_ARCHITECTURES says otherwise; a build without a GPU still compiles and links
# it, and its tests skip when no driver or device answers.
set(VIGIL_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE VIGIL_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT VIGIL_ENABLE_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "VIGIL_ENABLE_CUDA must be AUTO, ON or OFF, got '${VIGIL_ENABLE_CUDA}'")
endif()

set(VIGIL_CUDA OFF)
if(NOT VIGIL_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # C++17 for device code: CMake 3.25 knows no C++20 flag for nvcc 13, and the kernels need none.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    if(VIGIL_CCACHE)
      set(CMAKE_CUDA_COMPILER_LAUNCHER "${VIGIL_CCACHE}")
    endif()
    set(VIGIL_CUDA ON)
  elseif(VIGIL_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "VIGIL_ENABLE_CUDA=ON but no CUDA compiler was found: put nvcc on PATH, "
                        "set CUDACXX, or configure with -DVIGIL_ENABLE_CUDA=OFF")
  endif()
endif()
message(STATUS "vigil: CUDA backend ${VIGIL_CUDA} (VIGIL_ENABLE_CUDA=${VIGIL_ENABLE_CUDA})")
