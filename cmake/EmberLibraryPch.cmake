# One precompiled header for every library (the tests have their own, tests/CMakeLists.txt): the
# standard and Abseil headers nearly every source includes. Parsing those took 1.5-2 s of each
# source's compile (GCC, -O2: compiler/ir/shape.cc 3.8 -> 1.8 s, compiler/codegen/loop_support.cc
# 3.7 -> 1.9 s), over two hundred library sources in each of CI's two builds.
#
# ember_library_pch_owner() defines the header's owner, an object library compiled with the
# libraries' flags (position-independent); ember_reuse_library_pch() then gives the header to every
# library target defined under the project, once they all exist (the end of the top-level
# CMakeLists.txt). Left out, compiled as before:
# - a target with DISABLE_PRECOMPILE_HEADERS set: one built against other headers (the TensorFlow
#   helper) or with options of its own that a header compiled without them cannot serve (clang
#   refuses a header compiled at another -O level);
# - a target whose visibility, C++ standard or position independence differs from the owner's;
# - a source with COMPILE_OPTIONS or COMPILE_DEFINITIONS of its own (-O3, -mavx2, -w, ...), for the
#   same reason.
function(ember_library_pch_owner)
  add_library(ember_library_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/library_pch.cc)
  target_link_libraries(ember_library_pch PRIVATE absl::status absl::statusor absl::strings
                        absl::str_format absl::span absl::flat_hash_map)
  target_precompile_headers(ember_library_pch PRIVATE
    <algorithm> <atomic> <cmath> <cstdint> <cstring> <functional> <limits> <map> <memory>
    <optional> <set> <string> <unordered_map> <utility> <variant> <vector>
    [["absl/container/flat_hash_map.h"]] [["absl/status/status.h"]] [["absl/status/statusor.h"]]
    [["absl/strings/str_cat.h"]] [["absl/strings/str_format.h"]] [["absl/strings/str_join.h"]]
    [["absl/types/span.h"]])
endfunction()

# The library targets defined in `dir` and the folders under it.
function(_ember_library_targets dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(STATIC|SHARED|MODULE|OBJECT)_LIBRARY$")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _ember_library_targets(${sub} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(ember_reuse_library_pch)
  _ember_library_targets(${PROJECT_SOURCE_DIR} libraries)
  foreach(target IN LISTS libraries)
    get_target_property(disabled ${target} DISABLE_PRECOMPILE_HEADERS)
    get_target_property(own ${target} PRECOMPILE_HEADERS)
    get_target_property(reused ${target} PRECOMPILE_HEADERS_REUSE_FROM)
    if(target STREQUAL "ember_library_pch" OR disabled OR own OR reused)
      continue()
    endif()
    # A target whose code-generation properties differ from the owner's (the virtual GPU's
    # driver, which exports the CUDA API with default visibility) keeps its own flags, unserved.
    set(differs FALSE)
    foreach(property CXX_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN CXX_STANDARD
                     POSITION_INDEPENDENT_CODE)
      get_target_property(value ${target} ${property})
      get_target_property(owner_value ember_library_pch ${property})
      if(NOT "${value}" STREQUAL "${owner_value}")
        set(differs TRUE)
      endif()
    endforeach()
    if(differs)
      continue()
    endif()
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<")
        continue()  # a generator expression
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir})
      get_source_file_property(options ${source} DIRECTORY ${source_dir} COMPILE_OPTIONS)
      get_source_file_property(definitions ${source} DIRECTORY ${source_dir} COMPILE_DEFINITIONS)
      if(options OR definitions)
        set_source_files_properties(${source} DIRECTORY ${source_dir}
                                    PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
    target_precompile_headers(${target} REUSE_FROM ember_library_pch)
  endforeach()
endfunction()
