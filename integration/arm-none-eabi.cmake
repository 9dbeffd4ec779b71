# A CMake toolchain file for bare-metal Arm (Cortex-M) with Debian's
# gcc-arm-none-eabi: cmake -DCMAKE_TOOLCHAIN_FILE=integration/arm-none-eabi.cmake
# (the CPU flags are the project's: examples/firmware/CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# no operating system to link a test program against while configuring
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
