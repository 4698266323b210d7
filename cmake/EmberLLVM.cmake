# LLVM 19 for the code generator (compiler/codegen/), linked statically from Debian's
# position-independent archives (llvm-19-dev), so the plugin loads where LLVM is not installed.
# Only the components the host JIT needs are linked; the plugin's version script keeps every
# LLVM symbol hidden (a process may hold another LLVM: jaxlib carries its own).
# Sets EMBER_HAVE_LLVM and defines the interface target ember_llvm (headers + archives); only
# compiler/codegen's LLVM files and their tests include LLVM headers.
set(EMBER_LLVM "AUTO" CACHE STRING "Build the LLVM code generator: AUTO (if LLVM 19 is found), ON, OFF")
set_property(CACHE EMBER_LLVM PROPERTY STRINGS AUTO ON OFF)

set(EMBER_HAVE_LLVM OFF)
if(NOT EMBER_LLVM STREQUAL "OFF")
  find_program(EMBER_LLVM_CONFIG NAMES llvm-config-19)
  if(EMBER_LLVM_CONFIG)
    set(components core orcjit x86codegen x86desc x86info passes)
    execute_process(COMMAND ${EMBER_LLVM_CONFIG} --link-static --libfiles ${components}
      OUTPUT_VARIABLE llvm_libfiles OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE llvm_rc1)
    execute_process(COMMAND ${EMBER_LLVM_CONFIG} --includedir
      OUTPUT_VARIABLE llvm_includedir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE llvm_rc2)
    execute_process(COMMAND ${EMBER_LLVM_CONFIG} --version
      OUTPUT_VARIABLE llvm_version OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(llvm_rc1 EQUAL 0 AND llvm_rc2 EQUAL 0 AND llvm_libfiles)
      separate_arguments(llvm_libfiles UNIX_COMMAND "${llvm_libfiles}")
      set(llvm_archives_exist ON)
      foreach(f ${llvm_libfiles})
        if(NOT EXISTS ${f})
          set(llvm_archives_exist OFF)
        endif()
      endforeach()
      if(llvm_archives_exist)
        set(EMBER_HAVE_LLVM ON)
      endif()
    endif()
  endif()
  if(EMBER_HAVE_LLVM)
    message(STATUS "Ember: LLVM ${llvm_version} found (${EMBER_LLVM_CONFIG}): LLVM code generator ON")
    add_library(ember_llvm INTERFACE)
    target_include_directories(ember_llvm SYSTEM INTERFACE ${llvm_includedir})
    # The archives depend on each other in llvm-config's order; the group resolves cycles.
    # Of LLVM's system libraries only zlib/zstd (compression in LLVMSupport) are reachable from
    # what we use; z3 and libxml2 are not linked, so the plugin does not need them installed.
    target_link_libraries(ember_llvm INTERFACE -Wl,--start-group ${llvm_libfiles} -Wl,--end-group
      -Wl,--as-needed -l:libz.so.1 -l:libzstd.so.1 -Wl,--no-as-needed ${CMAKE_DL_LIBS} rt m)
    # Unused sections of LLVM's archives are dropped from everything linked (a third of them).
    add_link_options(-Wl,--gc-sections)
  elseif(EMBER_LLVM STREQUAL "ON")
    message(FATAL_ERROR "Ember: EMBER_LLVM=ON but llvm-config-19 or its static archives (llvm-19-dev) were not found")
  else()
    message(STATUS "Ember: LLVM 19 (llvm-19-dev) not found: LLVM code generator OFF")
  endif()
else()
  message(STATUS "Ember: EMBER_LLVM=OFF: LLVM code generator OFF")
endif()
