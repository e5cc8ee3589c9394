# trainsim_embed_files(TARGET <lib> NAMESPACE <ns> BASE_DIR <dir> FILES <f>...)
# Builds a static library exposing `std::span<const EmbeddedFile> <ns>::embedded_files()`
# with each file's path (relative to BASE_DIR) and its bytes, regenerated when a file changes.
function(trainsim_embed_files)
  cmake_parse_arguments(E "" "TARGET;NAMESPACE;BASE_DIR" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${E_TARGET}.cpp")
  # A list cannot cross add_custom_command intact: pass it '|'-separated.
  string(REPLACE ";" "|" files_arg "${E_FILES}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${E_NAMESPACE} -DBASE_DIR=${E_BASE_DIR}
            "-DFILES=${files_arg}" -P "${PROJECT_SOURCE_DIR}/cmake/embed_files_generate.cmake"
    DEPENDS ${E_FILES} "${PROJECT_SOURCE_DIR}/cmake/embed_files_generate.cmake"
    COMMENT "Embedding ${E_TARGET}"
    VERBATIM)
  add_library(${E_TARGET} STATIC "${out}")
  target_include_directories(${E_TARGET} PUBLIC "${PROJECT_SOURCE_DIR}")
endfunction()
