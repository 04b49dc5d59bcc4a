# kubesched_add_plugin(<name> [OUTPUT_NAME <file-stem>] <source>...)
#
# Creates a MODULE library (lib<name>.so) for kubesched to dlopen: C11, hidden symbol visibility
# (only ks_module_info, marked KS_EXPORT by KS_DEFINE_MODULE, is exported), position-independent,
# linked to kubesched::sdk. Link further libraries with target_link_libraries(<name> PRIVATE ...).
include_guard(GLOBAL)

function(kubesched_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 _ksp "" "OUTPUT_NAME" "SOURCES")
  set(_sources ${_ksp_SOURCES} ${_ksp_UNPARSED_ARGUMENTS})
  if(NOT _sources)
    message(FATAL_ERROR "kubesched_add_plugin(${name}): no sources given")
  endif()
  if(NOT TARGET kubesched::sdk)
    message(FATAL_ERROR "kubesched_add_plugin(${name}): kubesched::sdk is not defined; "
                        "call find_package(kubesched REQUIRED) first")
  endif()
  add_library(${name} MODULE ${_sources})
  target_link_libraries(${name} PRIVATE kubesched::sdk)
  set_target_properties(${name} PROPERTIES
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(_ksp_OUTPUT_NAME)
    set_target_properties(${name} PROPERTIES OUTPUT_NAME ${_ksp_OUTPUT_NAME})
  endif()
endfunction()
