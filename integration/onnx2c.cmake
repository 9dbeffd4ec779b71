# onnx2c for CMake projects: compiles an ONNX model to C at build time and
# adds the generated source to a target.
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/onnx2c/integration)
#   include(onnx2c)
#   add_executable(firmware main.c)
#   onnx2c_add_model(firmware model.onnx NAME net FLAGS --target cortex-m)
#
# onnx2c_add_model(<target> <model.onnx> [NAME <name>] [FLAGS <flag>...])
#   runs `onnx2c <model.onnx> -o <build>/onnx2c/<name>/<name>.c --name <name>
#   <flags>` whenever the model or onnx2c changes, adds <name>.c to <target>
#   and its folder to <target>'s include path (#include "<name>.h").
#   NAME defaults to the model's file name without its extension.
#
# The onnx2c program: ONNX2C_EXECUTABLE (a cache variable; found on PATH or
# in this checkout's build/ folder).
include_guard(GLOBAL)

find_program(ONNX2C_EXECUTABLE onnx2c HINTS "${CMAKE_CURRENT_LIST_DIR}/../build"
             DOC "the onnx2c compiler")

function(onnx2c_add_model target model)
    cmake_parse_arguments(ARG "" "NAME" "FLAGS" ${ARGN})
    if(NOT ONNX2C_EXECUTABLE)
        message(FATAL_ERROR "onnx2c_add_model: onnx2c not found; set ONNX2C_EXECUTABLE")
    endif()
    get_filename_component(model_abs "${model}" ABSOLUTE)
    if(NOT ARG_NAME)
        get_filename_component(ARG_NAME "${model}" NAME_WE)
        string(MAKE_C_IDENTIFIER "${ARG_NAME}" ARG_NAME)
    endif()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/onnx2c/${ARG_NAME}")
    set(src "${dir}/${ARG_NAME}.c")
    set(hdr "${dir}/${ARG_NAME}.h")
    add_custom_command(
        OUTPUT "${src}" "${hdr}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
        COMMAND "${ONNX2C_EXECUTABLE}" "${model_abs}" -o "${src}" --name "${ARG_NAME}" ${ARG_FLAGS}
        DEPENDS "${model_abs}" "${ONNX2C_EXECUTABLE}"
        COMMENT "onnx2c ${model} -> ${ARG_NAME}.c"
        VERBATIM)
    target_sources(${target} PRIVATE "${src}" "${hdr}")
    target_include_directories(${target} PRIVATE "${dir}")
endfunction()
